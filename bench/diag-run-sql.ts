// Diagnostic for the cost of beginning and finishing runs (decision 0036): F feeds begun and finished one
// by one (BeginRun/FinishRun, one transaction each) against the same F feeds in batches of B
// (BeginRuns/FinishRuns), through the store's own repository on a throwaway database of MYSQL_URL, over
// one pooled connection. Per run it prints this process's CPU (the store's repo code and mysql2, no RPC),
// the statements the session sent (its `Questions`) and MariaDB's CPU for them (session query profiling,
// CPU_USER + CPU_SYSTEM, a separate pass so the profiling's own statements do not count in the first
// two). The modes alternate, several rounds each; medians are printed.
//   npx tsx bench/diag-run-sql.ts [feeds=128] [batch=32] [rounds=5]
import { join } from "node:path";
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import { projectRoot } from "../libs/config/paths.js";
import { migrate } from "../libs/db/migrate.js";
import { createPageTokens } from "../libs/rpc/page-token.js";
import { parseFeed, type Feed } from "../services/store/codes.js";
import { beginRuns } from "../services/store/repo/begin-runs.js";
import type { StoreDb } from "../services/store/repo/context.js";
import { finishRuns } from "../services/store/repo/finish-runs.js";
import { registerMunicipality } from "../services/store/repo/municipalities.js";
import { beginRun, finishRun } from "../services/store/repo/runs.js";
import { feedOf } from "../services/store/testing/fixtures.js";
import { createThrowawayDatabase } from "../test/support/mysql.js";

const FEEDS = Number(process.argv[2] ?? 128);
const BATCH = Number(process.argv[3] ?? 32);
const ROUNDS = Number(process.argv[4] ?? 5);
const UFS: Record<string, string> = { "35": "SP" };

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const tdb = await createThrowawayDatabase();
try {
  await migrate(tdb.pool, join(projectRoot(), "migrations"));
  const db: StoreDb = {
    pool: tdb.newPool({ connectionLimit: 1 }),
    statementBudgetBytes: 16 * 1024 * 1024,
    tokens: createPageTokens({ secret: Buffer.from("k".repeat(32)), errorDomain: "malha.store" }),
  };
  // Codes of São Paulo's prefix (35…): the store checks the 7 digits and the UF prefix only.
  const feeds: Feed[] = [];
  for (let i = 0; i < FEEDS; i++) {
    const ibge = `35${String(10000 + i * 7).padStart(5, "0")}`;
    const feed = parseFeed(feedOf(ibge));
    await registerMunicipality(db, {
      ibge: feed.ibge,
      name: `M ${ibge}`,
      uf: UFS["35"]!,
      active: true,
      feeds: [{ ambiente: feed.ambiente, tipoNsu: feed.tipoNsu }],
    });
    feeds.push(feed);
  }
  const session = async <T>(work: (conn: PoolConnection) => Promise<T>): Promise<T> => {
    const conn = await db.pool.getConnection();
    try {
      return await work(conn);
    } finally {
      conn.release();
    }
  };
  const questions = () =>
    session(async (conn) => Number((await conn.query<RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Questions'"))[0][0]!.Value));
  /** Server CPU of the session's statements not seen before (profiling on), and turns profiling on again. */
  const seen = new Set<number>();
  const profiled = () =>
    session(async (conn) => {
      await conn.query("SET profiling = 0");
      const [rows] = await conn.query<RowDataPacket[]>(
        "SELECT QUERY_ID AS id, SUM(CPU_USER + CPU_SYSTEM) AS cpu FROM information_schema.PROFILING GROUP BY QUERY_ID",
      );
      const [queries] = await conn.query<RowDataPacket[]>("SHOW PROFILES");
      const text = new Map(queries.map((q) => [Number(q.Query_ID), String(q.Query)]));
      let cpu = 0;
      for (const r of rows) {
        const id = Number(r.id);
        const sql = text.get(id);
        if (seen.has(id) || sql === undefined || /^SET profiling|^SHOW |information_schema\.PROFILING/.test(sql)) continue;
        seen.add(id);
        cpu += Number(r.cpu ?? 0);
      }
      await conn.query("SET profiling = 1");
      return cpu;
    });

  let fence = 0n;
  /** One round: every feed begun and finished once, one by one (B = 1) or in batches of B. */
  async function round(batch: number, profile: boolean): Promise<number> {
    fence++;
    let serverCpu = 0;
    for (let i = 0; i < feeds.length; i += batch) {
      const part = feeds.slice(i, i + batch);
      const begins = part.map((feed) => ({ feed, holder: "diag", fence, trigger: "scheduled", pool: "incremental" }));
      const finishing = (runIds: string[]) =>
        part.map((feed, j) => ({
          feed,
          runId: runIds[j]!,
          fence,
          outcome: "yielded",
          errorMessage: "",
          nextEligibleAt: null,
          cooldownUntil: null,
        }));
      if (batch === 1) {
        const begun = await beginRun(db, begins[0]!);
        if (profile) serverCpu += await profiled();
        await finishRun(db, finishing([begun.run.runId])[0]!);
      } else {
        const begun = await beginRuns(db, begins);
        if (profile) serverCpu += await profiled();
        const done = await finishRuns(db, finishing(begun.map((b) => (b.ok ? b.value.run.runId : "0"))));
        if (!done.every((d) => d.ok) || !begun.every((b) => b.ok)) throw new Error("a run was refused");
      }
      if (profile) serverCpu += await profiled();
    }
    return serverCpu;
  }

  await round(1, false);
  await round(BATCH, false);
  await session((conn) => conn.query("SET profiling_history_size = 100").then(() => undefined));
  await profiled();
  const figures: Record<string, { cpu: number[]; statements: number[]; server: number[] }> = {};
  for (let r = 0; r < ROUNDS; r++) {
    for (const batch of [1, BATCH]) {
      const label = batch === 1 ? "one by one" : `batches of ${batch}`;
      const f = (figures[label] ??= { cpu: [], statements: [], server: [] });
      const q0 = await questions();
      const c0 = process.cpuUsage();
      await round(batch, false);
      const c = process.cpuUsage(c0);
      const q = (await questions()) - q0 - 1;
      f.cpu.push((c.user + c.system) / 1000 / FEEDS);
      f.statements.push(q / FEEDS);
      f.server.push((1000 * (await round(batch, true))) / FEEDS);
    }
  }
  console.log(`${FEEDS} feeds, ${ROUNDS} rounds per mode, alternating; per run (begin + finish), median:`);
  for (const [label, f] of Object.entries(figures)) {
    console.log(
      `${label.padEnd(16)} this process ${median(f.cpu).toFixed(3)} CPU-ms, ${median(f.statements).toFixed(2)} statements, MariaDB ${median(f.server).toFixed(3)} CPU-ms`,
    );
  }
} finally {
  await tdb.drop();
}
