// ApplyBatch: one transaction holding the fence check, the upserts of documents, events, aliases and
// quarantine rows, the derived statuses and the cursor. It starts with the conditional write on
// `fence_token = ?`, which both refuses a stale holder and locks the feed row, so batches of one feed
// are serialised and a newer holder's BeginRun waits for (and then sees) a batch already under way
// (docs/decisions/0008-fencing-in-mysql.md).
import type { PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { create } from "@bufbuild/protobuf";
import type { DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { ApplyCountsSchema, type ApplyCounts } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { feedLabel, type Feed } from "../codes.js";
import { badRequest, cursorOutOfRange, runNotFound } from "../errors.js";
import { municipalityTables, type MunicipalityTables } from "../ibge.js";
import { deriveStatus, type StatusEvent } from "../mapping/derive-status.js";
import {
  DOCUMENT_COLUMNS,
  EVENT_COLUMNS,
  itemRow,
  QUARANTINE_COLUMNS,
  type DocumentRow,
  type EventRow,
  type QuarantineRow,
} from "../mapping/item-rows.js";
import { big } from "../mapping/records.js";
import { insertRows } from "../sql/insert-rows.js";
import type { SqlFragment } from "../sql/keyset.js";
import { inTransaction } from "../../../libs/db/tx.js";
import type { StoreDb } from "./context.js";
import { explainFencedMiss, FEED_WHERE, feedParams, parseRunId } from "./state.js";

export interface ApplyBatchInput {
  feed: Feed;
  runId: string;
  fence: bigint;
  items: DistributionItem[];
  newCursor: bigint;
  maxNsuSeen: bigint;
}

export interface ApplyBatchResult {
  counts: ApplyCounts;
  cursor: bigint;
  cancelRequested: boolean;
}

/** The guard every run write starts with. Exported so the lost-update test exercises this very SQL. */
export const FENCE_GUARD_SQL = `UPDATE nfse_sync_state SET locked_at = NOW(3)
  WHERE ${FEED_WHERE} AND fence_token = ? AND current_run_id = ? AND status = 'running'`;

export async function claimFence(conn: PoolConnection, feed: Feed, runId: string, fence: bigint): Promise<void> {
  const [res] = await conn.query<ResultSetHeader>(FENCE_GUARD_SQL, [...feedParams(feed), fence.toString(), runId]);
  if (res.affectedRows !== 1) await explainFencedMiss(conn, feed, runId, fence);
}

/**
 * The run row, locked (as every run write locks it), with the feed's stored cursor: one round trip where
 * there were two, the feed row being already locked by the fence guard.
 */
async function lockRunAndCursor(conn: PoolConnection, feed: Feed, runId: string): Promise<RowDataPacket> {
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT r.trigger_kind, r.cancel_requested_at, s.last_nsu FROM nfse_sync_runs r, nfse_sync_state s
      WHERE r.id = ? AND s.ibge = ? AND s.ambiente = ? AND s.tipo_nsu = ? FOR UPDATE`,
    [parseRunId(runId), ...feedParams(feed)],
  );
  if (!rows[0]) throw runNotFound(runId);
  return rows[0];
}

/** Test hook: called inside the transaction after the rows are written, before the cursor moves. */
export type ApplyHook = (conn: PoolConnection) => Promise<void>;

export async function applyBatch(db: StoreDb, input: ApplyBatchInput, hook?: ApplyHook): Promise<ApplyBatchResult> {
  const { feed } = input;
  const tables = municipalityTables(feed.ibge);
  const rows = input.items.map((item) => itemRow(feed, item, input.runId));
  const docs = rows.filter((r): r is DocumentRow => r.kind === "document");
  const events = rows.filter((r): r is EventRow => r.kind === "event");
  const faults = rows.filter((r): r is QuarantineRow => r.kind === "fault");
  const highestItemNsu = input.items.reduce((m, i) => (i.nsu > m ? i.nsu : m), 0n);

  return inTransaction(db.pool, async (conn) => {
    await claimFence(conn, feed, input.runId, input.fence);
    const run = await lockRunAndCursor(conn, feed, input.runId);
    const stored = big(run.last_nsu);
    const reconciliation = run.trigger_kind === "reconciliation";
    if (!reconciliation) {
      const allowed = highestItemNsu > stored ? highestItemNsu : stored;
      if (input.newCursor > allowed) {
        throw cursorOutOfRange(
          `new_cursor ${input.newCursor} is beyond both the stored cursor ${stored} and the highest NSU in the batch ${highestItemNsu}`,
        );
      }
    }

    const counts = create(ApplyCountsSchema, {});
    const newDocs = await upsertDocuments(db, conn, tables, feed, input.runId, docs, counts);
    const newEvents = await upsertEvents(db, conn, tables, feed, input.runId, events, counts);
    const newFaults = await upsertQuarantine(db, conn, feed, faults);
    counts.faults = faults.length;
    counts.statusChanges = await refreshStatuses(conn, tables, [...docs.map((d) => d.chave), ...events.map((e) => e.chave)]);
    if (hook) await hook(conn);

    const cursorParam = reconciliation ? "0" : input.newCursor.toString();
    const maxSeen = input.maxNsuSeen > highestItemNsu ? input.maxNsuSeen : highestItemNsu;
    const [upd] = await conn.query<ResultSetHeader>(
      `UPDATE nfse_sync_state SET last_nsu = GREATEST(last_nsu, ?), max_nsu = GREATEST(max_nsu, ?),
         documents_total = documents_total + ?, events_total = events_total + ?, faults_total = faults_total + ?
       WHERE ${FEED_WHERE} AND fence_token = ?`,
      [cursorParam, maxSeen.toString(), newDocs, newEvents, newFaults, ...feedParams(feed), input.fence.toString()],
    );
    if (upd.affectedRows !== 1) await explainFencedMiss(conn, feed, input.runId, input.fence);
    const cursor = reconciliation ? stored : input.newCursor > stored ? input.newCursor : stored;
    await conn.query(
      `UPDATE nfse_sync_runs SET to_nsu = ?, max_nsu_seen = GREATEST(max_nsu_seen, ?), batches = batches + 1,
         documents = documents + ?, documents_updated = documents_updated + ?, events = events + ?,
         events_updated = events_updated + ?, faults = faults + ?, last_progress_at = NOW(3)
       WHERE id = ?`,
      [
        cursor.toString(),
        maxSeen.toString(),
        counts.documentsInserted,
        counts.documentsUpdated,
        counts.eventsInserted,
        counts.eventsUpdated,
        counts.faults,
        input.runId,
      ],
    );
    return { counts, cursor, cancelRequested: run.cancel_requested_at instanceof Date };
  });
}

interface Existing {
  ambiente: number;
  tipoNsu: string;
  nsu: bigint;
  sha: string;
}

const DOC_FEED_COLUMNS = new Set(["chave", "ambiente", "tipo_nsu", "nsu"]);
const EVENT_FEED_COLUMNS = new Set(["id_evento", "ambiente", "tipo_nsu", "nsu"]);

function upsertTail(columns: readonly string[], keep: Set<string>): string {
  // The first (feed, NSU) of an item is kept; everything else follows the latest distribution.
  const sets = columns.filter((c) => !keep.has(c)).map((c) => `${c} = VALUES(${c})`);
  return `ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), ${sets.join(", ")}`;
}

/**
 * `ibge`: the rows go to that municipality's own table, whose statement only it uses; they go as prepared
 * statements only while it holds a place among the prepared municipalities (decision 0024).
 */
async function runInserts(
  db: StoreDb,
  conn: PoolConnection,
  head: string,
  columnCount: number,
  tail: string,
  values: unknown[][],
  ibge?: string,
) {
  // Prepared: the XML and typed-message Buffers travel as bytes instead of being escaped into SQL text.
  const prepared = db.prepared;
  await insertRows(
    conn,
    { head, columnCount, tail, rows: values, budgetBytes: db.statementBudgetBytes },
    undefined,
    ibge !== undefined && prepared ? () => prepared.admit(ibge) : undefined,
  );
}

/** Returns how many documents were new. */
async function upsertDocuments(
  db: StoreDb,
  conn: PoolConnection,
  t: MunicipalityTables,
  feed: Feed,
  runId: string,
  docs: DocumentRow[],
  counts: ApplyCounts,
): Promise<number> {
  if (docs.length === 0) return 0;
  const existing = new Map<string, Existing>();
  const [byChave] = await conn.query<RowDataPacket[]>(
    `SELECT chave, ambiente, tipo_nsu, nsu, xml_sha256 FROM ${t.documentos} WHERE chave IN (?) FOR UPDATE`,
    [docs.map((d) => d.chave)],
  );
  for (const r of byChave)
    existing.set(String(r.chave), {
      ambiente: Number(r.ambiente),
      tipoNsu: String(r.tipo_nsu),
      nsu: big(r.nsu),
      sha: String(r.xml_sha256),
    });
  const [byNsu] = await conn.query<RowDataPacket[]>(
    `SELECT chave, nsu FROM ${t.documentos} WHERE ambiente = ? AND tipo_nsu = ? AND nsu IN (?)`,
    [feed.ambiente, feed.tipoNsu, docs.map((d) => d.nsu.toString())],
  );
  const heldBy = new Map(byNsu.map((r) => [String(r.nsu), String(r.chave)]));

  const writes: unknown[][] = [];
  const aliases: unknown[][] = [];
  let inserted = 0;
  for (const d of docs) {
    const prev = existing.get(d.chave);
    if (!prev) {
      const holder = heldBy.get(d.nsu.toString());
      if (holder !== undefined && holder !== d.chave) {
        throw badRequest(`NSU ${d.nsu} of feed ${feedLabel(feed)} already holds note ${holder}, not ${d.chave}; nothing was written`);
      }
      writes.push(d.values);
      existing.set(d.chave, { ambiente: feed.ambiente, tipoNsu: feed.tipoNsu, nsu: d.nsu, sha: d.xmlSha256 });
      heldBy.set(d.nsu.toString(), d.chave);
      counts.documentsInserted++;
      inserted++;
      continue;
    }
    const sameSlot = prev.ambiente === feed.ambiente && prev.tipoNsu === feed.tipoNsu && prev.nsu === d.nsu;
    if (!sameSlot) aliases.push([feed.ibge, feed.ambiente, feed.tipoNsu, d.nsu.toString(), "documento", d.chave, runId]);
    if (prev.sha === d.xmlSha256) {
      counts.documentsUnchanged++;
      continue;
    }
    const values = [...d.values];
    values[1] = prev.ambiente;
    values[2] = prev.tipoNsu;
    values[3] = prev.nsu.toString();
    writes.push(values);
    prev.sha = d.xmlSha256;
    counts.documentsUpdated++;
  }
  await runInserts(
    db,
    conn,
    `INSERT INTO ${t.documentos} (${DOCUMENT_COLUMNS.join(", ")})`,
    DOCUMENT_COLUMNS.length,
    upsertTail(DOCUMENT_COLUMNS, DOC_FEED_COLUMNS),
    writes,
    feed.ibge,
  );
  await insertAliases(db, conn, aliases);
  return inserted;
}

async function upsertEvents(
  db: StoreDb,
  conn: PoolConnection,
  t: MunicipalityTables,
  feed: Feed,
  runId: string,
  events: EventRow[],
  counts: ApplyCounts,
): Promise<number> {
  if (events.length === 0) return 0;
  const existing = new Map<string, Existing>();
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT id_evento, ambiente, tipo_nsu, nsu, xml_sha256 FROM ${t.eventos} WHERE id_evento IN (?) FOR UPDATE`,
    [events.map((e) => e.idEvento)],
  );
  for (const r of rows)
    existing.set(String(r.id_evento), {
      ambiente: Number(r.ambiente),
      tipoNsu: String(r.tipo_nsu),
      nsu: big(r.nsu),
      sha: String(r.xml_sha256),
    });
  const writes: unknown[][] = [];
  const aliases: unknown[][] = [];
  let inserted = 0;
  for (const e of events) {
    const prev = existing.get(e.idEvento);
    if (!prev) {
      writes.push(e.values);
      existing.set(e.idEvento, { ambiente: feed.ambiente, tipoNsu: feed.tipoNsu, nsu: e.nsu, sha: e.xmlSha256 });
      counts.eventsInserted++;
      inserted++;
      continue;
    }
    const sameSlot = prev.ambiente === feed.ambiente && prev.tipoNsu === feed.tipoNsu && prev.nsu === e.nsu;
    if (!sameSlot) aliases.push([feed.ibge, feed.ambiente, feed.tipoNsu, e.nsu.toString(), "evento", e.idEvento, runId]);
    if (prev.sha === e.xmlSha256) {
      counts.eventsUnchanged++;
      continue;
    }
    const values = [...e.values];
    values[2] = prev.ambiente;
    values[3] = prev.tipoNsu;
    values[4] = prev.nsu.toString();
    writes.push(values);
    prev.sha = e.xmlSha256;
    counts.eventsUpdated++;
  }
  await runInserts(
    db,
    conn,
    `INSERT INTO ${t.eventos} (${EVENT_COLUMNS.join(", ")})`,
    EVENT_COLUMNS.length,
    upsertTail(EVENT_COLUMNS, EVENT_FEED_COLUMNS),
    writes,
    feed.ibge,
  );
  await insertAliases(db, conn, aliases);
  return inserted;
}

