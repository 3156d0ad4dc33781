// The run lifecycle of a feed: BeginRun records the fence, FinishRun releases the feed, the watchdog
// expires runs whose holder vanished, and operators flag runs for cancellation.
import type { PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { Run, SyncState } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { FAILED_OUTCOMES, feedLabel, OK_OUTCOMES, RUNNING, type Feed } from "../codes.js";
import { feedDisabled, notEligible, runNotFound, staleFence } from "../errors.js";
import { municipalityTables } from "../ibge.js";
import { big, runFromRow, syncStateFromRow } from "../mapping/records.js";
import { inTransaction, withDb } from "../../../libs/db/tx.js";
import type { Row, StoreDb } from "./context.js";
import { explainFencedMiss, FEED_WHERE, feedParams, loadRun, loadState, requireRunOfFeed } from "./state.js";

export interface BeginRunInput {
  feed: Feed;
  holder: string;
  fence: bigint;
  trigger: string;
  pool: string | null;
}

export interface BeginRunResult {
  run: Run;
  cursor: bigint;
  nextEligibleAt: Date | null;
  cooldownUntil: Date | null;
}

/** Highest NSU persisted for the feed in any table (documents, events, aliases, quarantine). */
export async function maxPersistedNsu(conn: PoolConnection, feed: Feed): Promise<bigint> {
  const t = municipalityTables(feed.ibge);
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT (SELECT MAX(nsu) FROM ${t.documentos} WHERE ambiente = ? AND tipo_nsu = ?) AS d,
            (SELECT MAX(nsu) FROM ${t.eventos} WHERE ambiente = ? AND tipo_nsu = ?) AS e,
            (SELECT MAX(nsu) FROM nfse_nsu_aliases WHERE ${FEED_WHERE}) AS a,
            (SELECT MAX(nsu) FROM nfse_quarantine WHERE ${FEED_WHERE}) AS q`,
    [feed.ambiente, feed.tipoNsu, feed.ambiente, feed.tipoNsu, ...feedParams(feed), ...feedParams(feed)],
  );
  const r = rows[0]!;
  return [r.d, r.e, r.a, r.q].map(big).reduce((a, b) => (b > a ? b : a), 0n);
}

const after = (d: unknown, now: Date): d is Date => d instanceof Date && d.getTime() > now.getTime();

export async function beginRun(db: StoreDb, input: BeginRunInput): Promise<BeginRunResult> {
  const { feed, holder, fence } = input;
  const label = feedLabel(feed);
  return inTransaction(db.pool, async (conn) => {
    const state = await loadState(conn, feed, true);
    const now = state.db_now as Date;
    const stored = big(state.fence_token);
    const storedHolder = String(state.fence_holder ?? "");
    if (fence < stored || (fence === stored && storedHolder !== holder)) throw staleFence(label, fence, stored, storedHolder);
    const response = (run: Row, cursor: bigint): BeginRunResult => ({
      run: runFromRow(run),
      cursor,
      nextEligibleAt: (state.next_eligible_at as Date | null) ?? null,
      cooldownUntil: (state.cooldown_until as Date | null) ?? null,
    });

    if (fence === stored && state.status === "running" && state.current_run_id !== null) {
      const current = await loadRun(conn, String(state.current_run_id));
      if (current.outcome === RUNNING && current.holder === holder) return response(current, big(current.from_nsu));
    }
    if (Number(state.enabled) !== 1) throw feedDisabled(label, "the feed is disabled");
    if (Number(state.municipality_active) !== 1) throw feedDisabled(label, "the municipality is inactive");
    const cooling = after(state.cooldown_until, now);
    const waiting = input.trigger !== "reconciliation" && after(state.next_eligible_at, now);
    if (cooling || waiting) {
      throw notEligible(
        label,
        waiting ? (state.next_eligible_at as Date) : undefined,
        cooling ? (state.cooldown_until as Date) : undefined,
      );
    }

    if (state.status === "running" && state.current_run_id !== null) {
      await conn.query(
        "UPDATE nfse_sync_runs SET outcome = 'abandoned', finished_at = ?, error_message = ? WHERE id = ? AND outcome = 'running'",
        [now, `superseded by fence token ${fence} (${holder})`, state.current_run_id],
      );
    }
    const cursor = Number(state.reset_pending) === 1 ? big(state.last_nsu) : maxBig(big(state.last_nsu), await maxPersistedNsu(conn, feed));
    const [ins] = await conn.query<ResultSetHeader>(
      `INSERT INTO nfse_sync_runs (ibge, ambiente, tipo_nsu, trigger_kind, pool, holder, fence_token, started_at, from_nsu, to_nsu)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [...feedParams(feed), input.trigger, input.pool, holder, fence.toString(), now, cursor.toString(), cursor.toString()],
    );
    // The conditional write that records the fence: a concurrent BeginRun with a newer token that
    // committed first makes it match nothing.
    const [upd] = await conn.query<ResultSetHeader>(
      `UPDATE nfse_sync_state SET fence_token = ?, fence_holder = ?, status = 'running', locked_by = ?, locked_at = ?,
         current_run_id = ?, reset_pending = 0, last_nsu = GREATEST(last_nsu, ?)
       WHERE ${FEED_WHERE} AND fence_token <= ?`,
      [fence.toString(), holder, holder, now, ins.insertId, cursor.toString(), ...feedParams(feed), fence.toString()],
    );
    if (upd.affectedRows !== 1) throw staleFence(label, fence, stored, storedHolder);
    return response(await loadRun(conn, String(ins.insertId)), cursor);
  });
}

