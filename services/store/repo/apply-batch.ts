// ApplyBatch: one transaction holding the fence check, the upserts of documents, events, aliases and
// quarantine rows, the derived statuses and the cursor, in as few statements as MySQL 5.6 allows
// (docs/decisions/0035-one-statement-per-step-in-apply-batch.md): a locking read that checks the fence and
// reads the run and the cursor, one read of every stored row the page needs, one text upsert per table,
// the status UPDATE when a status changes, and one UPDATE of the feed and run rows, the writes sent in
// one round trip (docs/decisions/0059-a-page-s-writes-in-one-round-trip.md). The first read
// refuses a stale holder before anything is written and locks the feed row, so batches of one feed are
// serialised and a newer holder's BeginRun waits for (and then sees) a batch already under way
// (docs/decisions/0008-fencing-in-mysql.md).
import type { PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ApplyCountsSchema, type ApplyCounts } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { feedLabel, type Feed } from "../codes.js";
import { badRequest, cursorOutOfRange, predecessorNotApplied } from "../errors.js";
import { municipalityTables, type MunicipalityTables } from "../ibge.js";
import { deriveStatus } from "../mapping/derive-status.js";
import {
  DOCUMENT_COLUMNS,
  DOCUMENT_SLOT,
  EVENT_COLUMNS,
  EVENT_SLOT,
  QUARANTINE_COLUMNS,
  type DocumentRow,
  type EventRow,
  type ItemRow,
  type QuarantineRow,
} from "../mapping/item-rows.js";
import { big } from "../mapping/records.js";
import { buildMultiInsert, isRendered, type RowValues, withSlotValues } from "../sql/multi-insert.js";
import { KNOWN, knownRowsQuery } from "../sql/known-rows.js";
import type { SqlFragment } from "../sql/keyset.js";
import { BEGIN_STATEMENT, COMMIT_STATEMENT, inTransaction, workCommitted } from "../../../libs/db/tx.js";
import type { EntryOutcome } from "./begin-runs.js";
import type { StoreDb } from "./context.js";
import { valuesTable } from "./feed-rows.js";
import { explainFencedMiss, FEED_WHERE, feedParams, parseRunId } from "./state.js";
import { queryStatements } from "../../../libs/db/statement-bytes.js";
import { formatQuery } from "../../../libs/db/sql-text.js";

