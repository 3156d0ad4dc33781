/**
 * Retorno readers: CNAB 240 (segments T/U) and CNAB 400 (the banks of `DETALHES_400`, BRB's own layout
 * among them) into canonical events with an idempotency key. Layout tables in layouts240.ts / layouts400.ts.
 */
import { type CalendarDate, formatDDMMAAAA, isoDate } from "../date.js";
import { fail } from "../errors.js";
import { assertCnab, type CheckResult } from "./checker.js";
import { SEGMENTO_U, segmentoT } from "./layouts240.js";
import {
  BB_CBR643_RETORNO,
  BNB_400_RETORNO,
  BRB_400_HEADER_RETORNO,
  BRB_400_RETORNO,
  C6_400_RETORNO,
  CAIXA_400_HEADER_RETORNO,
  CAIXA_400_RETORNO,
  BRADESCO_400_PIX,
  BRADESCO_400_RETORNO,
  HEADER_400_RETORNO,
  INTER_400_RETORNO,
  SAFRA_400_RETORNO,
  ITAU_400_PIX,
  ITAU_400_RETORNO,
  SANTANDER_400_PIX,
  SANTANDER_400_RETORNO,
  SICREDI_400_HEADER_RETORNO,
  SICREDI_400_RETORNO,
  UNICRED_400_RETORNO,
} from "./layouts400.js";
import { type EstadoCanonico, mapearOcorrencia } from "./ocorrencias.js";
import { type RecordLayout, type Warning, decodeData } from "./record.js";

export interface EventoRetorno {
  readonly banco: string;
  readonly layout: 240 | 400;
  /** 1-based line of the detail (T for CNAB 240). */
  readonly linha: number;
  readonly estado: EstadoCanonico;
  /** The bank's raw movement/ocorrência code and its meaning. */
  readonly ocorrencia: string;
  readonly descricao: string;
  /** Motivos (two characters each; blanks and "00" dropped). */
  readonly motivos: readonly string[];
  /** Our boleto id as echoed by the bank (P 196–220 / 400 38–62). */
  readonly id?: string;
  readonly nossoNumero?: string;
  readonly numeroDocumento?: string;
  readonly carteira?: string;
  readonly agencia?: string;
  readonly conta?: string;
  readonly convenio?: string;
  readonly vencimento?: CalendarDate;
  readonly dataOcorrencia?: CalendarDate;
  readonly dataCredito?: CalendarDate;
  readonly valorCentavos?: number;
  readonly valorPagoCentavos?: number;
  readonly valorLiquidoCentavos?: number;
  readonly tarifaCentavos?: number;
  readonly jurosCentavos?: number;
  readonly descontoCentavos?: number;
  readonly abatimentoCentavos?: number;
  readonly iofCentavos?: number;
  readonly outrasDespesasCentavos?: number;
  readonly outrosCreditosCentavos?: number;
  readonly bancoRecebedor?: string;
  readonly agenciaRecebedora?: string;
  readonly especie?: string;
  /** Itaú 393–394: liquidation channel. */
  readonly codigoLiquidacao?: string;
  /** PIX data the bank returned for the título (Santander type 2, Itaú type 3 with the EMV, Bradesco type 4). */
  readonly pix?: {
    readonly tipoChave?: string;
    readonly chave?: string;
    readonly txid?: string;
    readonly emv?: string;
    readonly url?: string;
    readonly erro?: string;
  };
  /** Stable key for idempotent ingestion: bank, convênio/conta, NN, code, occurrence date, amount paid. */
  readonly chaveIdempotencia: string;
}

export interface RetornoLido {
  readonly banco: string;
  readonly layout: 240 | 400;
  /** The header's file date, day first: DDMMAA or DDMMAAAA as written, an AAAAMMDD one turned (decision 0032). */
  readonly dataArquivo?: string;
  readonly nsa?: number;
  readonly eventos: readonly EventoRetorno[];
  readonly warnings: readonly Warning[];
  readonly check: CheckResult;
}

function motivos(raw: unknown, largura = 2): string[] {
  if (typeof raw !== "string") return [];
  const out: string[] = [];
  for (let i = 0; i + largura <= raw.length; i += largura) {
    const m = raw.slice(i, i + largura);
    if (m.trim() === "" || /^0+$/.test(m)) continue;
    out.push(m.trim());
  }
  return out;
}

/** BNB's error table (280–394): one flag per error, the error's number being its column − 279 (nota 7). */
function motivosPorPosicao(raw: unknown): string[] {
  if (typeof raw !== "string") return [];
  const out: string[] = [];
  for (let i = 0; i < raw.length; i++) if (raw[i] !== "0" && raw[i] !== " ") out.push(String(i + 1).padStart(2, "0"));
  return out;
}