const maxBig = (a: bigint, b: bigint) => (a > b ? a : b);

export interface FinishRunInput {
  feed: Feed;
  runId: string;
  fence: bigint;
  outcome: string;
  errorMessage: string;
  nextEligibleAt: Date | null;
  cooldownUntil: Date | null;
}

export async function finishRun(db: StoreDb, input: FinishRunInput): Promise<{ run: Run; state: SyncState }> {
  const { feed, fence } = input;
  return inTransaction(db.pool, async (conn) => {
    const run = await loadRun(conn, input.runId, true);
    requireRunOfFeed(run, feed);
    if (run.outcome !== RUNNING) {
      if (run.outcome === input.outcome) return { run: runFromRow(run), state: syncStateFromRow(await loadState(conn, feed, false)) };
      await explainFencedMiss(conn, feed, input.runId, fence);
    }
    const failed = input.outcome === "failed" || input.outcome === "rate_limited";
    const success = input.outcome === "caught_up" || input.outcome === "yielded";
    const now = run.db_now as Date;
    const [upd] = await conn.query<ResultSetHeader>(
      `UPDATE nfse_sync_state SET status = ?, locked_by = NULL, locked_at = NULL, current_run_id = NULL, last_outcome = ?,
         next_eligible_at = CASE WHEN ? IS NULL THEN next_eligible_at WHEN next_eligible_at IS NULL OR next_eligible_at < ? THEN ? ELSE next_eligible_at END,
         cooldown_until = CASE WHEN ? IS NULL THEN cooldown_until WHEN cooldown_until IS NULL OR cooldown_until < ? THEN ? ELSE cooldown_until END,
         last_success_at = CASE WHEN ? THEN ? ELSE last_success_at END,
         last_error_at = CASE WHEN ? THEN ? ELSE last_error_at END,
         last_error_message = CASE WHEN ? THEN ? ELSE last_error_message END
       WHERE ${FEED_WHERE} AND fence_token = ? AND current_run_id = ? AND status = 'running'`,
      [
        failed ? "error" : "idle",
        input.outcome,
        input.nextEligibleAt,
        input.nextEligibleAt,
        input.nextEligibleAt,
        input.cooldownUntil,
        input.cooldownUntil,
        input.cooldownUntil,
        success ? 1 : 0,
        now,
        failed ? 1 : 0,
        now,
        failed ? 1 : 0,
        input.errorMessage || null,
        ...feedParams(feed),
        fence.toString(),
        input.runId,
      ],
    );
    if (upd.affectedRows !== 1) await explainFencedMiss(conn, feed, input.runId, fence);
    if (input.cooldownUntil !== null) {
      // A 429 blocks the certificate, and one certificate serves every feed of the municipality in
      // this ambiente: all of them cool down, so no run of a sibling feed calls the ADN (through any
      // gateway replica) until the cool-down ends. Only moves forward, like the feed's own.
      await conn.query(
        `UPDATE nfse_sync_state SET cooldown_until = ?
         WHERE ibge = ? AND ambiente = ? AND tipo_nsu <> ? AND (cooldown_until IS NULL OR cooldown_until < ?)`,
        [input.cooldownUntil, feed.ibge, feed.ambiente, feed.tipoNsu, input.cooldownUntil],
      );
    }
    await conn.query(
      `UPDATE nfse_sync_runs SET outcome = ?, finished_at = ?, error_message = ?, next_eligible_at = ?, cooldown_until = ? WHERE id = ?`,
      [input.outcome, now, input.errorMessage || null, input.nextEligibleAt, input.cooldownUntil, input.runId],
    );
    return { run: runFromRow(await loadRun(conn, input.runId)), state: syncStateFromRow(await loadState(conn, feed, false)) };
  });
}

