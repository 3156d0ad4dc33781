// Multi-row reads and writes of many feeds' rows in one statement, for the batched run calls
// (BeginRuns/FinishRuns, docs/decisions/0036-batched-run-begin-and-finish.md). Statements stay valid on
// MySQL 5.6: feeds are matched by ORs of the unique key's equalities and per-row values come as a UNION
// ALL derived table, not a VALUES constructor. A locking read names its index: left to itself, the
// optimizer scans the whole table for a few dozen ORs, and FOR UPDATE locks every row it scans
// (docs/decisions/0060-locking-reads-name-their-index.md).
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import { feedLabel, type Feed } from "../codes.js";
import { feedNotFound, municipalityNotFound } from "../errors.js";
import type { Row } from "./context.js";
import { feedParams } from "./state.js";

/** `(ibge = ? AND ambiente = ? AND tipo_nsu = ?) OR …` on the given alias, and its parameters. */
export function feedsWhere(feeds: readonly Feed[], alias = ""): { sql: string; params: unknown[] } {
  const a = alias ? `${alias}.` : "";
  return {
    sql: feeds.map(() => `(${a}ibge = ? AND ${a}ambiente = ? AND ${a}tipo_nsu = ?)`).join(" OR "),
    params: feeds.flatMap(feedParams),
  };
}

/** A feed's identity as a map key, from a request's feed or from a row's columns (`rowFeedKey`). */
export const feedKey = (f: Feed) => `${f.ibge}/${f.ambiente}/${f.tipoNsu}`;
export const rowFeedKey = (r: Row) => `${String(r.ibge)}/${Number(r.ambiente)}/${String(r.tipo_nsu)}`;

/**
 * A derived table of one row per entry (`SELECT ? AS c1, ? AS c2 UNION ALL SELECT ?, ? …`) for a
 * multi-row UPDATE … JOIN: each row's own values, one statement.
 */
export function valuesTable(columns: readonly string[], rows: readonly unknown[][]): { sql: string; params: unknown[] } {
  const first = `SELECT ${columns.map((c) => `? AS ${c}`).join(", ")}`;
  const rest = `SELECT ${columns.map(() => "?").join(", ")}`;
  return { sql: rows.map((_, i) => (i === 0 ? first : rest)).join(" UNION ALL "), params: rows.flat() };
}

/**
 * The state rows of many feeds with the municipality's active flag and the clock, as loadState reads one
 * (`lock`: FOR UPDATE, the state rows only). Keyed by feedKey; a feed without a row (or whose
 * municipality is gone) maps to the NOT_FOUND error loadState would throw.
 */
export async function loadStates(conn: PoolConnection, feeds: readonly Feed[], lock: boolean): Promise<Map<string, Row | Error>> {
  const where = feedsWhere(feeds, "s");
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT s.*, (SELECT m.active FROM municipalities m WHERE m.ibge = s.ibge) AS municipality_active, NOW(3) AS db_now
       FROM nfse_sync_state s FORCE INDEX (uq_nfse_sync_state_feed) WHERE ${where.sql}${lock ? " FOR UPDATE" : ""}`,
    where.params,
  );
  const found = new Map<string, Row | Error>();
  for (const r of rows) if (r.municipality_active !== null) found.set(rowFeedKey(r), r);
  const missing = feeds.filter((f) => !found.has(feedKey(f)));
  if (missing.length > 0) {
    // Which one is missing is asked only when one is, as loadState does.
    const [ms] = await conn.query<RowDataPacket[]>("SELECT ibge FROM municipalities WHERE ibge IN (?)", [
      [...new Set(missing.map((f) => f.ibge))],
    ]);
    const registered = new Set(ms.map((m) => String(m.ibge)));
    for (const f of missing) found.set(feedKey(f), registered.has(f.ibge) ? feedNotFound(feedLabel(f)) : municipalityNotFound(f.ibge));
  }
  return found;
}
