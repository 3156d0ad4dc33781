// Reading the feed row and explaining why a fenced write matched nothing.
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { feedLabel, type Feed } from "../codes.js";
import { badRequest, feedNotFound, municipalityNotFound, runNotFound, runNotRunning, staleFence } from "../errors.js";
import { big } from "../mapping/records.js";
import type { Row } from "./context.js";

type Queryable = Pool | PoolConnection;

export const FEED_WHERE = "ibge = ? AND ambiente = ? AND tipo_nsu = ?";
export const feedParams = (f: Feed) => [f.ibge, f.ambiente, f.tipoNsu];

/**
 * The feed's state row with the municipality's active flag and the server's clock (`db_now`, NOW(3):
 * the statement's start) in one statement — a sync run reads it twice, and every statement is a round
 * trip for the store and a parse for MariaDB (bench/README.md, the sweep section). `lock` takes the state
 * row's lock only, not the municipality's. NOT_FOUND with the precise reason.
 */
export async function loadState(q: Queryable, feed: Feed, lock: boolean): Promise<Row> {
  const [rows] = await q.query<RowDataPacket[]>(
    `SELECT s.*, (SELECT m.active FROM municipalities m WHERE m.ibge = s.ibge) AS municipality_active, NOW(3) AS db_now
       FROM nfse_sync_state s WHERE ${FEED_WHERE}${lock ? " FOR UPDATE" : ""}`,
    feedParams(feed),
  );
  const state = rows[0];
  if (state && state.municipality_active !== null) return state;
  // Which one is missing is asked only when one is.
  const [m] = await q.query<RowDataPacket[]>("SELECT 1 FROM municipalities WHERE ibge = ?", [feed.ibge]);
  if (!m[0]) throw municipalityNotFound(feed.ibge);
  throw feedNotFound(feedLabel(feed));
}

export function parseRunId(runId: string): string {
  if (!/^[1-9][0-9]{0,19}$/.test(runId)) throw runNotFound(runId);
  return runId;
}

/** The run's row, with the server's clock (`db_now`, as in loadState) so that FinishRun needs no statement for it. */
export async function loadRun(q: Queryable, runId: string, lock = false): Promise<Row> {
  const [rows] = await q.query<RowDataPacket[]>(`SELECT *, NOW(3) AS db_now FROM nfse_sync_runs WHERE id = ?${lock ? " FOR UPDATE" : ""}`, [
    parseRunId(runId),
  ]);
  if (!rows[0]) throw runNotFound(runId);
  return rows[0];
}

export function requireRunOfFeed(run: Row, feed: Feed): void {
  if (run.ibge !== feed.ibge || Number(run.ambiente) !== feed.ambiente || run.tipo_nsu !== feed.tipoNsu) {
    throw badRequest(
      `run ${String(run.id)} belongs to feed ${String(run.ibge)}/${String(run.ambiente)}/${String(run.tipo_nsu)}, not ${feedLabel(feed)}`,
    );
  }
}

/**
 * A run write (ApplyBatch, RecordConfirmedHoles, FinishRun) matched no row: say why, in the contract's
 * order — unknown run, run of another feed, stale fence, run no longer running.
 */
export async function explainFencedMiss(q: Queryable, feed: Feed, runId: string, fence: bigint): Promise<never> {
  const run = await loadRun(q, runId);
  requireRunOfFeed(run, feed);
  const state = await loadState(q, feed, false);
  const current = big(state.fence_token);
  if (current !== fence || big(run.fence_token) !== fence) {
    throw staleFence(feedLabel(feed), fence, current, String(state.fence_holder ?? ""));
  }
  throw runNotRunning(runId, String(run.outcome));
}
