// FinishRun for many runs in one transaction (docs/decisions/0036-batched-run-begin-and-finish.md): the
// runs and their feeds' state rows read under lock in one statement, each entry checked as FinishRun
// checks it, and the writes of every accepted entry in one multi-row statement per table. A refused
// entry writes nothing; the single-feed FinishRun is this with one entry.
import type { ConnectError } from "@connectrpc/connect";
import type { PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { Run, SyncState } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { inTransaction } from "../../../libs/db/tx.js";
import { feedLabel, RUNNING, type Feed } from "../codes.js";
import { runNotFound, runNotRunning, staleFence } from "../errors.js";
import { big, runFromRow, syncStateFromRow } from "../mapping/records.js";
import type { EntryOutcome } from "./begin-runs.js";
import type { Row, StoreDb } from "./context.js";
import { feedKey, loadStates, valuesTable } from "./feed-rows.js";
import { requireRunOfFeed } from "./state.js";

export interface FinishRunInput {
  feed: Feed;
  runId: string;
  fence: bigint;
  outcome: string;
  errorMessage: string;
  nextEligibleAt: Date | null;
  cooldownUntil: Date | null;
  /** CAUGHT_UP at a short page, without the ADN's "nothing newer" (0061). */
  endedAtShortPage?: boolean;
}

export interface FinishRunResult {
  run: Run;
  state: SyncState;
}

/**
 * The runs by id, each with its feed's fence fields, both rows locked: the run first, as FinishRun always
 * took them. By the primary key, named (0060): a scan would lock every run row, which every round's
 * cursor UPDATE takes too.
 */
export async function lockRunsWithFeeds(conn: PoolConnection, runIds: readonly string[]): Promise<Map<string, Row>> {
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT r.*, s.fence_token AS state_fence, s.fence_holder AS state_holder, s.current_run_id AS state_run,
            s.status AS state_status, NOW(3) AS db_now
       FROM nfse_sync_runs r FORCE INDEX (PRIMARY)
       LEFT JOIN nfse_sync_state s ON s.ibge = r.ibge AND s.ambiente = r.ambiente AND s.tipo_nsu = r.tipo_nsu
      WHERE r.id IN (?) FOR UPDATE`,
    [runIds],
  );
  return new Map(rows.map((r) => [String(r.id), r]));
}

/** A finished entry's answer when the caller asked for none (FinishRunsRequest.brief, decision 0064). */
export type FinishRunBrief = Record<string, never>;

/** Ends many runs (no run twice) in one transaction; one outcome per input, in order. */
export async function finishRuns(db: StoreDb, inputs: readonly FinishRunInput[], brief?: false): Promise<EntryOutcome<FinishRunResult>[]>;
export async function finishRuns(
  db: StoreDb,
  inputs: readonly FinishRunInput[],
  brief: boolean,
): Promise<EntryOutcome<FinishRunResult | FinishRunBrief>[]>;
export async function finishRuns(
  db: StoreDb,
  inputs: readonly FinishRunInput[],
  brief = false,
): Promise<EntryOutcome<FinishRunResult | FinishRunBrief>[]> {
  if (inputs.length === 0) return [];
  return inTransaction(db.pool, async (conn) => {
    const out: EntryOutcome<FinishRunResult | FinishRunBrief>[] = new Array(inputs.length);
    const runOf = await lockRunsWithFeeds(
      conn,
      inputs.map((i) => i.runId),
    );
    const accepted: { index: number; run: Row }[] = [];
    const repeated: number[] = [];
    inputs.forEach((input, index) => {
      const run = runOf.get(input.runId);
      try {
        if (!run) throw runNotFound(input.runId);
        requireRunOfFeed(run, input.feed);
        // The conditions of the fenced write below, in the contract's order of explanation.
        const current = big(run.state_fence);
        const running = run.outcome === RUNNING && String(run.state_run) === input.runId && run.state_status === "running";
        if (running && current === input.fence) accepted.push({ index, run });
        else if (run.outcome === input.outcome)
          repeated.push(index); // the same FinishRun again: a no-op
        else if (current !== input.fence || big(run.fence_token) !== input.fence)
          throw staleFence(feedLabel(input.feed), input.fence, current, String(run.state_holder ?? ""));
        else throw runNotRunning(input.runId, String(run.outcome));
      } catch (err) {
        out[index] = { ok: false, error: err as ConnectError };
      }
    });

    if (accepted.length > 0) {
      const entries = accepted.map(({ index, run }) => {
        const input = inputs[index]!;
        const failed = input.outcome === "failed" || input.outcome === "rate_limited";
        const success = input.outcome === "caught_up" || input.outcome === "yielded";
        return { input, failed, success, now: run.db_now as Date };
      });
      const v = valuesTable(
        [
          "ibge",
          "ambiente",
          "tipo_nsu",
          "fence",
          "run_id",
          "status",
          "outcome",
          "nea",
          "cdu",
          "success",
          "failed",
          "now",
          "message",
          "short_end",
        ],
        entries.map((e) => [
          e.input.feed.ibge,
          e.input.feed.ambiente,
          e.input.feed.tipoNsu,
          e.input.fence.toString(),
          e.input.runId,
          e.failed ? "error" : "idle",
          e.input.outcome,
          e.input.nextEligibleAt,
          e.input.cooldownUntil,
          e.success ? 1 : 0,
          e.failed ? 1 : 0,
          e.now,
          e.input.errorMessage || null,
          e.input.endedAtShortPage ? 1 : 0,
        ]),
      );
      // The fenced write of 0008, per feed: each row only if its fence and run still hold (they do:
      // the rows are locked above; a miss is a bug). Both times only move forward.
      const [upd] = await conn.query<ResultSetHeader>(
        `UPDATE nfse_sync_state s JOIN (${v.sql}) v ON s.ibge = v.ibge AND s.ambiente = v.ambiente AND s.tipo_nsu = v.tipo_nsu
            SET s.status = v.status, s.locked_by = NULL, s.locked_at = NULL, s.current_run_id = NULL, s.last_outcome = v.outcome,
                s.next_eligible_at = CASE WHEN v.nea IS NULL THEN s.next_eligible_at
                                          WHEN s.next_eligible_at IS NULL OR s.next_eligible_at < v.nea THEN v.nea ELSE s.next_eligible_at END,
                s.cooldown_until = CASE WHEN v.cdu IS NULL THEN s.cooldown_until
                                        WHEN s.cooldown_until IS NULL OR s.cooldown_until < v.cdu THEN v.cdu ELSE s.cooldown_until END,
                s.last_success_at = CASE WHEN v.success = 1 THEN v.now ELSE s.last_success_at END,
                s.last_error_at = CASE WHEN v.failed = 1 THEN v.now ELSE s.last_error_at END,
                s.last_error_message = CASE WHEN v.failed = 1 THEN v.message ELSE s.last_error_message END,
                s.short_page_ends = CASE WHEN v.outcome <> 'caught_up' THEN s.short_page_ends
                                         WHEN v.short_end = 1 THEN LEAST(s.short_page_ends + 1, 255) ELSE 0 END
          WHERE s.fence_token = CAST(v.fence AS UNSIGNED) AND s.current_run_id = CAST(v.run_id AS UNSIGNED) AND s.status = 'running'`,
        v.params,
      );
      if (upd.affectedRows !== accepted.length) throw new Error(`FinishRuns released ${upd.affectedRows} of ${accepted.length} feeds`);
      for (const { input } of entries) {
        if (input.cooldownUntil === null) continue;
        // A 429 blocks the certificate, and one certificate serves every feed of the municipality in
        // this ambiente: all of them cool down, so no run of a sibling feed calls the ADN (through any
        // gateway replica) until the cool-down ends. Only moves forward, like the feed's own. Rare: one
        // statement per rate-limited entry.
        await conn.query(
          `UPDATE nfse_sync_state SET cooldown_until = ?
           WHERE ibge = ? AND ambiente = ? AND tipo_nsu <> ? AND (cooldown_until IS NULL OR cooldown_until < ?)`,
          [input.cooldownUntil, input.feed.ibge, input.feed.ambiente, input.feed.tipoNsu, input.cooldownUntil],
        );
      }
      await conn.query(
        `UPDATE nfse_sync_runs r JOIN (${v.sql}) v ON r.id = CAST(v.run_id AS UNSIGNED)
            SET r.outcome = v.outcome, r.finished_at = v.now, r.error_message = v.message, r.next_eligible_at = v.nea,
                r.cooldown_until = v.cdu`,
        v.params,
      );
    }

    // What FinishRun answers: the run and its feed's state after it, for the finished and the repeated.
    const answered = [...accepted.map((a) => a.index), ...repeated];
    if (answered.length === 0) return out;
    if (brief) {
      for (const i of answered) out[i] = { ok: true, value: {} };
      return out;
    }
    const [finalRuns] = await conn.query<RowDataPacket[]>("SELECT * FROM nfse_sync_runs WHERE id IN (?)", [
      answered.map((i) => inputs[i]!.runId),
    ]);
    const finalRunOf = new Map(finalRuns.map((r) => [String(r.id), r]));
    const states = await loadStates(
      conn,
      answered.map((i) => inputs[i]!.feed),
      false,
    );
    for (const i of answered) {
      const input = inputs[i]!;
      const state = states.get(feedKey(input.feed))!;
      if (state instanceof Error) out[i] = { ok: false, error: state as ConnectError };
      else out[i] = { ok: true, value: { run: runFromRow(finalRunOf.get(input.runId)!), state: syncStateFromRow(state) } };
    }
    return out;
  });
}
