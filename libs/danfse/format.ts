// How values print on the DANFSe: money and percentages the Brazilian way, dates as dd/mm/aaaa, CPF/CNPJ
// with their masks (letters of an alphanumeric CNPJ kept), code lists as "code - description". An empty
// value prints "-" (NT 008); an unknown code prints as itself, never as a guessed description.
import { formatTaxId } from "../tax-id/index.js";

export const EMPTY = "-";

/** A value as printed: "-" when empty; composed (NFC), so that "e" + combining accent prints as one "é". */
export const orEmpty = (s: string | undefined): string => (s === undefined || s.trim() === "" ? EMPTY : s.normalize("NFC"));

/** 123456n cents → "R$ 1.234,56"; undefined → "-". */
export function money(cents: bigint | undefined): string {
  if (cents === undefined) return EMPTY;
  const neg = cents < 0n;
  const abs = neg ? -cents : cents;
  const int = (abs / 100n).toString().replace(/\B(?=(\d{3})+(?!\d))/g, ".");
  return `${neg ? "-" : ""}R$ ${int},${(abs % 100n).toString().padStart(2, "0")}`;
}

/** A percent as the XML writes it ("2.00", "0.1000") → "2,00%"; "" → "-". The reader has checked its shape. */
export function percent(raw: string): string {
  return raw === "" ? EMPTY : `${raw.replace(".", ",")}%`;
}

/** "2026-03-10" → "10/03/2026". */
export function date(raw: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})/.exec(raw);
  return m ? `${m[3]}/${m[2]}/${m[1]}` : orEmpty(raw);
}

/** "2026-03-10T14:02:10-03:00" → "10/03/2026 14:02:10", the clock time as the XML states it (no zone conversion). */
export function dateTime(raw: string): string {
  const m = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})/.exec(raw);
  return m ? `${m[3]}/${m[2]}/${m[1]} ${m[4]}:${m[5]}:${m[6]}` : orEmpty(raw);
}

/** "01001000" → "01001-000". */
export function cep(raw: string): string {
  return /^\d{8}$/.test(raw) ? `${raw.slice(0, 5)}-${raw.slice(5)}` : raw;
}

/** "010701" → "01.07.01" (item, subitem, desdobro of LC 116). */
export function cTribNac(raw: string): string {
  return /^\d{6}$/.test(raw) ? `${raw.slice(0, 2)}.${raw.slice(2, 4)}.${raw.slice(4)}` : raw;
}

export function taxId(kind: "CNPJ" | "CPF" | "NIF" | "cNaoNIF", value: string): string {
  if (kind === "NIF") return `NIF ${value}`;
  if (kind === "cNaoNIF") return `NIF não informado (motivo ${value})`;
  return formatTaxId(value);
}

/** "1" with {1: "Produção"} → "1 - Produção"; "" → "-"; a code the list lacks prints as itself. */
export function code(raw: string, list: Readonly<Record<string, string>>): string {
  if (raw === "") return EMPTY;
  const d = list[raw];
  return d === undefined ? raw : `${raw} - ${d}`;
}

/** Code lists of the layout (the XSD's documentation of each simple type), as printed on the DANFSe. */
export const CODES = {
  tpAmb: { 1: "Produção", 2: "Homologação" },
  ambGer: { 1: "Prefeitura", 2: "Sistema Nacional da NFS-e" },
  tpEmit: { 1: "Prestador", 2: "Tomador", 3: "Intermediário" },
  cStat: {
    100: "NFS-e Gerada",
    101: "NFS-e de Substituição Gerada",
    102: "NFS-e de Decisão Judicial",
    103: "NFS-e Avulsa",
    107: "NFS-e MEI",
  },
  finNFSe: { 0: "NFS-e regular" },
  opSimpNac: { 1: "Não Optante", 2: "Optante - MEI", 3: "Optante - ME/EPP" },
  regApTribSN: {
    1: "Tributos federais e municipal pelo Simples Nacional",
    2: "Federais pelo SN; ISSQN por fora do SN",
    3: "Federais e municipal por fora do SN",
  },
  regEspTrib: {
    0: "Nenhum",
    1: "Ato Cooperado (Cooperativa)",
    2: "Estimativa",
    3: "Microempresa Municipal",
    4: "Notário ou Registrador",
    5: "Profissional Autônomo",
    6: "Sociedade de Profissionais",
    9: "Outros",
  },
  tribISSQN: { 1: "Operação Tributável", 2: "Imunidade", 3: "Exportação de Serviço", 4: "Não Incidência" },
  tpRetISSQN: { 1: "Não Retido", 2: "Retido pelo Tomador", 3: "Retido pelo Intermediário" },
  tpRetPisCofins: {
    0: "PIS/COFINS/CSLL Não Retidos",
    1: "PIS/COFINS Retidos",
    2: "PIS/COFINS Não Retidos",
    3: "PIS/COFINS/CSLL Retidos",
    4: "PIS/COFINS Retidos, CSLL Não Retido",
    5: "PIS Retido, COFINS/CSLL Não Retidos",
    6: "COFINS Retido, PIS/CSLL Não Retidos",
    7: "PIS Não Retido, COFINS/CSLL Retidos",
    8: "PIS/COFINS Não Retidos, CSLL Retido",
    9: "COFINS Não Retido, PIS/CSLL Retidos",
  },
} as const satisfies Record<string, Record<number, string>>;
