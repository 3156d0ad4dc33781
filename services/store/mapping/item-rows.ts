// DistributionItem → rows of nfse_documentos_{ibge} / nfse_eventos_{ibge} / nfse_quarantine. An item whose
// key fields cannot be stored (chave not 50 digits, event id or code malformed, no NSU) becomes a
// quarantine row instead: bad data never stops a feed and is never dropped.
import { createHash } from "node:crypto";
import { TaxIdKind, type TaxId } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { FaultReason, type DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema, type Document, type Party } from "../../../libs/gen/malha/nfse/v1/document_pb.js";
import { EventSchema, TipoEvento, type Event } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import { faultReasonCodes } from "../codes.js";
import { isChaveShaped } from "../../../libs/adn/chave.js";
import { binaryEncoder } from "../../../libs/rpc/binary-encoder.js";
import { EVENT_ID } from "../../../libs/adn/event-codes.js";
import * as col from "./column-guard.js";
import { ColumnValueError } from "./column-guard.js";
import { asciiCode, text, toDate } from "./columns.js";
import type { RowValues } from "../sql/multi-insert.js";

export const DOCUMENT_COLUMNS = [
  "chave",
  "ambiente",
  "tipo_nsu",
  "nsu",
  "versao",
  "numero",
  "numero_dfse",
  "status_geracao",
  "ambiente_gerador",
  "tipo_emissao",
  "municipio_emissor_ibge",
  "local_prestacao_ibge",
  "local_prestacao_pais",
  "municipio_incidencia_ibge",
  "data_emissao",
  "data_processamento",
  "competencia",
  "data_geracao_adn",
  "emitente_documento",
  "emitente_nome",
  "emitente_im",
  "emitente_municipio_ibge",
  "emitente_uf",
  "tipo_emitente",
  "prestador_documento",
  "prestador_nif",
  "prestador_nome",
  "prestador_im",
  "prestador_simples_nacional",
  "tomador_documento",
  "tomador_nif",
  "tomador_nome",
  "intermediario_documento",
  "intermediario_nome",
  "destinatario_documento",
  "destinatario_nif",
  "destinatario_nome",
  "serie_dps",
  "numero_dps",
  "codigo_tributacao_nacional",
  "codigo_tributacao_municipal",
  "codigo_nbs",
  "descricao_servico",
  "valor_servico",
  "valor_base_calculo",
  "aliquota",
  "valor_issqn",
  "valor_total_retencoes",
  "valor_liquido",
  "tributacao_issqn",
  "tipo_retencao_issqn",
  "ibscbs_localidade_incidencia",
  "ibscbs_cst",
  "ibscbs_classificacao",
  "ibscbs_base_calculo",
  "ibs_uf_aliquota",
  "ibs_uf_valor",
  "ibs_mun_aliquota",
  "ibs_mun_valor",
  "ibs_valor_total",
  "cbs_aliquota",
  "cbs_valor",
  "valor_total_nf",
  "chave_substituida",
  "documento_pb",
  "xml",
  "xml_sha256",
] as const;

export const EVENT_COLUMNS = [
  "id_evento",
  "chave",
  "ambiente",
  "tipo_nsu",
  "nsu",
  "versao",
  "codigo",
  "tipo_evento",
  "sequencia",
  "ambiente_gerador",
  "data_evento",
  "data_processamento",
  "data_geracao_adn",
  "autor_documento",
  "motivo_codigo",
  "motivo_descricao",
  "chave_substituta",
  "evento_pb",
  "xml",
  "xml_sha256",
] as const;

export const QUARANTINE_COLUMNS = [
  "ibge",
  "ambiente",
  "tipo_nsu",
  "nsu",
  "item_key",
  "chave",
  "tipo_documento",
  "reason",
  "message",
  "payload",
  "payload_sha256",
  "xml",
  "data_geracao_adn",
  "run_id",
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
  /** Its DOCUMENT_COLUMNS, or (from a decode thread) the row already written (sql/multi-insert.ts renderRows). */
  values: RowValues;
}

export interface EventRow {
  kind: "event";
  idEvento: string;
  chave: string;
  codigo: string;
  chaveSubstituta: string | null;
  nsu: bigint;
  xmlSha256: string;
  /** Its EVENT_COLUMNS, or the row already written. */
  values: RowValues;
}

export interface QuarantineRow {
  kind: "fault";
  nsu: bigint;
  values: unknown[];
}

export type ItemRow = DocumentRow | EventRow | QuarantineRow;

/** A row as itemRow maps it: its values, not yet written. */
export type Mapped<R extends ItemRow> = R & { values: unknown[] };
export type MappedRow = Mapped<DocumentRow> | Mapped<EventRow> | QuarantineRow;