function chave(banco: string, e: Record<string, unknown>): string {
  const d = e.dataOcorrencia ? isoDate(e.dataOcorrencia as CalendarDate) : "";
  return [banco, e.convenio ?? e.conta ?? "", e.nossoNumero ?? "", e.ocorrencia ?? "", d, e.valorPagoCentavos ?? 0, e.id ?? ""].join("|");
}

type Campo = (ev: Record<string, unknown>, v: unknown) => void;

/**
 * The event's fields, each stored under its own name. A store under a computed name turns an object of
 * more than about sixteen fields into a hash table (slow to build, slow to read); named stores keep the
 * events fast objects. A decoded field missing here still reaches the event, through a computed store.
 */
const CAMPOS: ReadonlyMap<string, Campo> = new Map(
  Object.entries({
    banco: (e, v) => void (e.banco = v),
    layout: (e, v) => void (e.layout = v),
    linha: (e, v) => void (e.linha = v),
    estado: (e, v) => void (e.estado = v),
    ocorrencia: (e, v) => void (e.ocorrencia = v),
    descricao: (e, v) => void (e.descricao = v),
    motivos: (e, v) => void (e.motivos = v),
    id: (e, v) => void (e.id = v),
    nossoNumero: (e, v) => void (e.nossoNumero = v),
    numeroDocumento: (e, v) => void (e.numeroDocumento = v),
    carteira: (e, v) => void (e.carteira = v),
    agencia: (e, v) => void (e.agencia = v),
    conta: (e, v) => void (e.conta = v),
    convenio: (e, v) => void (e.convenio = v),
    vencimento: (e, v) => void (e.vencimento = v),
    dataOcorrencia: (e, v) => void (e.dataOcorrencia = v),
    dataCredito: (e, v) => void (e.dataCredito = v),
    valorCentavos: (e, v) => void (e.valorCentavos = v),
    valorPagoCentavos: (e, v) => void (e.valorPagoCentavos = v),
    valorLiquidoCentavos: (e, v) => void (e.valorLiquidoCentavos = v),
    tarifaCentavos: (e, v) => void (e.tarifaCentavos = v),
    jurosCentavos: (e, v) => void (e.jurosCentavos = v),
    descontoCentavos: (e, v) => void (e.descontoCentavos = v),
    abatimentoCentavos: (e, v) => void (e.abatimentoCentavos = v),
    iofCentavos: (e, v) => void (e.iofCentavos = v),
    outrasDespesasCentavos: (e, v) => void (e.outrasDespesasCentavos = v),
    outrosCreditosCentavos: (e, v) => void (e.outrosCreditosCentavos = v),
    bancoRecebedor: (e, v) => void (e.bancoRecebedor = v),
    agenciaRecebedora: (e, v) => void (e.agenciaRecebedora = v),
    especie: (e, v) => void (e.especie = v),
    codigoLiquidacao: (e, v) => void (e.codigoLiquidacao = v),
    pix: (e, v) => void (e.pix = v),
    chaveIdempotencia: (e, v) => void (e.chaveIdempotencia = v),
  } satisfies Record<keyof EventoRetorno, Campo>),
);

/** Values are trimmed, and blank or missing ones left out: an event never carries "" or undefined. */
function poe(ev: Record<string, unknown>, k: string, v: unknown, store = CAMPOS.get(k)): void {
  const t = typeof v === "string" ? v.trim() : v;
  if (t === "" || t === undefined) return;
  if (store) store(ev, t);
  else ev[k] = t;
}

/**
 * How a decoded field reaches the event: its store, or null when it is not copied as it is (it feeds
 * the event, like motivos, the nosso número or the bank's check, or it is one of the event's own fields,
 * placed first). A field in neither list is copied under its name.
 */
const DECODIFICADOS: ReadonlyMap<string, Campo | null> = new Map([
  ...CAMPOS,
  ...[
    "motivosRaw",
    "motivosSantanderRaw",
    "tabelaErrosRaw",
    "motivoRaw3",
    "motivoTexto",
    "nossoNumeroSequencial",
    "seq",
    "beneficiario",
    "pagador",
    "banco",
    "nossoNumeroDv",
  ].map((k) => [k, null] as const),
  ...["layout", "linha", "estado", "ocorrencia", "descricao", "motivos"].map((k) => [k, null] as const),
]);

/**
 * One event per detail, built field by field in its final order: no `delete`, no reshaping. A CNAB 240
 * detail comes in parts (T, U), read as one: a field of a later part replaces the same field of an
 * earlier one, in the earlier one's place (what Object.assign would give, without building that object).
 */
