// Holes in a feed's persisted NSU sequence, and the confirmed holes that close them. An NSU counts as
// persisted when a document, an event, an alias (item stored under its first NSU) or a quarantined item
// holds it; confirmed holes are excluded from reports.
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import type { ConfirmedHole } from "../../../libs/gen/malha/nfse/v1/feed_pb.js";
import { NsuGapSchema, type NsuGap } from "../../../libs/gen/malha/store/v1/types_pb.js";
import type { Feed } from "../codes.js";
import { municipalityTables } from "../ibge.js";
import { big } from "../mapping/records.js";
import { asciiCode, text } from "../mapping/columns.js";
import { inTransaction, withDb } from "../../../libs/db/tx.js";
import type { StoreDb } from "./context.js";
import { claimFence } from "./apply-batch.js";
import { FEED_WHERE, feedParams, loadRun, loadState } from "./state.js";

const WINDOW = 10_000n;

/** UNION of every source of persisted NSUs in [lo, hi]; `withHoles` adds confirmed holes. */
function presentSql(feed: Feed, lo: bigint, hi: bigint, withHoles: boolean): { sql: string; params: unknown[] } {
  const t = municipalityTables(feed.ibge);
  const range = [lo.toString(), hi.toString()];
  const parts = [
    [
      `SELECT nsu FROM ${t.documentos} WHERE ambiente = ? AND tipo_nsu = ? AND nsu BETWEEN ? AND ?`,
      [feed.ambiente, feed.tipoNsu, ...range],
    ],
    [`SELECT nsu FROM ${t.eventos} WHERE ambiente = ? AND tipo_nsu = ? AND nsu BETWEEN ? AND ?`, [feed.ambiente, feed.tipoNsu, ...range]],
    [`SELECT nsu FROM nfse_nsu_aliases WHERE ${FEED_WHERE} AND nsu BETWEEN ? AND ?`, [...feedParams(feed), ...range]],
    [`SELECT nsu FROM nfse_quarantine WHERE ${FEED_WHERE} AND nsu BETWEEN ? AND ?`, [...feedParams(feed), ...range]],
  ] as [string, unknown[]][];
  if (withHoles)
    parts.push([`SELECT nsu FROM nfse_confirmed_holes WHERE ${FEED_WHERE} AND nsu BETWEEN ? AND ?`, [...feedParams(feed), ...range]]);
  return { sql: parts.map((p) => p[0]).join(" UNION "), params: parts.flatMap((p) => p[1]) };
}

/** Missing runs of [lo, hi] given the sorted NSUs present in it. */
export function gapsIn(lo: bigint, hi: bigint, present: readonly bigint[]): NsuGap[] {
  const gaps: NsuGap[] = [];
  let next = lo;
  for (const nsu of present) {
    if (nsu < next) continue;
    if (nsu > next) gaps.push(create(NsuGapSchema, { start: next, end: nsu - 1n }));
    next = nsu + 1n;
  }
  if (next <= hi) gaps.push(create(NsuGapSchema, { start: next, end: hi }));
  return gaps;
}

export interface GapReport {
  gaps: NsuGap[];
  missingCount: bigint;
  truncated: boolean;
  resumeFrom: bigint;
}

