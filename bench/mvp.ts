// The seed's MVP approach (seed 000, "Otimização de Banco"): every statement goes through the `mysql`
// command-line client in a subprocess — here Debian's `mariadb` client (mariadb-client-core, the same
// program). One subprocess per document upsert (the MVP wrote each document's parts in one statement)
// and one per page for the cursor ("ao final de cada lote"). The rows are the store's, mapped before the
// clock starts (as for the ceiling), so only the write approach differs. Workers run feeds in parallel
// like the MVP's ThreadPoolExecutor (`sync_full_all.py --concurrency 3`).
import { spawn } from "node:child_process";
import type { PoolConnection } from "mysql2/promise";
import { createMysqlPool, parseMysqlUrl } from "../libs/db/pool.js";
import { DOCUMENT_COLUMNS, EVENT_COLUMNS } from "../services/store/mapping/item-rows.js";
import { benchTables, createBenchTables, DOC_TAIL, dropBenchTables, EVENT_TAIL, type MappedFeed } from "./ceiling.js";

export interface MvpResult {
  documents: number;
  statements: number;
  seconds: number;
  docsPerSecond: number;
  concurrency: number;
}

function mariadbClient(url: string, sql: string): Promise<void> {
  const p = parseMysqlUrl(url);
  return new Promise((resolve, reject) => {
    const child = spawn(
      "mariadb",
      ["--no-defaults", "-h", p.host, "-P", String(p.port), "-u", p.user, "--default-character-set=utf8mb4", p.database],
      {
        env: { PATH: process.env.PATH, MYSQL_PWD: p.password },
        stdio: ["pipe", "ignore", "pipe"],
      },
    );
    let err = "";
    child.stderr.on("data", (c: Buffer) => (err += c.toString("utf8")));
    child.once("error", reject);
    child.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`mariadb exited ${code}: ${err.slice(0, 500)}`))));
    child.stdin.end(sql);
  });
}

export async function runMvp(
  mysqlUrl: string,
  feeds: MappedFeed[],
  sample: number,
  concurrency: number,
  prefix = "bench_mvp",
): Promise<MvpResult> {
  const pool = createMysqlPool(mysqlUrl, { connectionLimit: 1 });
  const conn: PoolConnection = await pool.getConnection();
  const workers = Math.max(1, Math.min(concurrency, feeds.length));
  const perWorker = Math.ceil(sample / workers);
  const ibges = feeds.slice(0, workers).map((f) => f.ibge);
  try {
    await createBenchTables(conn, prefix, ibges);
    // Statement texts are built before the clock starts (the MVP's string building is not what is measured).
    const scripts: string[][] = feeds.slice(0, workers).map((f) => {
      const t = benchTables(prefix, f.ibge);
      const out: string[] = [];
      let taken = 0;
      for (const page of f.pages) {
        if (taken >= perWorker) break;
        let highest = 0n;
        for (const r of page.slice(0, perWorker - taken)) {
          taken++;
          if (r.nsu > highest) highest = r.nsu;
          if (r.kind === "document") {
            out.push(conn.format(`INSERT INTO ${t.documentos} (${DOCUMENT_COLUMNS.join(", ")}) VALUES (?) ${DOC_TAIL};`, [r.values]));
          } else if (r.kind === "event") {
            out.push(conn.format(`INSERT INTO ${t.eventos} (${EVENT_COLUMNS.join(", ")}) VALUES (?) ${EVENT_TAIL};`, [r.values]));
          }
        }
        out.push(
          conn.format(`UPDATE \`${prefix}_cursor\` SET last_nsu = GREATEST(last_nsu, ?) WHERE ibge = ?;`, [highest.toString(), f.ibge]),
        );
      }
      return out;
    });
    const documents = scripts.reduce((n, s) => n + s.filter((x) => x.startsWith("INSERT")).length, 0);
    const statements = scripts.reduce((n, s) => n + s.length, 0);
    const t0 = performance.now();
    await Promise.all(
      scripts.map(async (stmts) => {
        for (const sql of stmts) await mariadbClient(mysqlUrl, `SET time_zone = '+00:00';\n${sql}\n`);
      }),
    );
    const seconds = (performance.now() - t0) / 1000;
    // Sanity: every statement landed.
    let stored = 0;
    for (const ibge of ibges) {
      const t = benchTables(prefix, ibge);
      const [rows] = await conn.query(`SELECT (SELECT COUNT(*) FROM ${t.documentos}) + (SELECT COUNT(*) FROM ${t.eventos}) AS n`);
      stored += Number((rows as { n: number }[])[0]!.n);
    }
    if (stored !== documents) throw new Error(`mvp: ${stored} rows stored, ${documents} expected`);
    await dropBenchTables(conn, prefix, ibges);
    return { documents, statements, seconds, docsPerSecond: documents / seconds, concurrency: workers };
  } finally {
    conn.release();
    await pool.end();
  }
}