function evento(banco: string, layout: 240 | 400, linha: number, partes: readonly Record<string, unknown>[]): EventoRetorno {
  const codigo = String(campo(partes, "ocorrencia") ?? "").trim();
  const map = mapearOcorrencia(banco, layout, codigo);
  const erros = campo(partes, "tabelaErrosRaw");
  const motivo3 = campo(partes, "motivoRaw3");
  // Inter writes the rejection as text (its manual §5.2, 241–380): one motivo, as written
  const texto = campo(partes, "motivoTexto");
  const mot =
    erros !== undefined
      ? motivosPorPosicao(erros)
      : motivo3 !== undefined
        ? motivos(motivo3, 3)
        : typeof texto === "string"
          ? [texto.trim()]
          : motivos(campo(partes, banco === "033" && layout === 400 ? "motivosSantanderRaw" : "motivosRaw"));
  const ev: Record<string, unknown> = {};
  poe(ev, "banco", banco);
  poe(ev, "layout", proprio(partes, "layout", layout));
  poe(ev, "linha", proprio(partes, "linha", linha));
  poe(ev, "estado", proprio(partes, "estado", map.estado));
  poe(ev, "ocorrencia", proprio(partes, "ocorrencia", codigo));
  poe(ev, "descricao", proprio(partes, "descricao", map.descricao));
  poe(ev, "motivos", proprio(partes, "motivos", mot));
  for (let i = 0; i < partes.length; i++) {
    const parte = partes[i]!;
    const ultima = i === partes.length - 1;
    for (const k in parte) {
      const store = DECODIFICADOS.get(k);
      if (store === null || jaVisto(partes, i, k)) continue;
      poe(ev, k, k === "nossoNumero" ? nossoNumero(partes) : ultima ? parte[k] : campo(partes, k), store);
    }
  }
  if (!tem(partes, "nossoNumero")) {
    const sequencial = campo(partes, "nossoNumeroSequencial");
    if (typeof sequencial === "string") poe(ev, "nossoNumero", sequencial);
  }
  CAMPOS.get("chaveIdempotencia")!(ev, chave(banco, ev));
  return ev as unknown as EventoRetorno;
}

/** An event field's value, unless a decoded field of the same name replaces it. */
function proprio(partes: readonly Record<string, unknown>[], k: string, v: unknown): unknown {
  return tem(partes, k) ? campo(partes, k) : v;
}

function campo(partes: readonly Record<string, unknown>[], k: string): unknown {
  for (let i = partes.length - 1; i >= 0; i--) if (Object.hasOwn(partes[i]!, k)) return partes[i]![k];
  return undefined;
}

function tem(partes: readonly Record<string, unknown>[], k: string): boolean {
  return jaVisto(partes, partes.length, k);
}

/** Whether a part before `i` has the field (it was placed with that part). */
function jaVisto(partes: readonly Record<string, unknown>[], i: number, k: string): boolean {
  for (let j = 0; j < i; j++) if (Object.hasOwn(partes[j]!, k)) return true;
  return false;
}

/** The NN as the bank wrote it, with its separate DV field when the layout has one (Caixa). */
function nossoNumero(partes: readonly Record<string, unknown>[]): unknown {
  const nn = campo(partes, "nossoNumero");
  const dv = campo(partes, "nossoNumeroDv");
  const sequencial = campo(partes, "nossoNumeroSequencial");
  if (typeof nn === "string") return nn.trim() + (typeof dv === "string" ? dv.trim() : "");
  return typeof sequencial === "string" ? sequencial : nn;
}

