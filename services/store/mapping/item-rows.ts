// DistributionItem → rows of nfse_documentos_{ibge} / nfse_eventos_{ibge} / nfse_quarantine. An item whose
// key fields cannot be stored (chave not 50 digits, event id or code malformed, no NSU) becomes a
// quarantine row instead: bad data never stops a feed and is never dropped.
import { createHash } from "node:crypto";
import { toBinary } from "@bufbuild/protobuf";
import { TaxIdKind, type TaxId } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { FaultReason, type DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema, type Document, type Party } from "../../../libs/gen/malha/nfse/v1/document_pb.js";
import { EventSchema, TipoEvento, type Event } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import { faultReasonCodes } from "../codes.js";
import { aliquotaPercent, asciiCode, cents, digitsCode, smallEnum, text, toDate, toSqlDate } from "./columns.js";

export const DOCUMENT_COLUMNS = [
  "chave", "ambiente", "tipo_nsu", "nsu", "versao", "numero", "numero_dfse", "status_geracao",
  "ambiente_gerador", "tipo_emissao", "municipio_emissor_ibge", "local_prestacao_ibge", "local_prestacao_pais",
  "municipio_incidencia_ibge", "data_emissao", "data_processamento", "competencia", "data_geracao_adn",
  "emitente_documento", "emitente_nome", "emitente_im", "emitente_municipio_ibge", "emitente_uf", "tipo_emitente",
  "prestador_documento", "prestador_nif", "prestador_nome", "prestador_im", "prestador_simples_nacional",
  "tomador_documento", "tomador_nif", "tomador_nome", "intermediario_documento", "intermediario_nome",
  "serie_dps", "numero_dps", "codigo_tributacao_nacional", "codigo_tributacao_municipal", "codigo_nbs",
  "descricao_servico", "valor_servico", "valor_base_calculo", "aliquota", "valor_issqn", "valor_total_retencoes",
  "valor_liquido", "tributacao_issqn", "tipo_retencao_issqn", "chave_substituida", "documento_pb", "xml", "xml_sha256",
] as const;

export const EVENT_COLUMNS = [
  "id_evento", "chave", "ambiente", "tipo_nsu", "nsu", "versao", "codigo", "tipo_evento", "sequencia",
  "ambiente_gerador", "data_evento", "data_processamento", "data_geracao_adn", "autor_documento",
  "motivo_codigo", "motivo_descricao", "chave_substituta", "evento_pb", "xml", "xml_sha256",
] as const;

export const QUARANTINE_COLUMNS = [
  "ibge", "ambiente", "tipo_nsu", "nsu", "item_key", "chave", "tipo_documento", "reason", "message", "payload",
  "payload_sha256", "xml", "data_geracao_adn", "run_id",
] as const;

export interface FeedColumns {
  ibge: string;
  ambiente: number;
  tipoNsu: string;
}

export interface DocumentRow {
  kind: "document";
  chave: string;
  nsu: bigint;
  xmlSha256: string;
  values: unknown[];
}

export interface EventRow {
  kind: "event";
  idEvento: string;
  chave: string;
  codigo: string;
  chaveSubstituta: string | null;
  nsu: bigint;
  xmlSha256: string;
  values: unknown[];
}

export interface QuarantineRow {
  kind: "fault";
  nsu: bigint;
  values: unknown[];
}

export type ItemRow = DocumentRow | EventRow | QuarantineRow;

const CHAVE = /^[0-9]{50}$/;
const EVENT_ID = /^EVT[0-9]{59}$/;
const CODIGO = /^[0-9]{6}$/;

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

function partyDocument(doc: TaxId | undefined): { documento: string | null; nif: string | null } {
  if (!doc) return { documento: null, nif: null };
  if (doc.kind === TaxIdKind.CNPJ) return { documento: digitsCode(doc.number, [14]), nif: null };
  if (doc.kind === TaxIdKind.CPF) return { documento: digitsCode(doc.number, [11]), nif: null };
  if (doc.kind === TaxIdKind.NIF) return { documento: null, nif: text(doc.number, 40) };
  return { documento: null, nif: null };
}

function party(p: Party | undefined) {
  const { documento, nif } = partyDocument(p?.document);
  return { documento, nif, nome: text(p?.name, 300), im: text(p?.inscricaoMunicipal, 15) };
}

/** A Buffer over `bytes` without copying them (mysql2 sends Buffers as binary parameters). */
function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