async function insertAliases(db: StoreDb, conn: PoolConnection, aliases: unknown[][]): Promise<void> {
  if (aliases.length === 0) return;
  await runInserts(
    db,
    conn,
    "INSERT INTO nfse_nsu_aliases (ibge, ambiente, tipo_nsu, nsu, kind, item_id, run_id)",
    7,
    "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
    aliases,
  );
}

/** Returns how many quarantine rows are new. */
async function upsertQuarantine(db: StoreDb, conn: PoolConnection, feed: Feed, faults: QuarantineRow[]): Promise<number> {
  if (faults.length === 0) return 0;
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT nsu, item_key FROM nfse_quarantine WHERE ${FEED_WHERE} AND nsu IN (?) FOR UPDATE`,
    [...feedParams(feed), faults.map((f) => f.nsu.toString())],
  );
  const known = new Set(rows.map((r) => `${String(r.nsu)}/${String(r.item_key)}`));
  let fresh = 0;
  for (const f of faults) {
    const key = `${String(f.values[3])}/${String(f.values[4])}`;
    if (!known.has(key)) fresh++;
    known.add(key);
  }
  const keep = new Set(["ibge", "ambiente", "tipo_nsu", "nsu", "item_key", "run_id"]);
  await runInserts(
    db,
    conn,
    `INSERT INTO nfse_quarantine (${QUARANTINE_COLUMNS.join(", ")})`,
    QUARANTINE_COLUMNS.length,
    upsertTail(QUARANTINE_COLUMNS, keep),
    faults.map((f) => f.values),
  );
  return fresh;
}

/** Re-derives the status of every note touched by the batch; returns how many changed. */
export async function refreshStatuses(conn: PoolConnection, t: MunicipalityTables, chaves: string[]): Promise<number> {
  const unique = [...new Set(chaves)];
  if (unique.length === 0) return 0;
  const changes: StatusChange[] = [];
  for (const [chave, note] of await notesWithEvents(conn, t, unique)) {
    const derived = deriveStatus(note.events);
    if (derived.situacao === note.situacao && derived.chaveSubstituta === note.chaveSubstituta) continue;
    changes.push({ chave, ...derived });
  }
  if (changes.length > 0) {
    const update = statusUpdate(t, changes);
    await conn.query(update.sql, update.params);
  }
  return changes.length;
}

interface NoteStatus {
  situacao: string;
  chaveSubstituta: string | null;
  /** In NSU order. */
  events: StatusEvent[];
}

/**
 * The stored notes among `chaves` with their events, read in one round trip (a note without events
 * comes back as one row with NULL event columns). The events are put in NSU order here rather than by
 * an ORDER BY across the join, which cost the server a temporary table and a filesort per batch.
 */
async function notesWithEvents(conn: PoolConnection, t: MunicipalityTables, chaves: string[]): Promise<Map<string, NoteStatus>> {
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT d.chave, d.situacao, d.chave_substituta AS note_substituta, e.nsu, e.codigo, e.chave_substituta AS event_substituta
       FROM ${t.documentos} d LEFT JOIN ${t.eventos} e ON e.chave = d.chave
      WHERE d.chave IN (?)`,
    [chaves],
  );
  const notes = new Map<string, NoteStatus>();
  const nsus = new Map<StatusEvent, bigint>();
  for (const r of rows) {
    const chave = String(r.chave);
    let note = notes.get(chave);
    if (!note) {
      note = { situacao: String(r.situacao), chaveSubstituta: (r.note_substituta as string | null) ?? null, events: [] };
      notes.set(chave, note);
    }
    if (r.codigo === null) continue;
    const event = { codigo: String(r.codigo), chaveSubstituta: (r.event_substituta as string | null) ?? null };
    note.events.push(event);
    nsus.set(event, big(r.nsu));
  }
  const byNsu = (a: StatusEvent, b: StatusEvent) => {
    const x = nsus.get(a)!;
    const y = nsus.get(b)!;
    return x < y ? -1 : x > y ? 1 : 0;
  };
  for (const note of notes.values()) if (note.events.length > 1) note.events.sort(byNsu);
  return notes;
}

interface StatusChange {
  chave: string;
  situacao: string;
  chaveSubstituta: string | null;
}

/**
 * One UPDATE for every changed note of the batch instead of one round trip each. An UPDATE (rather than
 * INSERT … ON DUPLICATE KEY UPDATE) can only ever touch notes that exist.
 */
export function statusUpdate(t: MunicipalityTables, changes: readonly StatusChange[]): SqlFragment {
  const whens = changes.map(() => "WHEN ? THEN ?").join(" ");
  const params: unknown[] = [];
  for (const c of changes) params.push(c.chave, c.situacao);
  for (const c of changes) params.push(c.chave, c.chaveSubstituta);
  for (const c of changes) params.push(c.chave);
  return {
    sql: `UPDATE ${t.documentos} SET situacao = CASE chave ${whens} END, chave_substituta = CASE chave ${whens} END
      WHERE chave IN (${changes.map(() => "?").join(", ")})`,
    params,
  };
}