export interface ApplyBatchInput {
  feed: Feed;
  runId: string;
  fence: bigint;
  /** The page's items as rows (mapping/item-rows.ts), in page order. */
  rows: ItemRow[];
  newCursor: bigint;
  maxNsuSeen: bigint;
  /** Set for a page sent before the answer for the page before it: the cursor that page leaves (decision 0052). */
  followsCursor?: bigint;
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

/** Test hook: called inside the transaction after the rows are written, before the cursor moves. */
export type ApplyHook = (conn: PoolConnection) => Promise<void>;

/** ApplyBatch of one page: ApplyBatches with one entry, its refusal thrown. */
export async function applyBatch(db: StoreDb, input: ApplyBatchInput, hook?: ApplyHook): Promise<ApplyBatchResult> {
  const [outcome] = await applyBatches(db, [input], hook);
  if (!outcome!.ok) throw outcome!.error;
  return outcome!.value;
}

/**
 * The pages of many runs, one transaction per round of distinct municipalities
 * (docs/decisions/0040-pages-of-many-feeds-in-one-transaction.md): pages of one municipality share its
 * tables, so the second one's plan must see the first one's rows; it goes in the next round (so do a
 * run's later pages, which follow its earlier ones: decision 0052). One outcome
 * per input, in order. A round that fails as a whole (a deadlock past its retries, a statement the
 * server refused) is applied again entry by entry, so that each entry gets its own answer; an error of
 * the database itself (unavailable) is thrown.
 */
export async function applyBatches(
  db: StoreDb,
  inputs: readonly ApplyBatchInput[],
  hook?: ApplyHook,
): Promise<EntryOutcome<ApplyBatchResult>[]> {
  const out: EntryOutcome<ApplyBatchResult>[] = new Array(inputs.length);
  // ApplyBatch throws what its page fails with; in a batch, a page that fails alone gets its own answer.
  const alone = (e: Entry) => {
    const applied = applyAlone(db, e.input, hook);
    return inputs.length === 1 ? applied : applied.catch(failedAlone);
  };
  let rest = inputs.map((input, index) => ({ input, index }));
  while (rest.length > 0) {
    const round: Entry[] = [];
    const later: Entry[] = [];
    const municipalities = new Set<string>();
    for (const e of rest) {
      if (municipalities.has(e.input.feed.ibge)) later.push(e);
      else {
        municipalities.add(e.input.feed.ibge);
        round.push(e);
      }
    }
    if (round.length === 1) out[round[0]!.index] = await alone(round[0]!);
    else {
      let outcomes: EntryOutcome<ApplyBatchResult>[] | undefined;
      try {
        outcomes = await inTransaction(db.pool, (conn) => applyRound(db, conn, round, hook), ROUND_TX);
      } catch (err) {
        // The database itself failed: so would every entry alone.
        if (err instanceof ConnectError && err.code === Code.Unavailable) throw err;
      }
      if (outcomes) round.forEach((e, i) => (out[e.index] = outcomes[i]!));
      else for (const e of round) out[e.index] = await alone(e);
    }
    rest = later;
  }
  return out;
}

interface Entry {
  input: ApplyBatchInput;
  index: number;
}

/** One page in a transaction of its own: its refusal, or any other error thrown. */
async function applyAlone(db: StoreDb, input: ApplyBatchInput, hook?: ApplyHook): Promise<EntryOutcome<ApplyBatchResult>> {
  try {
    const [outcome] = await inTransaction(db.pool, (conn) => applyRound(db, conn, [{ input, index: 0 }], hook), ROUND_TX);
    return outcome!;
  } catch (err) {
    if (err instanceof ConnectError && err.code !== Code.Unavailable) return { ok: false, error: err };
    throw err;
  }
}

/**
 * A page of a batch that failed on its own for a reason that is not a refusal (a statement the server
 * refused, a bug): its answer, not the call's, since the batch's other pages may have committed. Its
 * transaction rolled back. The cause stays on the error for the handler's log; the caller sees INTERNAL.
 */
function failedAlone(err: unknown): EntryOutcome<never> {
  if (err instanceof ConnectError && err.code === Code.Unavailable) throw err;
  const error = new ConnectError(
    "the store could not apply this page; nothing of it was written",
    Code.Internal,
    undefined,
    undefined,
    err,
  );
  return { ok: false, error };
}

/** A page of the round, split by kind of row. */
interface Page {
  input: ApplyBatchInput;
  tables: MunicipalityTables;
  docs: DocumentRow[];
  events: EventRow[];
  faults: QuarantineRow[];
  highestItemNsu: bigint;
}

function pageOf(input: ApplyBatchInput): Page {
  const rows = input.rows;
  return {
    input,
    tables: municipalityTables(input.feed.ibge),
    docs: rows.filter((r): r is DocumentRow => r.kind === "document"),
    events: rows.filter((r): r is EventRow => r.kind === "event"),
    faults: rows.filter((r): r is QuarantineRow => r.kind === "fault"),
    highestItemNsu: rows.reduce((m, r) => (r.nsu > m ? r.nsu : m), 0n),
  };
}

/** A page admitted by the fence check, with what the rest of its transaction needs. */
interface Admitted extends Page {
  at: number;
  run: RowDataPacket;
  stored: bigint;
  reconciliation: boolean;
  counts?: ApplyCounts;
  docPlan?: Plan;
  eventPlan?: Plan;
  newFaults?: number;
  changes?: StatusChange[];
}

/** Refusals of one page become its outcome; anything else ends the transaction. */
function refusal(err: unknown): EntryOutcome<never> {
  if (err instanceof ConnectError && err.code !== Code.Unavailable && err.code !== Code.Internal) return { ok: false, error: err };
  throw err;
}

/**
 * The pages of distinct municipalities in the caller's transaction, each step one statement for all of
 * them where the tables allow: the fence check, the reads of stored rows, the quarantine and alias
 * upserts, the feed and run rows; per municipality, its documents' and events' upserts and status UPDATE.
 */
async function applyRound(
  db: StoreDb,
  conn: PoolConnection,
  entries: readonly Entry[],
  hook?: ApplyHook,
): Promise<EntryOutcome<ApplyBatchResult>[]> {
  const out: EntryOutcome<ApplyBatchResult>[] = new Array(entries.length);
  const pages = entries.map((e) => pageOf(e.input));
  // The fence check and the stored rows of every page in one round trip (decision 0059): the server reads
  // the stored rows once it holds the feed rows' locks, as when the two were sent one after the other. A
  // page the fence check refuses ignores its rows.
  const [runs, knownOfPage] = await claimAndReadKnown(conn, pages);
  const admitted: Admitted[] = [];
  const known: Known[] = [];
  for (let at = 0; at < entries.length; at++) {
    const page = pages[at]!;
    const input = page.input;
    const run = runs[at];
    if (!run) {
      out[at] = await explainFencedMiss(conn, input.feed, input.runId, input.fence).catch(refusal);
      continue;
    }
    const a: Admitted = {
      ...page,
      at,
      run,
      stored: big(run.last_nsu),
      reconciliation: run.trigger_kind === "reconciliation",
    };
    if (input.followsCursor !== undefined && input.followsCursor !== a.stored) {
      out[at] = refusal(predecessorNotApplied(input.runId, input.followsCursor, a.stored));
      continue;
    }
    if (!a.reconciliation) {
      const allowed = a.highestItemNsu > a.stored ? a.highestItemNsu : a.stored;
      if (input.newCursor > allowed) {
        out[at] = refusal(
          cursorOutOfRange(
            `new_cursor ${input.newCursor} is beyond both the stored cursor ${a.stored} and the highest NSU in the batch ${a.highestItemNsu}`,
          ),
        );
        continue;
      }
    }
    admitted.push(a);
    known.push(knownOfPage[at]!);
  }

  const planned: Admitted[] = [];
  for (const [i, a] of admitted.entries()) {
    try {
      const rows = known[i]!;
      a.counts = create(ApplyCountsSchema, {});
      a.docPlan = planDocuments(rows, a.input.feed, a.input.runId, a.docs, a.counts);
      a.eventPlan = planEvents(rows, a.input.feed, a.input.runId, a.events, a.counts);
      a.newFaults = countNewFaults(rows, a.faults);
      a.counts.faults = a.faults.length;
      a.changes = statusChanges(rows, a.docs, a.events);
      a.counts.statusChanges = a.changes.length;
      planned.push(a);
    } catch (err) {
      out[a.at] = refusal(err);
    }
  }

  // Every write of the round in one round trip where the budget allows (decision 0059): the rows, the
  // statuses and the cursors, in the order they were sent one by one before.
  const writes: Buffer[] = [];
  const budget = db.statementBudgetBytes;
  for (const a of planned) {
    writes.push(
      ...upserts(
        `INSERT INTO ${a.tables.documentos} (${DOCUMENT_COLUMNS.join(", ")})`,
        DOCUMENT_COLUMNS.length,
        DOCUMENT_TAIL,
        a.docPlan!.writes,
        budget,
      ),
      ...upserts(
        `INSERT INTO ${a.tables.eventos} (${EVENT_COLUMNS.join(", ")})`,
        EVENT_COLUMNS.length,
        EVENT_TAIL,
        a.eventPlan!.writes,
        budget,
      ),
    );
  }
  writes.push(
    ...upserts(
      ALIAS_HEAD,
      7,
      ALIAS_TAIL,
      planned.flatMap((a) => [...a.docPlan!.aliases, ...a.eventPlan!.aliases]),
      budget,
    ),
    ...upserts(
      `INSERT INTO nfse_quarantine (${QUARANTINE_COLUMNS.join(", ")})`,
      QUARANTINE_COLUMNS.length,
      QUARANTINE_TAIL,
      planned.flatMap((a) => a.faults.map((f) => f.values)),
      budget,
    ),
  );
  for (const a of planned) {
    if (a.changes!.length === 0) continue;
    const update = statusUpdate(a.tables, a.changes!);
    writes.push(Buffer.from(formatQuery(update.sql, update.params)));
  }
  if (hook) {
    await queryStatements(conn, writes.splice(0), budget);
    await hook(conn);
  }
  if (planned.length === 0) return out;

  const cursors = planned.map((a) => (a.reconciliation ? a.stored : a.input.newCursor > a.stored ? a.input.newCursor : a.stored));
  // The round commits with its writes (decision 0068): the guard stops the query before the COMMIT when the
  // feed and run UPDATE moved fewer rows than there are pages. Every run row changes (batches + 1) and the
  // rows are locked, so fewer is a bug, and rolls the round back.
  writes.push(cursorsUpdate(planned, cursors), movedGuard(planned.length), COMMIT);
  try {
    await queryStatements(conn, writes, budget);
  } catch (err) {
    if ((err as { code?: unknown }).code === "ER_SUBQUERY_NO_1_ROW")
      throw new Error(`ApplyBatches moved fewer rows than its ${planned.length} pages; nothing of the round was committed`);
    throw err;
  }
  workCommitted(conn);
  planned.forEach((a, i) => {
    out[a.at] = { ok: true, value: { counts: a.counts!, cursor: cursors[i]!, cancelRequested: a.run.cancel_requested_at instanceof Date } };
  });
  return out;
}

/**
 * The fence check, the run row and the feed's stored cursor of every page in one locking read. A
 * locking read sees the committed row, as the conditional UPDATE does: a stale holder matches nothing
 * here and writes nothing after it; a current one holds the feed row's lock (and the run's) until it
 * commits, so one feed's batches stay serialised (decisions 0008 and 0035). The feed index is forced: with
 * many pages against a table of few running feeds the optimizer chose a scan of the whole table or of its
 * status index, and a locking read locks every row it scans, so concurrent rounds of other feeds waited on
 * each other and deadlocked with their cursor UPDATEs (bench/README.md, "2026-12-04 20:30–").
 */
function claimQuery(inputs: readonly ApplyBatchInput[]): SqlFragment {
  return {
    sql: `SELECT r.id, r.trigger_kind, r.cancel_requested_at, s.last_nsu
       FROM nfse_sync_state s FORCE INDEX (uq_nfse_sync_state_feed) JOIN nfse_sync_runs r ON r.id = s.current_run_id
      WHERE (${inputs.map(() => "(s.ibge = ? AND s.ambiente = ? AND s.tipo_nsu = ? AND s.fence_token = ? AND s.current_run_id = ?)").join(" OR ")})
        AND s.status = 'running'
        FOR UPDATE`,
    params: inputs.flatMap((input) => [...feedParams(input.feed), input.fence.toString(), parseRunId(input.runId)]),
  };
}

/** A round's transaction is opened by its first query (claimAndReadKnown). */
const ROUND_TX = { workBegins: true } as const;

/**
 * Opens the round's transaction, and returns the fence check's row of each page (undefined where it does
 * not hold) and what each page needs of the stored rows: three statements, one round trip.
 */
async function claimAndReadKnown(conn: PoolConnection, pages: readonly Page[]): Promise<[(RowDataPacket | undefined)[], Known[]]> {
  const claim = claimQuery(pages.map((p) => p.input));
  const known = knownQuery(pages);
  const sql = [BEGIN_STATEMENT, claim.sql, ...(known ? [known.sql] : [])].join(";\n");
  const [results] = await conn.query<RowDataPacket[][]>(sql, [...claim.params, ...(known?.params ?? [])]);
  return [runsInOrder(pages, results[1]!), known ? parseKnown(results[2]!, pages.length) : pages.map(noneKnown)];
}

function runsInOrder(pages: readonly Page[], rows: RowDataPacket[]): (RowDataPacket | undefined)[] {
  const byRun = new Map(rows.map((r) => [String(r.id), r]));
  return pages.map((p) => byRun.get(parseRunId(p.input.runId)));
}

const COMMIT = Buffer.from(COMMIT_STATEMENT);

/** Fails (ER_SUBQUERY_NO_1_ROW) when the statement before it changed fewer than `rows` rows; a result of one row otherwise. */
export function movedGuard(rows: number): Buffer {
  if (!Number.isSafeInteger(rows) || rows < 1) throw new RangeError(`movedGuard: rows must be a positive integer, not ${rows}`);
  return Buffer.from(`SELECT (SELECT 1 FROM DUAL UNION ALL SELECT 2 FROM DUAL WHERE ROW_COUNT() < ${rows}) AS moved_guard`);
}

/**
 * The feed and run rows of every page in one UPDATE. Both rows of each are locked since
 * claimQuery's read; the fence is in the statement all the same, so that on its own it can never move a
 * cursor for a stale holder. locked_at is the run's heartbeat (the watchdog in runs.ts expires a run
 * whose feed row it stops moving).
 */
function cursorsUpdate(planned: readonly Admitted[], cursors: readonly bigint[]): Buffer {
  const v = valuesTable(
    [
      "ibge",
      "ambiente",
      "tipo_nsu",
      "fence",
      "run_id",
      "last_nsu",
      "max_seen",
      "to_nsu",
      "docs_new",
      "events_new",
      "faults_new",
      "di",
      "du",
      "ei",
      "eu",
      "f",
    ],
    planned.map((a, i) => {
      const maxSeen = a.input.maxNsuSeen > a.highestItemNsu ? a.input.maxNsuSeen : a.highestItemNsu;
      const c = a.counts!;
      return [
        ...feedParams(a.input.feed),
        a.input.fence.toString(),
        a.input.runId,
        a.reconciliation ? "0" : a.input.newCursor.toString(),
        maxSeen.toString(),
        cursors[i]!.toString(),
        a.docPlan!.inserted,
        a.eventPlan!.inserted,
        a.newFaults!,
        c.documentsInserted,
        c.documentsUpdated,
        c.eventsInserted,
        c.eventsUpdated,
        c.faults,
      ];
    }),
  );
  return Buffer.from(
    formatQuery(
      `UPDATE nfse_sync_state s
       JOIN (${v.sql}) v ON s.ibge = v.ibge AND s.ambiente = v.ambiente AND s.tipo_nsu = v.tipo_nsu
       JOIN nfse_sync_runs r ON r.id = CAST(v.run_id AS UNSIGNED)
        SET s.locked_at = NOW(3), s.last_nsu = GREATEST(s.last_nsu, CAST(v.last_nsu AS UNSIGNED)),
            s.max_nsu = GREATEST(s.max_nsu, CAST(v.max_seen AS UNSIGNED)),
            s.documents_total = s.documents_total + v.docs_new, s.events_total = s.events_total + v.events_new,
            s.faults_total = s.faults_total + v.faults_new,
            r.to_nsu = CAST(v.to_nsu AS UNSIGNED), r.max_nsu_seen = GREATEST(r.max_nsu_seen, CAST(v.max_seen AS UNSIGNED)),
            r.batches = r.batches + 1, r.documents = r.documents + v.di, r.documents_updated = r.documents_updated + v.du,
            r.events = r.events + v.ei, r.events_updated = r.events_updated + v.eu, r.faults = r.faults + v.f,
            r.last_progress_at = NOW(3)
      WHERE s.fence_token = CAST(v.fence AS UNSIGNED)`,
      v.params,
    ),
  );
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

const noneKnown = (): Known => ({
  documents: new Map(),
  nsuHolders: new Map(),
  events: new Map(),
  notes: new Map(),
  noteEvents: new Map(),
  faults: new Set(),
});

/** What every page needs of the stored rows, in one statement tagged by page; undefined when no page needs any. */
function knownQuery(pages: readonly Page[]): SqlFragment | undefined {
  const sql: string[] = [];
  const params: unknown[] = [];
  pages.forEach((p, i) => {
    const documentChaves = [...new Set(p.docs.map((d) => d.chave))];
    const inPage = new Set(documentChaves);
    const query = knownRowsQuery(
      p.tables,
      p.input.feed,
      {
        documentChaves,
        documentNsus: [...new Set(p.docs.map((d) => d.nsu.toString()))],
        eventOnlyChaves: [...new Set(p.events.map((e) => e.chave).filter((c) => !inPage.has(c)))],
        idEventos: [...new Set(p.events.map((e) => e.idEvento))],
        faultNsus: [...new Set(p.faults.map((f) => f.nsu.toString()))],
      },
      i,
    );
    if (!query) return;
    sql.push(query.sql);
    params.push(...query.params);
  });
  return sql.length === 0 ? undefined : { sql: sql.join(" UNION ALL "), params };
}

/** knownQuery's rows as one Known per page, in order. */
function parseKnown(rows: readonly RowDataPacket[], pageCount: number): Known[] {
  const known = Array.from({ length: pageCount }, noneKnown);
  for (const r of rows) {
    const page = known[Number(r.f)]!;
    const k = Number(r.k);
    const existing = () => ({ ambiente: Number(r.ambiente), tipoNsu: String(r.tipo_nsu), nsu: big(r.nsu), sha: String(r.sha) });
    const substituta = (r.substituta as string | null) ?? null;
    if (k === KNOWN.document) {
      page.documents.set(String(r.id), existing());
      page.notes.set(String(r.id), { situacao: String(r.situacao), chaveSubstituta: substituta });
    } else if (k === KNOWN.nsuHolder) page.nsuHolders.set(String(r.nsu), String(r.chave));
    else if (k === KNOWN.note) page.notes.set(String(r.id), { situacao: String(r.situacao), chaveSubstituta: substituta });
    else if (k === KNOWN.event) page.events.set(String(r.id), existing());
    else if (k === KNOWN.noteEvent)
      page.noteEvents.set(String(r.id), {
        chave: String(r.chave),
        nsu: big(r.nsu),
        codigo: String(r.codigo),
        chaveSubstituta: substituta,
      });
    else if (k === KNOWN.fault) page.faults.add(`${String(r.nsu)}/${String(r.id)}`);
  }
  return known;
}

interface Plan {
  /** Rows for the table's upsert, in page order. */
  writes: RowValues[];
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
function upserts(head: string, columnCount: number, tail: string, rows: readonly RowValues[], budgetBytes: number): Buffer[] {
  return rows.length === 0 ? [] : buildMultiInsert({ head, columnCount, tail, rows, budgetBytes });
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
    plan.writes.push(keepSlot(d.values, DOCUMENT_SLOT, prev));
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
    plan.writes.push(keepSlot(e.values, EVENT_SLOT, prev));
    prev.sha = e.xmlSha256;
    counts.eventsUpdated++;
  }
  return plan;
}

/** The row with the feed slot (ambiente, tipo_nsu, nsu) of the stored item: an update keeps its first distribution. */
function keepSlot(values: RowValues, slot: readonly [number, number], prev: Existing): RowValues {
  const stored = [prev.ambiente, prev.tipoNsu, prev.nsu.toString()];
  if (isRendered(values)) return withSlotValues(values, stored);
  const copy = [...values];
  copy.splice(slot[0], stored.length, ...stored);
  return copy;
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
