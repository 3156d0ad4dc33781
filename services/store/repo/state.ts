// Reading the feed row and explaining why a fenced write matched nothing.
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { feedLabel, type Feed } from "../codes.js";
import { badRequest, feedNotFound, municipalityNotFound, runNotFound, runNotRunning, staleFence } from "../errors.js";
import { big } from "../mapping/records.js";
import type { Row } from "./context.js";

type Queryable = Pool | PoolConnection;

export const FEED_WHERE = "ibge = ? AND ambiente = ? AND tipo_nsu = ?";
export const feedParams = (f: Feed) => [f.ibge, f.ambiente, f.tipoNsu];

/** The feed's state row with the municipality's active flag; NOT_FOUND with the precise reason. */
export async function loadState(q: Queryable, feed: Feed, lock: boolean): Promise<Row> {
  const [rows] = await q.query<RowDataPacket[]>(
    `SELECT * FROM nfse_sync_state WHERE ${FEED_WHERE}${lock ? " FOR UPDATE" : ""}`,
    feedParams(feed),
  );
  const [m] = await q.query<RowDataPacket[]>("SELECT active FROM municipalities WHERE ibge = ?", [feed.ibge]);
  if (!m[0]) throw municipalityNotFound(feed.ibge);
  const state = rows[0];
  if (!state) throw feedNotFound(feedLabel(feed));
  return { ...state, municipality_active: m[0].active };
}

export async function dbNow(q: Queryable): Promise<Date> {
  const [rows] = await q.query<RowDataPacket[]>("SELECT NOW(3) AS now");
  return rows[0]!.now as Date;
}

export function parseRunId(runId: string): string {
  if (!/^[1-9][0-9]{0,19}$/.test(runId)) throw runNotFound(runId);
  return runId;
}

export async function loadRun(q: Queryable, runId: string, lock = false): Promise<Row> {
  const [rows] = await q.query<RowDataPacket[]>(`SELECT * FROM nfse_sync_runs WHERE id = ?${lock ? " FOR UPDATE" : ""}`, [
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