export function documentRow(
  feed: FeedColumns,
  item: DistributionItem,
  doc: Document,
  xml: Buffer,
  xmlSha256: string,
  received?: Uint8Array,
): DocumentRow {
  const emit = party(doc.emitente);
  const prest = party(doc.prestador);
  const toma = party(doc.tomador);
  const interm = party(doc.intermediario);
  const v = doc.valores;
  // The derived fields are the store's to set, never the sender's: bytes that carry them are re-encoded.
  const typed =
    received && doc.status === 0 && doc.chaveSubstituta === "" ? bufferView(received) : Buffer.from(toBinary(DocumentSchema, { ...doc, status: 0, chaveSubstituta: "" }));
  const values = [
    doc.chave, feed.ambiente, feed.tipoNsu, item.nsu.toString(), asciiCode(doc.versao, 8), asciiCode(doc.numero, 15),
    asciiCode(doc.nDfse, 15), smallEnum(doc.cStat, 65535), smallEnum(doc.ambGer), smallEnum(doc.tpEmis),
    digitsCode(doc.codigoMunicipioEmissor, [7]), digitsCode(doc.codigoLocalPrestacao, [7]),
    asciiCode(doc.codigoPaisPrestacao, 2), digitsCode(doc.codigoMunicipioIncidencia, [7]),
    toDate(doc.dhEmi), toDate(doc.dhProc), toSqlDate(doc.competencia), toDate(item.dataHoraGeracao),
    emit.documento, emit.nome, emit.im, digitsCode(doc.emitente?.codigoMunicipio, [7]), asciiCode(doc.emitente?.uf, 2),
    smallEnum(doc.tpEmit),
    prest.documento, prest.nif, prest.nome, prest.im, smallEnum(doc.opSimpNac),
    toma.documento, toma.nif, toma.nome, interm.documento, interm.nome,
    asciiCode(doc.serie, 5), asciiCode(doc.nDps, 15), asciiCode(doc.servico?.cTribNac, 6),
    asciiCode(doc.servico?.cTribMun, 3), asciiCode(doc.servico?.cNbs, 9), doc.servico?.descricao || null,
    cents(v?.vServCents), cents(v?.vBcCents), aliquotaPercent(v?.aliquotaBps), cents(v?.vIssqnCents),
    cents(v?.vTotalRetCents), cents(v?.vLiqCents), smallEnum(v?.tribIssqn ?? 0), smallEnum(v?.tpRetIssqn ?? 0),
    digitsCode(doc.chaveSubstituida, [50]), typed, xml, xmlSha256,
  ];
  return { kind: "document", chave: doc.chave, nsu: item.nsu, xmlSha256, values };
}

export function eventRow(feed: FeedColumns, item: DistributionItem, ev: Event, xml: Buffer, xmlSha256: string, received?: Uint8Array): EventRow {
  const chaveSubstituta = digitsCode(ev.chaveSubstituta, [50]);
  const autor =
    ev.autor && (ev.autor.kind === TaxIdKind.CNPJ || ev.autor.kind === TaxIdKind.CPF) ? digitsCode(ev.autor.number, [11, 14]) : null;
  const values = [
    ev.id, ev.chave, feed.ambiente, feed.tipoNsu, item.nsu.toString(), asciiCode(ev.versao, 8), ev.codigo,
    asciiCode(TipoEvento[ev.tipo], 64), ev.nSeqEvento > 0 && ev.nSeqEvento <= 65535 ? ev.nSeqEvento : null,
    smallEnum(ev.ambGer), toDate(ev.dhEvento), toDate(ev.dhProc), toDate(item.dataHoraGeracao), autor,
    asciiCode(ev.cMotivo, 4), text(ev.xMotivo, 1000), chaveSubstituta, received ? bufferView(received) : Buffer.from(toBinary(EventSchema, ev)), xml, xmlSha256,
  ];
  return { kind: "event", idEvento: ev.id, chave: ev.chave, codigo: ev.codigo, chaveSubstituta, nsu: item.nsu, xmlSha256, values };
}

export function quarantineRow(
  feed: FeedColumns,
  item: DistributionItem,
  reason: FaultReason,
  message: string,
  rawPayload: Uint8Array,
  runId: string,
): QuarantineRow {
  const payload = Buffer.from(rawPayload);
  const xml = item.xml.byteLength ? Buffer.from(item.xml) : null;
  // nsu = 0 (the ADN sent none) cannot identify the item: a digest of what was received does.
  const itemKey =
    item.nsu === 0n
      ? createHash("sha256").update(payload).update("\0").update(xml ?? "").update("\0").update(item.chave).update("\0").update(message).digest("hex")
      : "";
  const values = [
    feed.ibge, feed.ambiente, feed.tipoNsu, item.nsu.toString(), itemKey, digitsCode(item.chave, [50]),
    asciiCode(item.tipoDocumento, 32), faultReasonCodes.toDb(reason) ?? "MISSING_FIELD", text(message, 2000),
    payload.byteLength ? payload : null, payload.byteLength ? sha256Hex(payload) : null, xml, toDate(item.dataHoraGeracao), runId,
  ];
  return { kind: "fault", nsu: item.nsu, values };
}

/**
 * Classifies one item and builds its row; items the tables cannot key are quarantined. `received` is the
 * bytes the item's document or event arrived as, when known: stored as they are instead of encoding again.
 */
export function itemRow(feed: FeedColumns, item: DistributionItem, runId: string, received?: Uint8Array): ItemRow {
  const content = item.content;
  const xml = Buffer.from(item.xml);
  // A parsed item has no raw ArquivoXml any more; its XML goes to the quarantine's xml column.
  const storeAsFault = (why: string) => quarantineRow(feed, item, FaultReason.MISSING_FIELD, why, new Uint8Array(0), runId);
  if (content.case === "fault") {
    return quarantineRow(feed, item, content.value.reason, content.value.message, content.value.rawPayload, runId);
  }
  if (content.case === undefined) return storeAsFault("item has neither document, event nor fault");
  if (item.nsu === 0n) return storeAsFault("item has no NSU");
  const xmlSha256 = sha256Hex(xml);
  if (item.xmlSha256 !== "" && item.xmlSha256 !== xmlSha256) return storeAsFault("xml_sha256 does not match the xml bytes");
  if (content.case === "document") {
    if (!CHAVE.test(content.value.chave)) return storeAsFault("document chave is not 50 digits");
    return documentRow(feed, item, content.value, xml, xmlSha256, received);
  }
  const ev = content.value;
  if (!EVENT_ID.test(ev.id)) return storeAsFault("event id is not EVT + 59 digits");
  if (!CHAVE.test(ev.chave)) return storeAsFault("event chNFSe is not 50 digits");
  if (!CODIGO.test(ev.codigo)) return storeAsFault("event code is not 6 digits");
  return eventRow(feed, item, ev, xml, xmlSha256, received);
}
