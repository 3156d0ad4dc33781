// Read side: documents, events, quarantine and runs, all keyset-paginated. Only column expressions
// chosen here reach the SQL text; every request value is a bound parameter.
import type { RowDataPacket } from "mysql2/promise";
import type { DocumentRecord, EventRecord, QuarantineEntry, Run } from "../../../libs/gen/malha/store/v1/types_pb.js";
import type { Ibge } from "../ibge.js";
import { municipalityTables } from "../ibge.js";
import { sqlDateTime } from "../mapping/columns.js";
import { documentFromRow, eventFromRow, quarantineFromRow, runFromRow } from "../mapping/records.js";
import { keysetAfter, orderBy, Where, type KeyColumn } from "../sql/keyset.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import { withDb } from "../../../libs/db/tx.js";
import type { Row, StoreDb } from "./context.js";
import { requireMunicipality } from "./municipalities.js";

const DOC_COLUMNS =
  "id, chave, ambiente, tipo_nsu, nsu, versao, numero, prestador_documento, tomador_documento, data_emissao, " +
  "data_processamento, competencia, data_geracao_adn, situacao, chave_substituta, documento_pb, xml_sha256, created_at, updated_at";
const EVENT_COLUMNS =
  "id, id_evento, chave, ambiente, tipo_nsu, nsu, codigo, data_evento, data_processamento, data_geracao_adn, evento_pb, xml_sha256, created_at";
const QUARANTINE_COLUMNS = "id, ibge, ambiente, tipo_nsu, nsu, chave, reason, message, data_geracao_adn, run_id, created_at";

/** The value of a key column in a row, as text that compares exactly in SQL. */
function keyValue(v: unknown): string {
  return v instanceof Date ? sqlDateTime(v) : String(v);
}

interface Page<T> {
  items: T[];
  next: string;
}

async function page(
  db: StoreDb,
  method: string,
  filters: unknown,
  pageToken: string,
  limit: number,
  from: string,
  columns: string,
  where: Where,
  key: KeyColumn[],
  keyFields: string[],
): Promise<{ rows: Row[]; next: string }> {
  const after = db.tokens.decode(
    method,
    filters,
    pageToken,
    key.map(() => "string" as const),
  );
  if (after) where.addFragment(keysetAfter(key, after));
  const [rows] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(`SELECT ${columns} FROM ${from} ${where.sql} ORDER BY ${orderBy(key)} LIMIT ?`, [
      ...where.params,
      limit + 1,
    ]),
  );
  const pageRows = rows.slice(0, limit);
  const last = pageRows[pageRows.length - 1];
  const next =
    rows.length > limit && last
      ? db.tokens.encode(
          method,
          filters,
          keyFields.map((f) => keyValue(last[f])),
        )
      : "";
  return { rows: pageRows, next };
}

export interface DocumentFilter {
  ibge: Ibge;
  ambiente?: number;
  tipoNsu?: string;
  nsuStart?: bigint;
  nsuEnd?: bigint;
  emissionStart?: Date;
  emissionEnd?: Date;
  competenciaStart?: string;
  competenciaEnd?: string;
  prestador?: { column: "prestador_documento" | "prestador_nif"; value: string };
  tomador?: { column: "tomador_documento" | "tomador_nif"; value: string };
  destinatario?: { column: "destinatario_documento" | "destinatario_nif"; value: string };
  chave?: string;
  situacao?: string;
}

/** Chooses the sort key whose index serves the filters (store.proto: NSU order, or date then NSU). */
export function documentQuery(f: DocumentFilter): { where: Where; key: KeyColumn[]; keyFields: string[] } {
  const where = new Where();
  if (f.ambiente !== undefined) where.add("ambiente = ?", f.ambiente);
  if (f.tipoNsu !== undefined) where.add("tipo_nsu = ?", f.tipoNsu);
  if (f.nsuStart !== undefined) where.add("nsu >= ?", f.nsuStart.toString());
  if (f.nsuEnd !== undefined) where.add("nsu <= ?", f.nsuEnd.toString());
  if (f.emissionStart) where.add("data_emissao >= ?", f.emissionStart);
  if (f.emissionEnd) where.add("data_emissao < ?", f.emissionEnd);
  if (f.competenciaStart) where.add("competencia >= ?", f.competenciaStart);
  if (f.competenciaEnd) where.add("competencia <= ?", f.competenciaEnd);
  if (f.prestador) where.add(`${f.prestador.column} = ?`, f.prestador.value);
  if (f.tomador) where.add(`${f.tomador.column} = ?`, f.tomador.value);
  if (f.destinatario) where.add(`${f.destinatario.column} = ?`, f.destinatario.value);
  if (f.chave) where.add("chave = ?", f.chave);
  if (f.situacao) where.add("situacao = ?", f.situacao);
  if (f.emissionStart || f.emissionEnd) {
    return { where, key: [{ expr: "data_emissao" }, { expr: "id" }], keyFields: ["data_emissao", "id"] };
  }
  if (f.competenciaStart || f.competenciaEnd) {
    return { where, key: [{ expr: "competencia" }, { expr: "id" }], keyFields: ["competencia", "id"] };
  }
  return {
    where,
    key: [{ expr: "ambiente" }, { expr: "tipo_nsu" }, { expr: "nsu" }],
    keyFields: ["ambiente", "tipo_nsu", "nsu"],
  };
}

