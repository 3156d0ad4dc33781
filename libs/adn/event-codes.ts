// Event codes of adn.md §5.2: the 6-digit code (without the "e") is the source of truth; the enum and the
// ADN's JSON `TipoEvento` names are derived from it.
import { TipoEvento } from "../gen/malha/nfse/v1/event_pb.js";

export interface EventCodeInfo {
  codigo: string;
  tipo: TipoEvento;
  /** The name the ADN puts in the batch item's `TipoEvento`. */
  adnName: string;
}

/**
 * 907201 and 907209 have no published layout; adn.md infers from the code grammar (category 9, author 07
 * = MAN) that they are the two MAN events. Unverified, so they are the only guesses in this table.
 */
export const EVENT_CODES: readonly EventCodeInfo[] = [
  { codigo: "101101", tipo: TipoEvento.CANCELAMENTO, adnName: "CANCELAMENTO" },
  { codigo: "105102", tipo: TipoEvento.CANCELAMENTO_POR_SUBSTITUICAO, adnName: "CANCELAMENTO_POR_SUBSTITUICAO" },
  { codigo: "101103", tipo: TipoEvento.SOLICITACAO_CANCELAMENTO_ANALISE_FISCAL, adnName: "SOLICITACAO_CANCELAMENTO_ANALISE_FISCAL" },
  { codigo: "105104", tipo: TipoEvento.CANCELAMENTO_DEFERIDO_ANALISE_FISCAL, adnName: "CANCELAMENTO_DEFERIDO_ANALISE_FISCAL" },
  { codigo: "105105", tipo: TipoEvento.CANCELAMENTO_INDEFERIDO_ANALISE_FISCAL, adnName: "CANCELAMENTO_INDEFERIDO_ANALISE_FISCAL" },
  { codigo: "202201", tipo: TipoEvento.CONFIRMACAO_PRESTADOR, adnName: "CONFIRMACAO_PRESTADOR" },
  { codigo: "203202", tipo: TipoEvento.CONFIRMACAO_TOMADOR, adnName: "CONFIRMACAO_TOMADOR" },
  { codigo: "204203", tipo: TipoEvento.CONFIRMACAO_INTERMEDIARIO, adnName: "CONFIRMACAO_INTERMEDIARIO" },
  { codigo: "205204", tipo: TipoEvento.CONFIRMACAO_TACITA, adnName: "CONFIRMACAO_TACITA" },
  { codigo: "202205", tipo: TipoEvento.REJEICAO_PRESTADOR, adnName: "REJEICAO_PRESTADOR" },
  { codigo: "203206", tipo: TipoEvento.REJEICAO_TOMADOR, adnName: "REJEICAO_TOMADOR" },
  { codigo: "204207", tipo: TipoEvento.REJEICAO_INTERMEDIARIO, adnName: "REJEICAO_INTERMEDIARIO" },
  { codigo: "205208", tipo: TipoEvento.ANULACAO_REJEICAO, adnName: "ANULACAO_REJEICAO" },
  { codigo: "305101", tipo: TipoEvento.CANCELAMENTO_POR_OFICIO, adnName: "CANCELAMENTO_POR_OFICIO" },
  { codigo: "305102", tipo: TipoEvento.BLOQUEIO_POR_OFICIO, adnName: "BLOQUEIO_POR_OFICIO" },
  { codigo: "305103", tipo: TipoEvento.DESBLOQUEIO_POR_OFICIO, adnName: "DESBLOQUEIO_POR_OFICIO" },
  { codigo: "907201", tipo: TipoEvento.INCLUSAO_NFSE_DAN, adnName: "INCLUSAO_NFSE_DAN" },
  { codigo: "907209", tipo: TipoEvento.TRIBUTOS_NFSE_RECOLHIDOS, adnName: "TRIBUTOS_NFSE_RECOLHIDOS" },
];

const BY_CODE = new Map(EVENT_CODES.map((e) => [e.codigo, e]));

/** The known type of a 6-digit code; UNKNOWN (never a fault) for codes this build does not know. */
export function tipoEventoOf(codigo: string): TipoEvento {
  return BY_CODE.get(codigo)?.tipo ?? TipoEvento.UNKNOWN;
}

export function eventCodeInfo(codigo: string): EventCodeInfo | undefined {
  return BY_CODE.get(codigo);
}

/** Event code from a type-specific element name such as "e101101". */
export function codeFromElementName(name: string): string | undefined {
  return /^e(\d{6})$/.exec(name)?.[1];
}

/**
 * An EVT Id: "EVT" + chave(50, letters only in its CNPJ at 10–23) + code(6) + nSeq(3) = 62 characters.
 * Groups: 1 = the chave, 2 = the code.
 */
export const EVENT_ID = /^EVT([0-9]{9}[0-9A-Z]{14}[0-9]{27})([0-9]{6})[0-9]{3}$/;
/** The chave at the start of an EVT Id, whatever follows it. */
export const EVENT_ID_CHAVE = /^EVT([0-9]{9}[0-9A-Z]{14}[0-9]{27})/;

/** Event code from an EVT Id: characters 54–59. */
export function codeFromEventId(id: string): string | undefined {
  return EVENT_ID.exec(id)?.[2];
}