/** Parse a retorno file (CNAB 240 or 400), after the structural check. */
export function lerRetorno(content: string | Uint8Array): RetornoLido {
  const check = assertCnab(content);
  if (check.direction !== "retorno") fail("CNAB_ESTRUTURA_INVALIDA", "not a retorno file", "arquivo");
  const lines = check.lines; // the checker has split the file already
  const warnings: Warning[] = check.warnings.map((w) => ({ code: w.rule, field: `linha ${w.line}`, message: w.message }));
  const eventos: EventoRetorno[] = [];
  if (check.layout === 240) {
    const banco = check.banco!;
    const header = lines[0]!;
    const tLayout = segmentoT(banco);
    let pending: { linha: number; partes: Record<string, unknown>[] } | undefined;
    const flush = () => {
      if (pending) eventos.push(evento(banco, 240, pending.linha, pending.partes));
      pending = undefined;
    };
    lines.forEach((l, i) => {
      if (l[7] !== "3") return;
      const seg = l[13];
      if (seg === "T") {
        flush();
        pending = { linha: i + 1, partes: [decodeData(tLayout, l, warnings, i + 1)] };
      } else if (seg === "U" && pending) {
        pending.partes.push(decodeData(SEGMENTO_U, l, warnings, i + 1));
        flush();
      } else warnings.push({ code: "SEGMENTO_IGNORADO", field: `linha ${i + 1}`, message: `segment ${seg} not read` });
    });
    flush();
    return { banco, layout: 240, dataArquivo: header.slice(143, 151), nsa: Number(header.slice(157, 163)), eventos, warnings, check };
  }
  // CNAB 400: the bank comes from the header (the Santander fixture keeps an Itaú trailer)
  const banco = check.banco!;
  const detail = DETALHES_400[banco];
  if (!detail)
    fail(
      "CNAB_LAYOUT_DESCONHECIDO",
      `no CNAB 400 retorno layout for bank ${banco} (have: ${Object.keys(DETALHES_400).join(", ")})`,
      "banco",
    );
  const h = decodeData(detail.header ?? HEADER_400_RETORNO, lines[0]!, warnings, 1);
  lines.forEach((l, i) => {
    if (i === 0 || l[0] === "9") return;
    if (l[0] === detail.tipo) {
      const d = decodeData(detail.layout, l, warnings, i + 1);
      if (detail.nossoNumeroDigitos) d.nossoNumero = semZerosDePreenchimento(d.nossoNumero, detail.nossoNumeroDigitos);
      eventos.push(evento(banco, 400, i + 1, [d]));
      return;
    }
    const extra = detail.extras?.[l[0]!];
    if (extra && eventos.length) {
      const d = decodeData(extra, l, warnings, i + 1);
      const last = eventos[eventos.length - 1]! as unknown as Record<string, unknown>;
      const pix = d.pix as Record<string, string> | undefined;
      if (pix)
        last.pix = Object.fromEntries(
          Object.entries(pix)
            .map(([k, v]) => [k, v.trim()])
            .filter(([, v]) => v !== "" && v !== "000"),
        );
      return;
    }
    warnings.push({ code: "REGISTRO_IGNORADO", field: `linha ${i + 1}`, message: `record type ${l[0]} not read` });
  });
  // a header date read as a date (Sicredi's AAAAMMDD) is given as the others are, DDMMAAAA
  const data = h.dataGravacao;
  const dataArquivo = typeof data === "object" ? formatDDMMAAAA(data as CalendarDate) : String(data ?? "");
  return { banco, layout: 400, dataArquivo, ...(h.nsa !== undefined ? { nsa: Number(h.nsa) } : {}), eventos, warnings, check };
}

/** The nosso número without the zeros that fill its field beyond its own width; anything else as written. */
function semZerosDePreenchimento(nn: unknown, digitos: number): unknown {
  if (typeof nn !== "string" || nn.length <= digitos || !/^0+$/.test(nn.slice(0, nn.length - digitos))) return nn;
  return nn.slice(-digitos);
}

/** A bank's CNAB 400 retorno: its detail type and layout, and what differs from the common header and records. */
interface Detalhe400 {
  readonly tipo: string;
  readonly layout: RecordLayout;
  readonly header?: RecordLayout;
  readonly extras?: Readonly<Record<string, RecordLayout>>;
  /** The nosso número's own width when the bank writes it zero-filled in a wider field (Sicredi: 9 in 15; decision 0032). */
  readonly nossoNumeroDigitos?: number;
}

const DETALHES_400: Readonly<Record<string, Detalhe400>> = {
  "237": { tipo: "1", layout: BRADESCO_400_RETORNO, extras: { "4": BRADESCO_400_PIX } },
  "341": { tipo: "1", layout: ITAU_400_RETORNO, extras: { "3": ITAU_400_PIX } },
  "033": { tipo: "1", layout: SANTANDER_400_RETORNO, extras: { "2": SANTANDER_400_PIX } },
  "001": { tipo: "7", layout: BB_CBR643_RETORNO },
  "136": { tipo: "1", layout: UNICRED_400_RETORNO },
  "004": { tipo: "1", layout: BNB_400_RETORNO },
  "133": { tipo: "1", layout: BRADESCO_400_RETORNO },
  "422": { tipo: "1", layout: SAFRA_400_RETORNO },
  "077": { tipo: "1", layout: INTER_400_RETORNO },
  "070": { tipo: "1", layout: BRB_400_RETORNO, header: BRB_400_HEADER_RETORNO },
  "336": { tipo: "1", layout: C6_400_RETORNO },
  "104": { tipo: "1", layout: CAIXA_400_RETORNO, header: CAIXA_400_HEADER_RETORNO },
  "748": { tipo: "1", layout: SICREDI_400_RETORNO, header: SICREDI_400_HEADER_RETORNO, nossoNumeroDigitos: 9 },
};