/**
 * Where a row's feed slot sits (ambiente, tipo_nsu, nsu, in this order): the columns an update keeps from the
 * item's first distribution (apply-batch.ts).
 */
function feedSlot(columns: readonly string[]): readonly [number, number] {
  const from = columns.indexOf("ambiente");
  if (from < 0 || columns[from + 1] !== "tipo_nsu" || columns[from + 2] !== "nsu")
    throw new Error("item-rows: the feed slot's columns moved");
  return [from, from + 2];
}
export const DOCUMENT_SLOT = feedSlot(DOCUMENT_COLUMNS);
export const EVENT_SLOT = feedSlot(EVENT_COLUMNS);

const CODIGO = /^[0-9]{6}$/;

// The typed columns are serialized by plan, not by reflection (docs/decisions/0048-typed-columns-serialized-by-plan.md).
const documentBinary = binaryEncoder(DocumentSchema);
const eventBinary = binaryEncoder(EventSchema);

export function sha256Hex(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

type PartyName = "emitente" | "prestador" | "tomador" | "intermediario" | "destinatario";

function partyDocument(name: PartyName, doc: TaxId | undefined): { documento: string | null; nif: string | null } {
  if (!doc) return { documento: null, nif: null };
  const at = { field: `${name}.document`, column: `${name}_documento` };
  if (doc.kind === TaxIdKind.CNPJ) return { documento: col.cpfCnpj(at, doc.number, "CNPJ"), nif: null };
  if (doc.kind === TaxIdKind.CPF) return { documento: col.cpfCnpj(at, doc.number, "CPF"), nif: null };
  if (doc.kind === TaxIdKind.NIF)
    return { documento: null, nif: col.varchar({ field: `${name}.document`, column: `${name}_nif` }, doc.number, 40) };
  return { documento: null, nif: null };
}

function party(name: PartyName, p: Party | undefined) {
  const { documento, nif } = partyDocument(name, p?.document);
  return {
    documento,
    nif,
    nome: col.varchar({ field: `${name}.name`, column: `${name}_nome` }, p?.name, 300),
    im: col.varchar({ field: `${name}.inscricao_municipal`, column: `${name}_im` }, p?.inscricaoMunicipal, 15),
  };
}

/** A Buffer over `bytes` without copying them (mysql2 sends Buffers as binary parameters). */
function bufferView(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

const at = (field: string, column: string): col.Target => ({ field, column });

export function documentRow(feed: FeedColumns, item: DistributionItem, doc: Document, xml: Buffer, xmlSha256: string): Mapped<DocumentRow> {
  const emit = party("emitente", doc.emitente);
  const prest = party("prestador", doc.prestador);
  const toma = party("tomador", doc.tomador);
  const interm = party("intermediario", doc.intermediario);
  const dest = party("destinatario", doc.destinatario);
  const v = doc.valores;
  const ibs = doc.ibsCbs;
  // Serialized once, straight from the decoded message (docs/decisions/0034-store-decodes-the-page.md);
  // the derived fields are the store's to set, never the sender's, so a document that carries them is
  // serialized without them.
  const typed = bufferView(
    doc.status === 0 && doc.chaveSubstituta === "" ? documentBinary(doc) : documentBinary({ ...doc, status: 0, chaveSubstituta: "" }),
  );
  const values = [
    doc.chave,
    feed.ambiente,
    feed.tipoNsu,
    item.nsu.toString(),
    col.code(at("versao", "versao"), doc.versao, 8),
    col.code(at("numero", "numero"), doc.numero, 15),
    col.code(at("n_dfse", "numero_dfse"), doc.nDfse, 15),
    col.smallCode(at("c_stat", "status_geracao"), doc.cStat, 65535),
    col.smallCode(at("amb_ger", "ambiente_gerador"), doc.ambGer),
    col.smallCode(at("tp_emis", "tipo_emissao"), doc.tpEmis),
    col.digits(at("codigo_municipio_emissor", "municipio_emissor_ibge"), doc.codigoMunicipioEmissor, [7]),
    col.digits(at("codigo_local_prestacao", "local_prestacao_ibge"), doc.codigoLocalPrestacao, [7]),
    col.code(at("codigo_pais_prestacao", "local_prestacao_pais"), doc.codigoPaisPrestacao, 2),
    col.digits(at("codigo_municipio_incidencia", "municipio_incidencia_ibge"), doc.codigoMunicipioIncidencia, [7]),
    col.dateTime(at("dh_emi", "data_emissao"), doc.dhEmi),
    col.dateTime(at("dh_proc", "data_processamento"), doc.dhProc),
    col.calendarDate(at("competencia", "competencia"), doc.competencia),
    col.dateTime(at("data_hora_geracao", "data_geracao_adn"), item.dataHoraGeracao),
    emit.documento,
    emit.nome,
    emit.im,
    col.digits(at("emitente.codigo_municipio", "emitente_municipio_ibge"), doc.emitente?.codigoMunicipio, [7]),
    col.code(at("emitente.uf", "emitente_uf"), doc.emitente?.uf, 2),
    col.smallCode(at("tp_emit", "tipo_emitente"), doc.tpEmit),
    prest.documento,
    prest.nif,
    prest.nome,
    prest.im,
    col.smallCode(at("op_simp_nac", "prestador_simples_nacional"), doc.opSimpNac),
    toma.documento,
    toma.nif,
    toma.nome,
    interm.documento,
    interm.nome,
    dest.documento,
    dest.nif,
    dest.nome,
    col.code(at("serie", "serie_dps"), doc.serie, 5),
    col.code(at("n_dps", "numero_dps"), doc.nDps, 15),
    col.code(at("servico.c_trib_nac", "codigo_tributacao_nacional"), doc.servico?.cTribNac, 6),
    col.code(at("servico.c_trib_mun", "codigo_tributacao_municipal"), doc.servico?.cTribMun, 3),
    col.code(at("servico.c_nbs", "codigo_nbs"), doc.servico?.cNbs, 9),
    col.textColumn(at("servico.descricao", "descricao_servico"), doc.servico?.descricao),
    col.money(at("valores.v_serv_cents", "valor_servico"), v?.vServCents),
    col.money(at("valores.v_bc_cents", "valor_base_calculo"), v?.vBcCents),
    col.rate(at("valores.aliquota_bps", "aliquota"), v?.aliquotaBps, 2),
    col.money(at("valores.v_issqn_cents", "valor_issqn"), v?.vIssqnCents),
    col.money(at("valores.v_total_ret_cents", "valor_total_retencoes"), v?.vTotalRetCents),
    col.money(at("valores.v_liq_cents", "valor_liquido"), v?.vLiqCents),
    col.smallCode(at("valores.trib_issqn", "tributacao_issqn"), v?.tribIssqn ?? 0),
    col.smallCode(at("valores.tp_ret_issqn", "tipo_retencao_issqn"), v?.tpRetIssqn ?? 0),
    col.digits(at("ibs_cbs.codigo_localidade_incidencia", "ibscbs_localidade_incidencia"), ibs?.codigoLocalidadeIncidencia, [7]),
    col.code(at("ibs_cbs.cst", "ibscbs_cst"), ibs?.cst, 3),
    col.code(at("ibs_cbs.c_class_trib", "ibscbs_classificacao"), ibs?.cClassTrib, 6),
    col.money(at("ibs_cbs.v_bc_cents", "ibscbs_base_calculo"), ibs?.vBcCents),
    col.rate(at("ibs_cbs.aliquota_ibs_uf_ppm", "ibs_uf_aliquota"), ibs?.aliquotaIbsUfPpm, 4),
    col.money(at("ibs_cbs.v_ibs_uf_cents", "ibs_uf_valor"), ibs?.vIbsUfCents),
    col.rate(at("ibs_cbs.aliquota_ibs_mun_ppm", "ibs_mun_aliquota"), ibs?.aliquotaIbsMunPpm, 4),
    col.money(at("ibs_cbs.v_ibs_mun_cents", "ibs_mun_valor"), ibs?.vIbsMunCents),
    col.money(at("ibs_cbs.v_ibs_total_cents", "ibs_valor_total"), ibs?.vIbsTotalCents),
    col.rate(at("ibs_cbs.aliquota_cbs_ppm", "cbs_aliquota"), ibs?.aliquotaCbsPpm, 4),
    col.money(at("ibs_cbs.v_cbs_cents", "cbs_valor"), ibs?.vCbsCents),
    col.money(at("ibs_cbs.v_tot_nf_cents", "valor_total_nf"), ibs?.vTotNfCents),
    col.chave(at("chave_substituida", "chave_substituida"), doc.chaveSubstituida),
    col.mediumBlob(at("document", "documento_pb"), typed),
    xml,
    xmlSha256,
  ];
  return { kind: "document", chave: doc.chave, nsu: item.nsu, xmlSha256, values };
}

export function eventRow(feed: FeedColumns, item: DistributionItem, ev: Event, xml: Buffer, xmlSha256: string): Mapped<EventRow> {
  const chaveSubstituta = col.chave(at("chave_substituta", "chave_substituta"), ev.chaveSubstituta);
  const autorAt = at("autor", "autor_documento");
  const autor =
    ev.autor?.kind === TaxIdKind.CNPJ
      ? col.cpfCnpj(autorAt, ev.autor.number, "CNPJ")
      : ev.autor?.kind === TaxIdKind.CPF
        ? col.cpfCnpj(autorAt, ev.autor.number, "CPF")
        : null;
  if (ev.nSeqEvento < 0 || ev.nSeqEvento > 65535)
    throw new ColumnValueError("n_seq_evento", "sequencia", `is ${ev.nSeqEvento}, outside 0..65535`);
  const typed = bufferView(eventBinary(ev));
  const values = [
    ev.id,
    ev.chave,
    feed.ambiente,
    feed.tipoNsu,
    item.nsu.toString(),
    col.code(at("versao", "versao"), ev.versao, 8),
    ev.codigo,
    asciiCode(TipoEvento[ev.tipo], 64),
    ev.nSeqEvento > 0 ? ev.nSeqEvento : null,
    col.smallCode(at("amb_ger", "ambiente_gerador"), ev.ambGer),
    col.dateTime(at("dh_evento", "data_evento"), ev.dhEvento),
    col.dateTime(at("dh_proc", "data_processamento"), ev.dhProc),
    col.dateTime(at("data_hora_geracao", "data_geracao_adn"), item.dataHoraGeracao),
    autor,
    col.code(at("c_motivo", "motivo_codigo"), ev.cMotivo, 4),
    col.varchar(at("x_motivo", "motivo_descricao"), ev.xMotivo, 1000),
    chaveSubstituta,
    col.mediumBlob(at("event", "evento_pb"), typed),
    xml,
    xmlSha256,
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
      ? createHash("sha256")
          .update(payload)
          .update("\0")
          .update(xml ?? "")
          .update("\0")
          .update(item.chave)
          .update("\0")
          .update(message)
          .digest("hex")
      : "";
  const values = [
    feed.ibge,
    feed.ambiente,
    feed.tipoNsu,
    item.nsu.toString(),
    itemKey,
    isChaveShaped(item.chave) ? item.chave : null,
    asciiCode(item.tipoDocumento, 32),
    faultReasonCodes.toDb(reason) ?? "MISSING_FIELD",
    text(message, 2000),
    payload.byteLength ? payload : null,
    payload.byteLength ? sha256Hex(payload) : null,
    xml,
    toDate(item.dataHoraGeracao),
    runId,
  ];
  return { kind: "fault", nsu: item.nsu, values };
}

/**
 * Classifies one item and builds its row; items the tables cannot key are quarantined. `hashedHere`: the
 * item was decoded in this process (decodeItem), so its xml_sha256 is the hash of its xml, not a sender's
 * claim to check (hashing twice was ≈ 3 % of a decode thread's time).
 */
export function itemRow(feed: FeedColumns, item: DistributionItem, runId: string, hashedHere = false): MappedRow {
  const content = item.content;
  // A view: the XML is only hashed and sent to MySQL, and copying it was a visible share of the mapping.
  const xml = bufferView(item.xml);
  // A parsed item has no raw ArquivoXml any more; its XML goes to the quarantine's xml column.
  const storeAsFault = (why: string) => quarantineRow(feed, item, FaultReason.MISSING_FIELD, why, new Uint8Array(0), runId);
  if (content.case === "fault") {
    return quarantineRow(feed, item, content.value.reason, content.value.message, content.value.rawPayload, runId);
  }
  if (content.case === undefined) return storeAsFault("item has neither document, event nor fault");
  if (item.nsu === 0n) return storeAsFault("item has no NSU");
  const xmlSha256 = hashedHere && item.xmlSha256 !== "" ? item.xmlSha256 : sha256Hex(xml);
  if (item.xmlSha256 !== "" && item.xmlSha256 !== xmlSha256) return storeAsFault("xml_sha256 does not match the xml bytes");
  // A value the columns cannot hold quarantines its item, with the field and the reason, instead of failing the batch.
  const invalid = (err: unknown): QuarantineRow => {
    if (!(err instanceof ColumnValueError)) throw err;
    return quarantineRow(feed, item, FaultReason.INVALID_VALUE, err.message, new Uint8Array(0), runId);
  };
  if (content.case === "document") {
    if (!isChaveShaped(content.value.chave))
      return storeAsFault("document chave is not a chave (50 characters, letters only in the CNPJ at 10-23)");
    try {
      return documentRow(feed, item, content.value, xml, xmlSha256);
    } catch (err) {
      return invalid(err);
    }
  }
  const ev = content.value;
  if (!EVENT_ID.test(ev.id)) return storeAsFault("event id is not EVT + chave + code + sequence (62 characters)");
  if (!isChaveShaped(ev.chave)) return storeAsFault("event chNFSe is not a chave (50 characters, letters only in the CNPJ at 10-23)");
  if (!CODIGO.test(ev.codigo)) return storeAsFault("event code is not 6 digits");
  try {
    return eventRow(feed, item, ev, xml, xmlSha256);
  } catch (err) {
    return invalid(err);
  }
}
