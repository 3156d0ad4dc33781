// Feed state reads and the audited operator reset of a cursor.
import type { ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { CursorReset, SyncState } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { RunOutcome } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { feedLabel, outcomeCodes, type Feed } from "../codes.js";
import { runInProgress } from "../errors.js";
import type { Ibge } from "../ibge.js";
import { cursorResetFromRow, syncStateFromRow } from "../mapping/records.js";
import { keysetAfter, orderBy, Where } from "../sql/keyset.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import { inTransaction, withDb } from "../../../libs/db/tx.js";
import type { StoreDb } from "./context.js";
import { requireMunicipality } from "./municipalities.js";
import { FEED_WHERE, feedParams, loadState } from "./state.js";

export async function getSyncState(db: StoreDb, feed: Feed): Promise<SyncState> {
  return syncStateFromRow(await withDb(() => loadState(db.pool, feed, false)));
}

const FAILED = outcomeCodes.toDb(RunOutcome.FAILED);

/** SyncCondition as the store reads it: the durable part of one of the coordinator's feed states. */
export type SyncConditionName = "disabled" | "running" | "not_running" | "cooling_down" | "waiting" | "eligible";

export interface SyncStateFilter {
  ibge?: Ibge;
  ambiente?: number;
  tipoNsu?: string;
  status?: string;
  enabled?: boolean;
  eligibleAt?: Date;
  uf?: string;
  condition?: SyncConditionName;
  lastRunFailed?: boolean;
  pageSize: number;
  pageToken: string;
}

/** The condition as SQL at `now`; the precedence is the coordinator's (services/coordinator/status.ts). */
function addCondition(where: Where, condition: SyncConditionName, now: Date): void {
  if (condition === "disabled") {
    where.add("(s.enabled = 0 OR m.active = 0)");
    return;
  }
  where.add("s.enabled = 1 AND m.active = 1");
  if (condition === "running") {
    where.add("s.status = 'running'");
    return;
  }
  where.add("s.status <> 'running'");
  if (condition === "not_running") return;
  if (condition === "cooling_down") {
    where.add("s.cooldown_until > ?", now);
    return;
  }
  where.add("(s.cooldown_until IS NULL OR s.cooldown_until <= ?)", now);
  if (condition === "waiting") where.add("s.next_eligible_at > ?", now);
  else where.add("(s.next_eligible_at IS NULL OR s.next_eligible_at <= ?)", now);
}

/**
 * One page of feed states. Every filter selects rows in SQL and is bound into the page token; `now`
 * (the instant `condition` is judged at) is not a filter: a later page judges at its own instant.
 */
export async function listSyncStates(db: StoreDb, f: SyncStateFilter, now = new Date()): Promise<{ items: SyncState[]; next: string }> {
  const { pageSize: size, pageToken, ...filters } = f;
  if (f.ibge) await requireMunicipality(db, f.ibge);
  const after = db.tokens.decode("ListSyncStates", filters, pageToken, ["string", "string", "string"]);
  const limit = pageSizeOf(size, { default: 100, max: 1000 });
  const where = new Where();
  if (f.ibge) where.add("s.ibge = ?", f.ibge);
  if (f.ambiente !== undefined) where.add("s.ambiente = ?", f.ambiente);
  if (f.tipoNsu !== undefined) where.add("s.tipo_nsu = ?", f.tipoNsu);
  if (f.status !== undefined) where.add("s.status = ?", f.status);
  if (f.enabled !== undefined) where.add("s.enabled = ?", f.enabled ? 1 : 0);
  if (f.uf !== undefined) where.add("m.uf = ?", f.uf);
  if (f.condition !== undefined) addCondition(where, f.condition, now);
  if (f.lastRunFailed === true) where.add("s.last_outcome = ?", FAILED);
  if (f.lastRunFailed === false) where.add("(s.last_outcome IS NULL OR s.last_outcome <> ?)", FAILED);
  if (f.eligibleAt) {
    where
      .add("s.enabled = 1 AND m.active = 1 AND s.status <> 'running'")
      .add("(s.next_eligible_at IS NULL OR s.next_eligible_at <= ?)", f.eligibleAt)
      .add("(s.cooldown_until IS NULL OR s.cooldown_until <= ?)", f.eligibleAt);
  }
  const key = [{ expr: "s.ibge" }, { expr: "s.ambiente" }, { expr: "s.tipo_nsu" }];
  if (after) where.addFragment(keysetAfter(key, after));
  const [rows] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(
      `SELECT s.*, m.active AS municipality_active FROM nfse_sync_state s JOIN municipalities m ON m.ibge = s.ibge
       ${where.sql} ORDER BY ${orderBy(key)} LIMIT ?`,
      [...where.params, limit + 1],
    ),
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(syncStateFromRow),
    next:
      rows.length > limit && last
        ? db.tokens.encode("ListSyncStates", filters, [String(last.ibge), String(last.ambiente), String(last.tipo_nsu)])
        : "",
  };
}