export type CancellationTarget = { runId: string } | { feed: Feed };

export async function requestCancellation(
  db: StoreDb,
  target: CancellationTarget,
  requestedBy: string,
  reason: string,
): Promise<{ run: Run; alreadyFinished: boolean }> {
  return inTransaction(db.pool, async (conn) => {
    let runId: string;
    if ("runId" in target) runId = target.runId;
    else {
      const state = await loadState(conn, target.feed, false);
      if (state.current_run_id === null || state.status !== "running")
        throw runNotFound(`(no run in progress on ${feedLabel(target.feed)})`);
      runId = String(state.current_run_id);
    }
    const run = await loadRun(conn, runId, true);
    if (run.outcome !== RUNNING) return { run: runFromRow(run), alreadyFinished: true };
    await conn.query(
      "UPDATE nfse_sync_runs SET cancel_requested_at = COALESCE(cancel_requested_at, NOW(3)), cancel_requested_by = ?, cancel_reason = ? WHERE id = ?",
      [requestedBy || null, reason || null, runId],
    );
    return { run: runFromRow(await loadRun(conn, runId)), alreadyFinished: false };
  });
}

/** Watchdog: RUNNING feeds whose heartbeat is older than staleBefore go back to IDLE; the fence stays. */
export async function expireStaleRuns(db: StoreDb, staleBefore: Date, requestedBy: string): Promise<Run[]> {
  const [candidates] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(
      "SELECT ibge, ambiente, tipo_nsu FROM nfse_sync_state WHERE status = 'running' AND locked_at < ? ORDER BY id",
      [staleBefore],
    ),
  );
  const expired: Run[] = [];
  for (const c of candidates) {
    const feed = { ibge: String(c.ibge), ambiente: Number(c.ambiente), tipoNsu: String(c.tipo_nsu) } as Feed;
    const run = await inTransaction(db.pool, async (conn) => {
      // Re-checked under the row lock: a heartbeat may have arrived since the scan.
      const state = await loadState(conn, feed, true);
      if (state.status !== "running" || !(state.locked_at instanceof Date) || state.locked_at >= staleBefore) return undefined;
      const now = state.db_now as Date;
      const message = `expired by ${requestedBy || "the watchdog"}: no heartbeat since ${state.locked_at.toISOString()}`;
      await conn.query(
        `UPDATE nfse_sync_state SET status = 'idle', locked_by = NULL, locked_at = NULL, current_run_id = NULL, last_outcome = 'abandoned'
         WHERE ${FEED_WHERE}`,
        feedParams(feed),
      );
      if (state.current_run_id === null) return undefined;
      await conn.query(
        "UPDATE nfse_sync_runs SET outcome = 'abandoned', finished_at = ?, error_message = ? WHERE id = ? AND outcome = 'running'",
        [now, message, state.current_run_id],
      );
      return runFromRow(await loadRun(conn, String(state.current_run_id)));
    });
    if (run) expired.push(run);
  }
  return expired;
}

/** Retention of run logs, in bounded chunks so a large purge never holds long locks. */
export async function purgeRunLogs(db: StoreDb, finishedBefore: Date, failedFinishedBefore: Date): Promise<number> {
  let deleted = 0;
  for (const [outcomes, before] of [
    [OK_OUTCOMES, finishedBefore],
    [FAILED_OUTCOMES, failedFinishedBefore],
  ] as const) {
    for (;;) {
      const [res] = await withDb(() =>
        db.pool.query<ResultSetHeader>("DELETE FROM nfse_sync_runs WHERE outcome IN (?) AND finished_at < ? LIMIT 5000", [
          [...outcomes],
          before,
        ]),
      );
      deleted += res.affectedRows;
      if (res.affectedRows < 5000) break;
    }
  }
  return deleted;
}

export async function getRun(db: StoreDb, runId: string): Promise<Run> {
  return runFromRow(await withDb(() => loadRun(db.pool, runId)));
}