export async function listDocuments(
  db: StoreDb,
  f: DocumentFilter,
  includeXml: boolean,
  requestedSize: number,
  pageToken: string,
): Promise<Page<DocumentRecord>> {
  await requireMunicipality(db, f.ibge);
  const t = municipalityTables(f.ibge);
  const { where, key, keyFields } = documentQuery(f);
  const limit = pageSizeOf(requestedSize, { default: 50, max: includeXml ? 100 : 500 });
  const { rows, next } = await page(
    db,
    "ListDocuments",
    f,
    pageToken,
    limit,
    t.documentos,
    DOC_COLUMNS + (includeXml ? ", xml" : ""),
    where,
    key,
    keyFields,
  );
  return { items: rows.map((r) => documentFromRow(f.ibge, r, includeXml)), next };
}

export async function getDocument(
  db: StoreDb,
  ibge: Ibge,
  chave: string,
  includeXml: boolean,
): Promise<{ document?: DocumentRecord; events: EventRecord[] }> {
  await requireMunicipality(db, ibge);
  const t = municipalityTables(ibge);
  const xml = includeXml ? ", xml" : "";
  const [docs] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(`SELECT ${DOC_COLUMNS}${xml} FROM ${t.documentos} WHERE chave = ?`, [chave]),
  );
  const doc = docs[0];
  if (!doc) return { events: [] };
  const [events] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(`SELECT ${EVENT_COLUMNS}${xml} FROM ${t.eventos} WHERE chave = ? ORDER BY data_processamento, nsu`, [
      chave,
    ]),
  );
  return { document: documentFromRow(ibge, doc, includeXml), events: events.map((e) => eventFromRow(ibge, e, includeXml, true)) };
}

/**
 * Many notes by chave in two statements (the notes, then all their events), answered in the order asked;
 * a chave not held has no document and no events.
 */
export async function batchGetDocuments(
  db: StoreDb,
  ibge: Ibge,
  chaves: readonly string[],
  includeXml: boolean,
): Promise<{ chave: string; document?: DocumentRecord; events: EventRecord[] }[]> {
  await requireMunicipality(db, ibge);
  const t = municipalityTables(ibge);
  const xml = includeXml ? ", xml" : "";
  const [docs] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(`SELECT ${DOC_COLUMNS}${xml} FROM ${t.documentos} WHERE chave IN (?)`, [chaves]),
  );
  const byChave = new Map<string, { document: DocumentRecord; events: EventRecord[] }>();
  for (const d of docs) byChave.set(String(d.chave), { document: documentFromRow(ibge, d, includeXml), events: [] });
  if (byChave.size > 0) {
    const [events] = await withDb(() =>
      db.pool.query<RowDataPacket[]>(
        `SELECT ${EVENT_COLUMNS}${xml} FROM ${t.eventos} WHERE chave IN (?) ORDER BY chave, data_processamento, nsu`,
        [[...byChave.keys()]],
      ),
    );
    for (const e of events) byChave.get(String(e.chave))?.events.push(eventFromRow(ibge, e, includeXml, true));
  }
  return chaves.map((chave) => ({ chave, ...(byChave.get(chave) ?? { events: [] }) }));
}

export interface EventFilter {
  ibge: Ibge;
  chave?: string;
  codigo?: string;
  tipo?: string;
  nsuStart?: bigint;
  nsuEnd?: bigint;
  timeStart?: Date;
  timeEnd?: Date;
}