export async function resetCursor(
  db: StoreDb,
  feed: Feed,
  newCursor: bigint,
  operator: string,
  reason: string,
): Promise<{ reset: CursorReset; state: SyncState }> {
  return inTransaction(db.pool, async (conn) => {
    const state = await loadState(conn, feed, true);
    if (state.status === "running") throw runInProgress(feedLabel(feed), String(state.current_run_id ?? ""));
    const [ins] = await conn.query<ResultSetHeader>(
      "INSERT INTO nfse_cursor_resets (ibge, ambiente, tipo_nsu, old_nsu, new_nsu, operator, reason) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [...feedParams(feed), String(state.last_nsu), newCursor.toString(), operator, reason],
    );
    // The one write that may move a cursor backwards; the next BeginRun returns exactly this value. What
    // lies above it is looked at again by the next gap scan (a reset is how an operator says rows may be missing).
    await conn.query(
      `UPDATE nfse_sync_state SET last_nsu = ?, reset_pending = 1, gaps_checked_nsu = LEAST(gaps_checked_nsu, ?) WHERE ${FEED_WHERE}`,
      [newCursor.toString(), newCursor.toString(), ...feedParams(feed)],
    );
    const [resets] = await conn.query<RowDataPacket[]>("SELECT * FROM nfse_cursor_resets WHERE id = ?", [ins.insertId]);
    return { reset: cursorResetFromRow(resets[0]!), state: syncStateFromRow(await loadState(conn, feed, false)) };
  });
}

export interface CursorResetFilter {
  ibge?: Ibge;
  ambiente?: number;
  tipoNsu?: string;
  pageSize: number;
  pageToken: string;
}

export async function listCursorResets(db: StoreDb, f: CursorResetFilter): Promise<{ items: CursorReset[]; next: string }> {
  const { pageSize: size, pageToken, ...filters } = f;
  if (f.ibge) await requireMunicipality(db, f.ibge);
  const after = db.tokens.decode("ListCursorResets", filters, pageToken, ["string"]);
  const limit = pageSizeOf(size);
  const where = new Where();
  if (f.ibge) where.add("ibge = ?", f.ibge);
  if (f.ambiente !== undefined) where.add("ambiente = ?", f.ambiente);
  if (f.tipoNsu !== undefined) where.add("tipo_nsu = ?", f.tipoNsu);
  const key = [{ expr: "id", desc: true }];
  if (after) where.addFragment(keysetAfter(key, after));
  const [rows] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(`SELECT * FROM nfse_cursor_resets ${where.sql} ORDER BY ${orderBy(key)} LIMIT ?`, [
      ...where.params,
      limit + 1,
    ]),
  );
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return {
    items: page.map(cursorResetFromRow),
    next: rows.length > limit && last ? db.tokens.encode("ListCursorResets", filters, [String(last.id)]) : "",
  };
}
