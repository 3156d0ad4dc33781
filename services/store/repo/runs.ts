// The run lifecycle of a feed: BeginRun records the fence, FinishRun releases the feed, the watchdog
// expires runs whose holder vanished, and operators flag runs for cancellation.
import type { ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { Run } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { FAILED_OUTCOMES, feedLabel, OK_OUTCOMES, RUNNING, type Feed } from "../codes.js";
import { runNotFound } from "../errors.js";
import { runFromRow } from "../mapping/records.js";
import { inTransaction, withDb } from "../../../libs/db/tx.js";
import { beginRuns, type BeginRunInput, type BeginRunResult, type EntryOutcome } from "./begin-runs.js";
import type { StoreDb } from "./context.js";
import { finishRuns, type FinishRunInput, type FinishRunResult } from "./finish-runs.js";
import { FEED_WHERE, feedParams, loadRun, loadState } from "./state.js";

export type { BeginRunInput, BeginRunResult } from "./begin-runs.js";
export type { FinishRunInput, FinishRunResult } from "./finish-runs.js";

/** The one answer of a one-entry batch: its value, or its refusal thrown. */
function only<T>(outcomes: EntryOutcome<T>[]): T {
  const o = outcomes[0]!;
  if (!o.ok) throw o.error;
  return o.value;
}

/** BeginRun is BeginRuns of one entry: one mechanism for both RPC shapes (0036). */
export async function beginRun(db: StoreDb, input: BeginRunInput): Promise<BeginRunResult> {
  return only(await beginRuns(db, [input]));
}

/** FinishRun is FinishRuns of one entry (0036). */
export async function finishRun(db: StoreDb, input: FinishRunInput): Promise<FinishRunResult> {
  return only(await finishRuns(db, [input]));
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