export function eventQuery(f: EventFilter): { where: Where; key: KeyColumn[]; keyFields: string[] } {
  const where = new Where();
  if (f.chave) where.add("chave = ?", f.chave);
  if (f.codigo) where.add("codigo = ?", f.codigo);
  if (f.tipo) where.add("tipo_evento = ?", f.tipo);
  if (f.nsuStart !== undefined) where.add("nsu >= ?", f.nsuStart.toString());
  if (f.nsuEnd !== undefined) where.add("nsu <= ?", f.nsuEnd.toString());
  if (f.timeStart) where.add("data_evento >= ?", f.timeStart);
  if (f.timeEnd) where.add("data_evento < ?", f.timeEnd);
  if (f.timeStart || f.timeEnd) return { where, key: [{ expr: "data_evento" }, { expr: "id" }], keyFields: ["data_evento", "id"] };
  return {
    where,
    key: [{ expr: "ambiente" }, { expr: "tipo_nsu" }, { expr: "nsu" }, { expr: "id" }],
    keyFields: ["ambiente", "tipo_nsu", "nsu", "id"],
  };
}

export async function listEvents(
  db: StoreDb,
  f: EventFilter,
  includeXml: boolean,
  requestedSize: number,
  pageToken: string,
): Promise<Page<EventRecord>> {
  await requireMunicipality(db, f.ibge);
  const t = municipalityTables(f.ibge);
  const { where, key, keyFields } = eventQuery(f);
  const limit = pageSizeOf(requestedSize, { default: 50, max: includeXml ? 100 : 500 });
  const { rows, next } = await page(
    db,
    "ListEvents",
    f,
    pageToken,
    limit,
    t.eventos,
    EVENT_COLUMNS + (includeXml ? ", xml" : ""),
    where,
    key,
    keyFields,
  );
  const chaves = [...new Set(rows.map((r) => String(r.chave)))];
  const present = new Set<string>();
  if (chaves.length) {
    const [docs] = await withDb(() => db.pool.query<RowDataPacket[]>(`SELECT chave FROM ${t.documentos} WHERE chave IN (?)`, [chaves]));
    for (const d of docs) present.add(String(d.chave));
  }
  return { items: rows.map((r) => eventFromRow(f.ibge, r, includeXml, present.has(String(r.chave)))), next };
}

export interface QuarantineFilter {
  ibge: Ibge;
  ambiente?: number;
  tipoNsu?: string;
  reason?: string;
  nsuStart?: bigint;
  nsuEnd?: bigint;
}

export async function listQuarantine(
  db: StoreDb,
  f: QuarantineFilter,
  includePayload: boolean,
  requestedSize: number,
  pageToken: string,
): Promise<Page<QuarantineEntry>> {
  await requireMunicipality(db, f.ibge);
  const where = new Where().add("ibge = ?", f.ibge);
  if (f.ambiente !== undefined) where.add("ambiente = ?", f.ambiente);
  if (f.tipoNsu !== undefined) where.add("tipo_nsu = ?", f.tipoNsu);
  if (f.reason) where.add("reason = ?", f.reason);
  if (f.nsuStart !== undefined) where.add("nsu >= ?", f.nsuStart.toString());
  if (f.nsuEnd !== undefined) where.add("nsu <= ?", f.nsuEnd.toString());
  const key = [{ expr: "ambiente" }, { expr: "tipo_nsu" }, { expr: "nsu" }, { expr: "id" }];
  const limit = pageSizeOf(requestedSize);
  const columns = QUARANTINE_COLUMNS + (includePayload ? ", payload, xml" : "");
  const { rows, next } = await page(db, "ListQuarantine", f, pageToken, limit, "nfse_quarantine", columns, where, key, [
    "ambiente",
    "tipo_nsu",
    "nsu",
    "id",
  ]);
  return { items: rows.map((r) => quarantineFromRow(r, includePayload)), next };
}

export interface RunFilter {
  ibge?: Ibge;
  ambiente?: number;
  tipoNsu?: string;
  outcome?: string;
  since?: Date;
  runningOnly: boolean;
}

export async function listRuns(db: StoreDb, f: RunFilter, requestedSize: number, pageToken: string): Promise<Page<Run>> {
  if (f.ibge) await requireMunicipality(db, f.ibge);
  const where = new Where();
  if (f.ibge) where.add("ibge = ?", f.ibge);
  if (f.ambiente !== undefined) where.add("ambiente = ?", f.ambiente);
  if (f.tipoNsu !== undefined) where.add("tipo_nsu = ?", f.tipoNsu);
  if (f.outcome) where.add("outcome = ?", f.outcome);
  if (f.runningOnly) where.add("outcome = 'running'");
  if (f.since) where.add("started_at >= ?", f.since);
  const key = [
    { expr: "started_at", desc: true },
    { expr: "id", desc: true },
  ];
  const limit = pageSizeOf(requestedSize);
  const { rows, next } = await page(db, "ListRuns", f, pageToken, limit, "nfse_sync_runs", "*", where, key, ["started_at", "id"]);
  return { items: rows.map(runFromRow), next };
}
