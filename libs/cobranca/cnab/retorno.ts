/**
 * Retorno readers: CNAB 240 (segments T/U) and CNAB 400 (Bradesco, Itaú, Santander, BB CBR643) into
 * canonical events with an idempotency key. Layout tables in layouts240.ts / layouts400.ts.
 */
import { type CalendarDate, isoDate } from "../date.js";
import { fail } from "../errors.js";
import { assertCnab, type CheckResult, splitLines } from "./checker.js";
import { SEGMENTO_U, segmentoT } from "./layouts240.js";
import {
  BB_CBR643_RETORNO,
  BRADESCO_400_PIX,
  BRADESCO_400_RETORNO,
  HEADER_400_RETORNO,
  ITAU_400_PIX,
  ITAU_400_RETORNO,
  SANTANDER_400_PIX,
  SANTANDER_400_RETORNO,
} from "./layouts400.js";
import { type EstadoCanonico, mapearOcorrencia } from "./ocorrencias.js";
import { type RecordLayout, type Warning, decodeRecord } from "./record.js";

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
  readonly pix?: { readonly tipoChave?: string; readonly chave?: string; readonly txid?: string; readonly emv?: string; readonly url?: string; readonly erro?: string };
  /** Stable key for idempotent ingestion: bank, convênio/conta, NN, code, occurrence date, amount paid. */
  readonly chaveIdempotencia: string;
}

export interface RetornoLido {
  readonly banco: string;
  readonly layout: 240 | 400;
  readonly dataArquivo?: string;
  readonly nsa?: number;
  readonly eventos: readonly EventoRetorno[];
  readonly warnings: readonly Warning[];
  readonly check: CheckResult;
}

function motivos(raw: unknown): string[] {
  if (typeof raw !== "string") return [];
  const out: string[] = [];
  for (let i = 0; i + 2 <= raw.length; i += 2) {
    const m = raw.slice(i, i + 2);
    if (m.trim() === "" || m === "00") continue;
    out.push(m.trim());
  }
  return out;
}

function chave(banco: string, e: Record<string, unknown>): string {
  const d = e.dataOcorrencia ? isoDate(e.dataOcorrencia as CalendarDate) : "";
  return [banco, e.convenio ?? e.conta ?? "", e.nossoNumero ?? "", e.ocorrencia ?? "", d, e.valorPagoCentavos ?? 0, e.id ?? ""].join("|");
}

function evento(banco: string, layout: 240 | 400, linha: number, data: Record<string, unknown>): EventoRetorno {
  const codigo = String(data.ocorrencia ?? "").trim();
  const map = mapearOcorrencia(banco, layout, codigo);
  const { motivosRaw, motivosSantanderRaw, nossoNumeroSequencial, seq, beneficiario, pagador, banco: _b, nossoNumeroDv, ...rest } = data;
  void seq;
  void beneficiario;
  void pagador;
  void _b;
  const mot = motivos(banco === "033" && layout === 400 ? motivosSantanderRaw : motivosRaw);
  const ev: Record<string, unknown> = { banco, layout, linha, estado: map.estado, ocorrencia: codigo, descricao: map.descricao, motivos: mot, ...rest };
  if (typeof ev.nossoNumero === "string") ev.nossoNumero = ev.nossoNumero.trim() + (typeof nossoNumeroDv === "string" ? nossoNumeroDv.trim() : "");
  else if (typeof nossoNumeroSequencial === "string") ev.nossoNumero = nossoNumeroSequencial;
  for (const k of Object.keys(ev)) if (typeof ev[k] === "string") ev[k] = (ev[k] as string).trim();
  for (const k of Object.keys(ev)) if (ev[k] === "" || ev[k] === undefined) delete ev[k];
  ev.chaveIdempotencia = chave(banco, ev);
  return ev as unknown as EventoRetorno;
}

/** Parse a retorno file (CNAB 240 or 400), after the structural check. */
export function lerRetorno(content: string | Uint8Array): RetornoLido {
  const check = assertCnab(content);
  if (check.direction !== "retorno") fail("CNAB_ESTRUTURA_INVALIDA", "not a retorno file", "arquivo");
  const { lines } = splitLines(content);
  const warnings: Warning[] = check.warnings.map((w) => ({ code: w.rule, field: `linha ${w.line}`, message: w.message }));
  const eventos: EventoRetorno[] = [];
  if (check.layout === 240) {
    const banco = check.banco!;
    const header = lines[0]!;
    const tLayout = segmentoT(banco);
    let pending: { linha: number; data: Record<string, unknown> } | undefined;
    const flush = () => {
      if (pending) eventos.push(evento(banco, 240, pending.linha, pending.data));
      pending = undefined;
    };
    lines.forEach((l, i) => {
      if (l[7] !== "3") return;
      const seg = l[13];
      if (seg === "T") {
        flush();
        pending = { linha: i + 1, data: decodeRecord(tLayout, l, warnings, i + 1).data };
      } else if (seg === "U" && pending) {
        Object.assign(pending.data, decodeRecord(SEGMENTO_U, l, warnings, i + 1).data);
        flush();
      } else warnings.push({ code: "SEGMENTO_IGNORADO", field: `linha ${i + 1}`, message: `segment ${seg} not read` });
    });
    flush();
    return { banco, layout: 240, dataArquivo: header.slice(143, 151), nsa: Number(header.slice(157, 163)), eventos, warnings, check };
  }
  // CNAB 400: the bank comes from the header (the Santander fixture keeps an Itaú trailer)
  const banco = check.banco!;
  const detail = DETALHES_400[banco];
  if (!detail) fail("CNAB_LAYOUT_DESCONHECIDO", `no CNAB 400 retorno layout for bank ${banco} (have: ${Object.keys(DETALHES_400).join(", ")})`, "banco");
  const h = decodeRecord(HEADER_400_RETORNO, lines[0]!, warnings, 1).data;
  lines.forEach((l, i) => {
    if (i === 0 || l[0] === "9") return;
    if (l[0] === detail.tipo) {
      eventos.push(evento(banco, 400, i + 1, decodeRecord(detail.layout, l, warnings, i + 1).data));
      return;
    }
    const extra = detail.extras?.[l[0]!];
    if (extra && eventos.length) {
      const d = decodeRecord(extra, l, warnings, i + 1).data;
      const last = eventos[eventos.length - 1]! as unknown as Record<string, unknown>;
      const pix = d.pix as Record<string, string> | undefined;
      if (pix) last.pix = Object.fromEntries(Object.entries(pix).map(([k, v]) => [k, v.trim()]).filter(([, v]) => v !== "" && v !== "000"));
      return;
    }
    warnings.push({ code: "REGISTRO_IGNORADO", field: `linha ${i + 1}`, message: `record type ${l[0]} not read` });
  });
  return { banco, layout: 400, dataArquivo: String(h.dataGravacao ?? ""), eventos, warnings, check };
}

const DETALHES_400: Readonly<Record<string, { tipo: string; layout: RecordLayout; extras?: Readonly<Record<string, RecordLayout>> }>> = {
  "237": { tipo: "1", layout: BRADESCO_400_RETORNO, extras: { "4": BRADESCO_400_PIX } },
  "341": { tipo: "1", layout: ITAU_400_RETORNO, extras: { "3": ITAU_400_PIX } },
  "033": { tipo: "1", layout: SANTANDER_400_RETORNO, extras: { "2": SANTANDER_400_PIX } },
  "001": { tipo: "7", layout: BB_CBR643_RETORNO },
};