export async function findNsuGaps(
  db: StoreDb,
  feed: Feed,
  start: bigint | undefined,
  end: bigint | undefined,
  limit: number,
  recordChecked = false,
): Promise<GapReport> {
  const state = await withDb(() => loadState(db.pool, feed, false));
  const lo = start ?? (await lowestPersisted(db.pool, feed));
  const hi = end ?? big(state.last_nsu);
  const report: GapReport = { gaps: [], missingCount: 0n, truncated: false, resumeFrom: 0n };
  if (lo === undefined) return report;
  // NSU 0 is never assigned by the ADN (a fault without NSU is stored at 0), so scans start at 1.
  const first = lo < 1n ? 1n : lo;
  const budget = BigInt(limit);
  for (let a = first; a <= hi; a += WINDOW) {
    const b = a + WINDOW - 1n < hi ? a + WINDOW - 1n : hi;
    const q = presentSql(feed, a, b, true);
    const [count] = await withDb(() => db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM (${q.sql}) u`, q.params));
    if (big(count[0]!.n) === b - a + 1n) continue;
    const [rows] = await withDb(() => db.pool.query<RowDataPacket[]>(`SELECT nsu FROM (${q.sql}) u ORDER BY nsu`, q.params));
    for (const gap of gapsIn(
      a,
      b,
      rows.map((r) => big(r.nsu)),
    )) {
      const room = budget - report.missingCount;
      let g = gap;
      const size = g.end - g.start + 1n;
      if (size > room) g = create(NsuGapSchema, { start: g.start, end: g.start + room - 1n });
      const prev = report.gaps[report.gaps.length - 1];
      // Gaps that run across a window boundary are reported as one.
      if (prev && prev.end + 1n === g.start) prev.end = g.end;
      else report.gaps.push(g);
      report.missingCount += g.end - g.start + 1n;
      if (report.missingCount >= budget) {
        const resume = g.end + 1n;
        report.truncated = resume <= hi;
        report.resumeFrom = report.truncated ? resume : 0n;
        return report;
      }
    }
  }
  if (recordChecked && report.gaps.length === 0) await recordGapsChecked(db, feed, first, hi);
  return report;
}

/**
 * No gap from `start` through `end`: the mark moves up to `end` if it reached `start` - 1 already (so that
 * it never skips a range nobody scanned) and `end` is not above the cursor (decision 0046).
 */
async function recordGapsChecked(db: StoreDb, feed: Feed, start: bigint, end: bigint): Promise<void> {
  await withDb(() =>
    db.pool.query(
      `UPDATE nfse_sync_state SET gaps_checked_nsu = ?
        WHERE ${FEED_WHERE} AND gaps_checked_nsu >= ? AND gaps_checked_nsu < ? AND last_nsu >= ?`,
      [end.toString(), ...feedParams(feed), (start - 1n).toString(), end.toString(), end.toString()],
    ),
  );
}

async function lowestPersisted(pool: Pool, feed: Feed): Promise<bigint | undefined> {
  const t = municipalityTables(feed.ibge);
  const [rows] = await withDb(() =>
    pool.query<RowDataPacket[]>(
      `SELECT (SELECT MIN(nsu) FROM ${t.documentos} WHERE ambiente = ? AND tipo_nsu = ?) AS d,
              (SELECT MIN(nsu) FROM ${t.eventos} WHERE ambiente = ? AND tipo_nsu = ?) AS e,
              (SELECT MIN(nsu) FROM nfse_nsu_aliases WHERE ${FEED_WHERE}) AS a,
              (SELECT MIN(nsu) FROM nfse_quarantine WHERE ${FEED_WHERE} AND nsu > 0) AS q`,
      [feed.ambiente, feed.tipoNsu, feed.ambiente, feed.tipoNsu, ...feedParams(feed), ...feedParams(feed)],
    ),
  );
  const r = rows[0]!;
  const values = [r.d, r.e, r.a, r.q].filter((v) => v !== null && v !== undefined).map(big);
  return values.length ? values.reduce((m, v) => (v < m ? v : m)) : undefined;
}

export interface HolesResult {
  recorded: number;
  alreadyKnown: number;
  ignored: number;
}

export async function recordConfirmedHoles(
  db: StoreDb,
  feed: Feed,
  runId: string,
  fence: bigint,
  holes: ConfirmedHole[],
): Promise<HolesResult> {
  return inTransaction(db.pool, async (conn: PoolConnection) => {
    await claimFence(conn, feed, runId, fence);
    await loadRun(conn, runId, true);
    const [stateRows] = await conn.query<RowDataPacket[]>(`SELECT last_nsu FROM nfse_sync_state WHERE ${FEED_WHERE}`, feedParams(feed));
    const cursor = big(stateRows[0]!.last_nsu);
    const result: HolesResult = { recorded: 0, alreadyKnown: 0, ignored: 0 };
    const seen = new Set<bigint>();
    for (const hole of holes) {
      if (hole.nsu === 0n || hole.nsu > cursor) {
        result.ignored++;
        continue;
      }
      if (seen.has(hole.nsu)) {
        result.alreadyKnown++;
        continue;
      }
      seen.add(hole.nsu);
      const q = presentSql(feed, hole.nsu, hole.nsu, false);
      const [present] = await conn.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM (${q.sql}) u`, q.params);
      if (big(present[0]!.n) > 0n) {
        result.ignored++;
        continue;
      }
      const [known] = await conn.query<RowDataPacket[]>(`SELECT 1 FROM nfse_confirmed_holes WHERE ${FEED_WHERE} AND nsu = ?`, [
        ...feedParams(feed),
        hole.nsu.toString(),
      ]);
      if (known.length) {
        result.alreadyKnown++;
        continue;
      }
      await conn.query(
        "INSERT INTO nfse_confirmed_holes (ibge, ambiente, tipo_nsu, nsu, adn_code, message, run_id, confirmed_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
          ...feedParams(feed),
          hole.nsu.toString(),
          asciiCode(hole.codigo, 16),
          text(hole.descricao, 1000),
          runId,
          hole.confirmedAt ? timestampDate(hole.confirmedAt) : new Date(),
        ],
      );
      result.recorded++;
    }
    await conn.query(`UPDATE nfse_sync_state SET holes_total = holes_total + ? WHERE ${FEED_WHERE} AND fence_token = ?`, [
      result.recorded,
      ...feedParams(feed),
      fence.toString(),
    ]);
    await conn.query("UPDATE nfse_sync_runs SET holes_recorded = holes_recorded + ?, last_progress_at = NOW(3) WHERE id = ?", [
      result.recorded,
      runId,
    ]);
    return result;
  });
}
