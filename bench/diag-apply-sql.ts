// Diagnostic for MariaDB's share of the sync's CPU: the server's CPU time per statement of ApplyBatch, per
// ADN page. One simulator feed is decoded with libs/adn and applied page by page through the store's own
// repository (services/store/repo/apply-batch.ts) on a throwaway database of MYSQL_URL, over one pooled
// connection whose session has MariaDB's query profiling on; CPU_USER + CPU_SYSTEM of every statement
// (information_schema.PROFILING) is summed by statement shape. No RPC and no other process is involved.
//   npx tsx bench/diag-apply-sql.ts [entries=2000]
import { join } from "node:path";
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import { decodeItem } from "../libs/adn/item.js";
import { projectRoot } from "../libs/config/paths.js";
import { migrate } from "../libs/db/migrate.js";
import { createPageTokens } from "../libs/rpc/page-token.js";
import { parseFeed } from "../services/store/codes.js";
import { itemRow } from "../services/store/mapping/item-rows.js";
import { applyBatch } from "../services/store/repo/apply-batch.js";
import type { StoreDb } from "../services/store/repo/context.js";
import { registerMunicipality } from "../services/store/repo/municipalities.js";
import { beginRun } from "../services/store/repo/runs.js";
import { feedOf } from "../services/store/testing/fixtures.js";
import { createThrowawayDatabase } from "../test/support/mysql.js";
import { Feeds } from "../tools/adn-sim/feeds.js";
import { MAX_DECOMPRESSED } from "./ceiling.js";
import { pagesOf } from "./workload.js";

const entries = Number(process.argv[2] ?? 2000);
/** Pages applied before the counting starts (table cache, JIT). */
const WARM_UP_PAGES = 3;
const IBGE = "3550308";

interface Shape {
  executions: number;
  cpuSeconds: number;
}

/** A statement's shape: values and placeholder lists folded, so every page's statements group together. */
function shapeOf(sql: string): string {
  return sql
    .replace(/\s+/g, " ")
    .replace(/\((\?|'[^']*'|\d+)(, (\?|'[^']*'|\d+))*\)/g, "(…)")
    .replace(/X'[0-9a-f]*'|'[^']*'|\b\d+\b/gi, "v")
    .slice(0, 90);
}

/** The profiled statements the session ran since the last call, without the profiling's own. */
async function collect(conn: PoolConnection, seen: Set<number>, shapes: Map<string, Shape>): Promise<void> {
  await conn.query("SET profiling = 0");
  const [rows] = await conn.query<RowDataPacket[]>(
    `SELECT QUERY_ID AS id, SUM(CPU_USER + CPU_SYSTEM) AS cpu FROM information_schema.PROFILING GROUP BY QUERY_ID`,
  );
  const [queries] = await conn.query<RowDataPacket[]>("SHOW PROFILES");
  const text = new Map(queries.map((q) => [Number(q.Query_ID), String(q.Query)]));
  for (const r of rows) {
    const id = Number(r.id);
    const sql = text.get(id);
    if (seen.has(id) || sql === undefined || /^SET profiling|^SHOW PROFILES|information_schema\.PROFILING/.test(sql)) continue;
    seen.add(id);
    const shape = shapes.get(shapeOf(sql)) ?? { executions: 0, cpuSeconds: 0 };
    shape.executions++;
    shape.cpuSeconds += Number(r.cpu ?? 0);
    shapes.set(shapeOf(sql), shape);
  }
  await conn.query("SET profiling = 1");
}

const tdb = await createThrowawayDatabase();
try {
  await migrate(tdb.pool, join(projectRoot(), "migrations"));
  const db: StoreDb = {
    pool: tdb.newPool({ connectionLimit: 1 }),
    statementBudgetBytes: 16 * 1024 * 1024,
    tokens: createPageTokens({ secret: Buffer.from("k".repeat(32)), errorDomain: "malha.store" }),
  };
  const feed = parseFeed(feedOf(IBGE));
  await registerMunicipality(db, {
    ibge: feed.ibge,
    name: "São Paulo",
    uf: "SP",
    active: true,
    feeds: [{ ambiente: feed.ambiente, tipoNsu: feed.tipoNsu }],
  });
  const { runId } = (await beginRun(db, { feed, holder: "diag", fence: 1n, trigger: "scheduled", pool: "bootstrap" })).run;
  const log = new Feeds({ seed: 7, initialSize: entries, tpAmb: () => 2 }).get(IBGE, feed.tipoNsu);
  const pages = pagesOf(log, 50).pages.map((page) => page.map((raw) => decodeItem(raw, { maxDecompressedBytes: MAX_DECOMPRESSED })));

  // The pool has one connection, so applyBatch's transactions and these reads share the profiled session.
  const session = async (work: (conn: PoolConnection) => Promise<void>) => {
    const conn = await db.pool.getConnection();
    try {
      await work(conn);
    } finally {
      conn.release();
    }
  };
  await session((conn) => conn.query("SET profiling_history_size = 100, profiling = 1").then(() => undefined));
  const shapes = new Map<string, Shape>();
  const seen = new Set<number>();
  let items = 0;
  let clientMicros = 0;
  for (const [i, page] of pages.entries()) {
    const highest = page.reduce((m, item) => (item.nsu > m ? item.nsu : m), 0n);
    const before = process.cpuUsage();
    const rows = page.map((item) => itemRow(feed, item, runId));
    await applyBatch(db, { feed, runId, fence: 1n, rows, newCursor: highest, maxNsuSeen: highest });
    const used = process.cpuUsage(before);
    const counting = i >= WARM_UP_PAGES;
    if (counting) {
      items += page.length;
      clientMicros += used.user + used.system;
    }
    await session((conn) => collect(conn, seen, counting ? shapes : new Map()));
  }
  const counted = pages.length - WARM_UP_PAGES;
  let total = 0;
  console.log(`server CPU per ADN page (${counted} pages, ${(items / counted).toFixed(1)} items each), by statement:`);
  for (const [shape, s] of [...shapes].sort((a, b) => b[1].cpuSeconds - a[1].cpuSeconds)) {
    total += s.cpuSeconds;
    console.log(
      `${((1000 * s.cpuSeconds) / counted).toFixed(3).padStart(7)} ms  ${(s.executions / counted).toFixed(1).padStart(4)}×  ${shape}`,
    );
  }
  console.log(
    `${((1000 * total) / counted).toFixed(3).padStart(7)} ms  in all = ${((1000 * total) / items).toFixed(3)} CPU-s per 1,000 items`,
  );
  // This process's CPU inside applyBatch (row mapping + mysql2), with the profiling's own reads outside it.
  console.log(
    `client: ${(clientMicros / 1000 / counted).toFixed(3)} ms per page = ${(clientMicros / 1000 / items).toFixed(3)} CPU-s per 1,000 items (mapping + mysql2)`,
  );
} finally {
  await tdb.drop();
}
