// ApplyBatch: one transaction holding the fence check, the upserts of documents, events, aliases and
// quarantine rows, the derived statuses and the cursor, in as few statements as MySQL 5.6 allows
// (docs/decisions/0035-one-statement-per-step-in-apply-batch.md): a locking read that checks the fence and
// reads the run and the cursor, one read of every stored row the page needs, one text upsert per table,
// the status UPDATE when a status changes, and one UPDATE of the feed and run rows. The first read
// refuses a stale holder before anything is written and locks the feed row, so batches of one feed are
// serialised and a newer holder's BeginRun waits for (and then sees) a batch already under way
// (docs/decisions/0008-fencing-in-mysql.md).
import type { PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { create } from "@bufbuild/protobuf";
import { ApplyCountsSchema, type ApplyCounts } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { feedLabel, type Feed } from "../codes.js";
import { badRequest, cursorOutOfRange } from "../errors.js";
import { municipalityTables, type MunicipalityTables } from "../ibge.js";
import { deriveStatus } from "../mapping/derive-status.js";
import {
  DOCUMENT_COLUMNS,
  EVENT_COLUMNS,
  QUARANTINE_COLUMNS,
  type DocumentRow,
  type EventRow,
  type ItemRow,
  type QuarantineRow,
} from "../mapping/item-rows.js";
import { big } from "../mapping/records.js";
import { buildMultiInsert } from "../sql/multi-insert.js";
import { KNOWN, knownRowsQuery } from "../sql/known-rows.js";
import type { SqlFragment } from "../sql/keyset.js";
import { inTransaction } from "../../../libs/db/tx.js";
import type { StoreDb } from "./context.js";
import { explainFencedMiss, FEED_WHERE, feedParams, parseRunId } from "./state.js";

export interface ApplyBatchInput {
  feed: Feed;
  runId: string;
  fence: bigint;
  /** The page's items as rows (mapping/item-rows.ts), in page order. */
  rows: ItemRow[];
  newCursor: bigint;
  maxNsuSeen: bigint;
}

export interface ApplyBatchResult {
  counts: ApplyCounts;
  cursor: bigint;
  cancelRequested: boolean;
}

/** The guard RecordConfirmedHoles starts with (repo/gaps.ts). Exported so the lost-update test exercises this very SQL. */
export const FENCE_GUARD_SQL = `UPDATE nfse_sync_state SET locked_at = NOW(3)
  WHERE ${FEED_WHERE} AND fence_token = ? AND current_run_id = ? AND status = 'running'`;

export async function claimFence(conn: PoolConnection, feed: Feed, runId: string, fence: bigint): Promise<void> {
  const [res] = await conn.query<ResultSetHeader>(FENCE_GUARD_SQL, [...feedParams(feed), fence.toString(), runId]);
  if (res.affectedRows !== 1) await explainFencedMiss(conn, feed, runId, fence);
}

/**
 * The fence check, the run row and the feed's stored cursor in one locking read. A locking read sees the
 * committed row, as the conditional UPDATE does: a stale holder matches nothing here and writes nothing
 * after it; a current one holds the feed row's lock (and the run's) until it commits, so one feed's
 * batches stay serialised (decisions 0008 and 0035).
 */
export const FENCED_RUN_SQL = `SELECT r.trigger_kind, r.cancel_requested_at, s.last_nsu
  FROM nfse_sync_state s JOIN nfse_sync_runs r ON r.id = s.current_run_id
  WHERE s.ibge = ? AND s.ambiente = ? AND s.tipo_nsu = ? AND s.fence_token = ? AND s.current_run_id = ? AND s.status = 'running'
  FOR UPDATE`;

async function claimFencedRun(conn: PoolConnection, feed: Feed, runId: string, fence: bigint): Promise<RowDataPacket> {
  const [rows] = await conn.query<RowDataPacket[]>(FENCED_RUN_SQL, [...feedParams(feed), fence.toString(), parseRunId(runId)]);
  if (!rows[0]) await explainFencedMiss(conn, feed, runId, fence);
  return rows[0]!;
}

/** Test hook: called inside the transaction after the rows are written, before the cursor moves. */
export type ApplyHook = (conn: PoolConnection) => Promise<void>;

export async function applyBatch(db: StoreDb, input: ApplyBatchInput, hook?: ApplyHook): Promise<ApplyBatchResult> {
  const { feed } = input;
  const tables = municipalityTables(feed.ibge);
  const rows = input.rows;
  const docs = rows.filter((r): r is DocumentRow => r.kind === "document");
  const events = rows.filter((r): r is EventRow => r.kind === "event");
  const faults = rows.filter((r): r is QuarantineRow => r.kind === "fault");
  const highestItemNsu = rows.reduce((m, r) => (r.nsu > m ? r.nsu : m), 0n);

  return inTransaction(db.pool, async (conn) => {
    const run = await claimFencedRun(conn, feed, input.runId, input.fence);
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

    const known = await readKnown(conn, tables, feed, docs, events, faults);
    const counts = create(ApplyCountsSchema, {});
    const docPlan = planDocuments(known, feed, input.runId, docs, counts);
    const eventPlan = planEvents(known, feed, input.runId, events, counts);
    const newFaults = countNewFaults(known, faults);
    counts.faults = faults.length;
    await upsert(
      db,
      conn,
      `INSERT INTO ${tables.documentos} (${DOCUMENT_COLUMNS.join(", ")})`,
      DOCUMENT_COLUMNS.length,
      DOCUMENT_TAIL,
      docPlan.writes,
    );
    await upsert(
      db,
      conn,
      `INSERT INTO ${tables.eventos} (${EVENT_COLUMNS.join(", ")})`,
      EVENT_COLUMNS.length,
      EVENT_TAIL,
      eventPlan.writes,
    );
    await upsert(db, conn, ALIAS_HEAD, 7, ALIAS_TAIL, [...docPlan.aliases, ...eventPlan.aliases]);
    await upsert(
      db,
      conn,
      `INSERT INTO nfse_quarantine (${QUARANTINE_COLUMNS.join(", ")})`,
      QUARANTINE_COLUMNS.length,
      QUARANTINE_TAIL,
      faults.map((f) => f.values),
    );
    const changes = statusChanges(known, docs, events);
    counts.statusChanges = changes.length;
    if (changes.length > 0) {
      const update = statusUpdate(tables, changes);
      await conn.query(update.sql, update.params);
    }
    if (hook) await hook(conn);

    const cursorParam = reconciliation ? "0" : input.newCursor.toString();
    const maxSeen = input.maxNsuSeen > highestItemNsu ? input.maxNsuSeen : highestItemNsu;
    const cursor = reconciliation ? stored : input.newCursor > stored ? input.newCursor : stored;
    // Both rows are locked since claimFencedRun; the fence is in the WHERE all the same, so that this
    // statement on its own can never move a cursor for a stale holder. locked_at is the run's heartbeat
    // (the watchdog in runs.ts expires a run whose feed row it stops moving).
    const [upd] = await conn.query<ResultSetHeader>(
      `UPDATE nfse_sync_state s, nfse_sync_runs r
          SET s.locked_at = NOW(3), s.last_nsu = GREATEST(s.last_nsu, ?), s.max_nsu = GREATEST(s.max_nsu, ?),
              s.documents_total = s.documents_total + ?, s.events_total = s.events_total + ?, s.faults_total = s.faults_total + ?,
              r.to_nsu = ?, r.max_nsu_seen = GREATEST(r.max_nsu_seen, ?), r.batches = r.batches + 1,
              r.documents = r.documents + ?, r.documents_updated = r.documents_updated + ?, r.events = r.events + ?,
              r.events_updated = r.events_updated + ?, r.faults = r.faults + ?, r.last_progress_at = NOW(3)
        WHERE s.ibge = ? AND s.ambiente = ? AND s.tipo_nsu = ? AND s.fence_token = ? AND r.id = ?`,
      [
        cursorParam,
        maxSeen.toString(),
        docPlan.inserted,
        eventPlan.inserted,
        newFaults,
        cursor.toString(),
        maxSeen.toString(),
        counts.documentsInserted,
        counts.documentsUpdated,
        counts.eventsInserted,
        counts.eventsUpdated,
        counts.faults,
        ...feedParams(feed),
        input.fence.toString(),
        input.runId,
      ],
    );
    if (upd.affectedRows === 0) await explainFencedMiss(conn, feed, input.runId, input.fence);
    return { counts, cursor, cancelRequested: run.cancel_requested_at instanceof Date };
  });
}

interface Existing {
  ambiente: number;
  tipoNsu: string;
  nsu: bigint;
  sha: string;
}

interface StoredEvent {
  chave: string;
  nsu: bigint;
  codigo: string;
  chaveSubstituta: string | null;
}

/** The stored rows a page needs, from knownRowsQuery's one statement. */
interface Known {
  documents: Map<string, Existing>;
  /** NSU → chave of the feed's documents at the page documents' NSUs. */
  nsuHolders: Map<string, string>;
  events: Map<string, Existing>;
  /** chave → the note's stored situacao and substituta, for every note the page touches that exists. */
  notes: Map<string, { situacao: string; chaveSubstituta: string | null }>;
  /** id_evento → the stored events of the notes the page touches. */
  noteEvents: Map<string, StoredEvent>;
  /** nsu/item_key of the stored quarantine rows at the page faults' NSUs. */
  faults: Set<string>;
}

async function readKnown(
  conn: PoolConnection,
  t: MunicipalityTables,
  feed: Feed,
  docs: DocumentRow[],
  events: EventRow[],
  faults: QuarantineRow[],
): Promise<Known> {
  const known: Known = {
    documents: new Map(),
    nsuHolders: new Map(),
    events: new Map(),
    notes: new Map(),
    noteEvents: new Map(),
    faults: new Set(),
  };
  const documentChaves = [...new Set(docs.map((d) => d.chave))];
  const inPage = new Set(documentChaves);
  const query = knownRowsQuery(t, feed, {
    documentChaves,
    documentNsus: [...new Set(docs.map((d) => d.nsu.toString()))],
    eventOnlyChaves: [...new Set(events.map((e) => e.chave).filter((c) => !inPage.has(c)))],
    idEventos: [...new Set(events.map((e) => e.idEvento))],
    faultNsus: [...new Set(faults.map((f) => f.nsu.toString()))],
  });
  if (!query) return known;
  const [rows] = await conn.query<RowDataPacket[]>(query.sql, query.params);
  for (const r of rows) {
    const k = Number(r.k);
    const existing = () => ({ ambiente: Number(r.ambiente), tipoNsu: String(r.tipo_nsu), nsu: big(r.nsu), sha: String(r.sha) });
    const substituta = (r.substituta as string | null) ?? null;
    if (k === KNOWN.document) {
      known.documents.set(String(r.id), existing());
      known.notes.set(String(r.id), { situacao: String(r.situacao), chaveSubstituta: substituta });
    } else if (k === KNOWN.nsuHolder) known.nsuHolders.set(String(r.nsu), String(r.chave));
    else if (k === KNOWN.note) known.notes.set(String(r.id), { situacao: String(r.situacao), chaveSubstituta: substituta });
    else if (k === KNOWN.event) known.events.set(String(r.id), existing());
    else if (k === KNOWN.noteEvent)
      known.noteEvents.set(String(r.id), {
        chave: String(r.chave),
        nsu: big(r.nsu),
        codigo: String(r.codigo),
        chaveSubstituta: substituta,
      });
    else if (k === KNOWN.fault) known.faults.add(`${String(r.nsu)}/${String(r.id)}`);
  }
  return known;
}

interface Plan {
  /** Rows for the table's upsert, in page order. */
  writes: unknown[][];
  aliases: unknown[][];
  /** How many items were new. */
  inserted: number;
}

const DOC_FEED_COLUMNS = new Set(["chave", "ambiente", "tipo_nsu", "nsu"]);
const EVENT_FEED_COLUMNS = new Set(["id_evento", "ambiente", "tipo_nsu", "nsu"]);

function upsertTail(columns: readonly string[], keep: Set<string>): string {
  // The first (feed, NSU) of an item is kept; everything else follows the latest distribution.
  const sets = columns.filter((c) => !keep.has(c)).map((c) => `${c} = VALUES(${c})`);
  return `ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), ${sets.join(", ")}`;
}

const DOCUMENT_TAIL = upsertTail(DOCUMENT_COLUMNS, DOC_FEED_COLUMNS);
const EVENT_TAIL = upsertTail(EVENT_COLUMNS, EVENT_FEED_COLUMNS);
const QUARANTINE_TAIL = upsertTail(QUARANTINE_COLUMNS, new Set(["ibge", "ambiente", "tipo_nsu", "nsu", "item_key", "run_id"]));
const ALIAS_HEAD = "INSERT INTO nfse_nsu_aliases (ibge, ambiente, tipo_nsu, nsu, kind, item_id, run_id)";
const ALIAS_TAIL = "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)";

/**
 * One text multi-row statement per table per page, cut only where the statement byte budget (fitted to
 * max_allowed_packet) requires (decision 0035, superseding 0005's 8-row prepared statements).
 */
async function upsert(db: StoreDb, conn: PoolConnection, head: string, columnCount: number, tail: string, rows: unknown[][]) {
  if (rows.length === 0) return;
  for (const stmt of buildMultiInsert({ head, columnCount, tail, rows, budgetBytes: db.statementBudgetBytes })) {
    await conn.query(stmt.sql, stmt.params);
  }
}

function planDocuments(known: Known, feed: Feed, runId: string, docs: DocumentRow[], counts: ApplyCounts): Plan {
  const plan: Plan = { writes: [], aliases: [], inserted: 0 };
  const existing = known.documents;
  const heldBy = known.nsuHolders;
  for (const d of docs) {
    const prev = existing.get(d.chave);
    if (!prev) {
      const holder = heldBy.get(d.nsu.toString());
      if (holder !== undefined && holder !== d.chave) {
        throw badRequest(`NSU ${d.nsu} of feed ${feedLabel(feed)} already holds note ${holder}, not ${d.chave}; nothing was written`);
      }
      plan.writes.push(d.values);
      existing.set(d.chave, { ambiente: feed.ambiente, tipoNsu: feed.tipoNsu, nsu: d.nsu, sha: d.xmlSha256 });
      heldBy.set(d.nsu.toString(), d.chave);
      counts.documentsInserted++;
      plan.inserted++;
      continue;
    }
    const sameSlot = prev.ambiente === feed.ambiente && prev.tipoNsu === feed.tipoNsu && prev.nsu === d.nsu;
    if (!sameSlot) plan.aliases.push([feed.ibge, feed.ambiente, feed.tipoNsu, d.nsu.toString(), "documento", d.chave, runId]);
    if (prev.sha === d.xmlSha256) {
      counts.documentsUnchanged++;
      continue;
    }
    const values = [...d.values];
    values[1] = prev.ambiente;
    values[2] = prev.tipoNsu;
    values[3] = prev.nsu.toString();
    plan.writes.push(values);
    prev.sha = d.xmlSha256;
    counts.documentsUpdated++;
  }
  return plan;
}

function planEvents(known: Known, feed: Feed, runId: string, events: EventRow[], counts: ApplyCounts): Plan {
  const plan: Plan = { writes: [], aliases: [], inserted: 0 };
  const existing = known.events;
  for (const e of events) {
    const prev = existing.get(e.idEvento);
    if (!prev) {
      plan.writes.push(e.values);
      existing.set(e.idEvento, { ambiente: feed.ambiente, tipoNsu: feed.tipoNsu, nsu: e.nsu, sha: e.xmlSha256 });
      counts.eventsInserted++;
      plan.inserted++;
      continue;
    }
    const sameSlot = prev.ambiente === feed.ambiente && prev.tipoNsu === feed.tipoNsu && prev.nsu === e.nsu;
    if (!sameSlot) plan.aliases.push([feed.ibge, feed.ambiente, feed.tipoNsu, e.nsu.toString(), "evento", e.idEvento, runId]);
    if (prev.sha === e.xmlSha256) {
      counts.eventsUnchanged++;
      continue;
    }
    const values = [...e.values];
    values[2] = prev.ambiente;
    values[3] = prev.tipoNsu;
    values[4] = prev.nsu.toString();
    plan.writes.push(values);
    prev.sha = e.xmlSha256;
    counts.eventsUpdated++;
  }
  return plan;
}

/** How many of the page's quarantine rows are new (a fault repeated within the page counts once). */
function countNewFaults(known: Known, faults: QuarantineRow[]): number {
  let fresh = 0;
  for (const f of faults) {
    const key = `${String(f.values[3])}/${String(f.values[4])}`;
    if (!known.faults.has(key)) fresh++;
    known.faults.add(key);
  }
  return fresh;
}

/**
 * The status of every note the page touched, derived from what the page's upserts leave stored: the
 * stored events of its notes with the page's events written over them (an event keeps its first NSU, the
 * rest follows the latest distribution, as the upsert does), without reading them back (decision 0035).
 * A note new in this page starts as the column default, ATIVA without substituta.
 */
function statusChanges(known: Known, docs: DocumentRow[], events: EventRow[]): StatusChange[] {
  const notes = new Map(known.notes);
  for (const d of docs) if (!notes.has(d.chave)) notes.set(d.chave, { situacao: "ATIVA", chaveSubstituta: null });
  const stored = known.noteEvents;
  for (const e of events) {
    const prev = stored.get(e.idEvento);
    const nsu = prev?.nsu ?? known.events.get(e.idEvento)?.nsu ?? e.nsu;
    stored.set(e.idEvento, { chave: e.chave, nsu, codigo: e.codigo, chaveSubstituta: e.chaveSubstituta });
  }
  const byNote = new Map<string, StoredEvent[]>();
  for (const e of stored.values()) {
    if (!notes.has(e.chave)) continue;
    const list = byNote.get(e.chave);
    if (list) list.push(e);
    else byNote.set(e.chave, [e]);
  }
  const changes: StatusChange[] = [];
  for (const [chave, note] of notes) {
    const noteEvents = byNote.get(chave) ?? [];
    // In NSU order: the first substitution by NSU names the replacement.
    if (noteEvents.length > 1) noteEvents.sort((a, b) => (a.nsu < b.nsu ? -1 : a.nsu > b.nsu ? 1 : 0));
    const derived = deriveStatus(noteEvents);
    if (derived.situacao === note.situacao && derived.chaveSubstituta === note.chaveSubstituta) continue;
    changes.push({ chave, ...derived });
  }
  return changes;
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
