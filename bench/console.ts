// `npm run bench:console`: how fast the console's Sincronização page is with many feeds (issue #22: under
// 1 s with 1,000 feeds on the dev stack). Real store, coordinator and console processes on a throwaway
// MariaDB database and the stack's NATS; Debian's chromium loads the page. A benchmark, not a test: it
// prints figures and "met" / "MISSED", and asserts nothing. Flags (or BENCH_CONSOLE_* env):
//   --feeds N (1000)   municipalities registered, one feed each
//   --reps R (10)      page loads measured (after 2 unmeasured)
//   --tsx              services from source under tsx instead of compiled dist/ (bench/runtime.ts)
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import { launchChromium } from "../test/support/browser.js";
import { buildConsoleApp, writeUsersFile } from "../test/support/console-app.js";
import { createThrowawayDatabase } from "../test/support/mysql.js";
import { startService, type ServiceProcess } from "../test/support/service-process.js";
import { DEFAULT_PAGE_SIZE } from "../services/console/sync-view.js";
import { prepareRuntime } from "./runtime.js";
import { median } from "./stats.js";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const text = i >= 0 ? process.argv[i + 1] : process.env[`BENCH_CONSOLE_${name.toUpperCase()}`];
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1) throw new Error(`--${name}: not a positive integer: ${text}`);
  return n;
}

const FEEDS = flag("feeds", 1000);
const REPS = flag("reps", 10);
const TARGET_MS = 1000;
/** UFs with their IBGE state prefix (the store checks that an ibge starts with its UF's code). */
const UFS: [string, number][] = [
  ["SP", 35],
  ["RJ", 33],
  ["MG", 31],
  ["PR", 41],
  ["RS", 43],
  ["BA", 29],
  ["PE", 26],
  ["CE", 23],
  ["GO", 52],
  ["SC", 42],
  ["PA", 15],
  ["AM", 13],
  ["MT", 51],
  ["ES", 32],
  ["DF", 53],
  ["MA", 21],
  ["PB", 25],
  ["RN", 24],
  ["AL", 27],
  ["PI", 22],
];
const USER = { user: "bench", role: "read-only" as const, token: `bench-${randomBytes(12).toString("hex")}` };

const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.95) - 1)]!;

async function main() {
  if (!process.env.NATS_URL || !process.env.MYSQL_URL) throw new Error("export NATS_URL and MYSQL_URL (bash scripts/stack.sh start)");
  const runtime = prepareRuntime(log);
  const dir = mkdtempSync(join(tmpdir(), "malha-bench-console-"));
  const procs: ServiceProcess[] = [];
  const db = await createThrowawayDatabase();
  try {
    log(`building the web app; starting store, coordinator and console (${runtime.label})`);
    const opts = { compiled: runtime.compiled };
    const [store] = await Promise.all([startService("store", { MYSQL_URL: db.url }, opts), buildConsoleApp(join(dir, "app"))]);
    procs.push(store);
    // No gateway and an hourly sweep: the coordinator's first sweep runs before anything is registered, so
    // nothing syncs while the page is measured; the list is what an operator of 1,000 idle feeds sees.
    const coordinator = await startService(
      "coordinator",
      {
        NATS_URL: process.env.NATS_URL,
        STORE_URL: store.baseUrl,
        ADN_GATEWAY_URL: "http://127.0.0.1:1",
        VAULT_URL: "http://127.0.0.1:1",
        COORDINATOR_LEASE_BUCKET: `leases_bench_console_${randomBytes(4).toString("hex")}`,
        NFSE_SYNC_INTERVAL_SECONDS: "3600",
      },
      opts,
    );
    procs.push(coordinator);
    writeUsersFile(join(dir, "users"), [USER]);
    const console_ = await startService(
      "console",
      {
        COORDINATOR_URL: coordinator.baseUrl,
        STORE_URL: store.baseUrl,
        CONSOLE_USERS_FILE: join(dir, "users"),
        CONSOLE_SESSION_SECRET: randomBytes(32).toString("hex"),
        CONSOLE_STATIC_DIR: join(dir, "app"),
        CONSOLE_HTTP_HOST: "127.0.0.1",
        CONSOLE_HTTP_PORT: "0",
      },
      opts,
    );
    procs.push(console_);
    const listening = console_.lines.find((l) => l.includes('"msg":"console listening"'))!;
    const url = `http://127.0.0.1:${(JSON.parse(listening) as { httpPort: number }).httpPort}`;

    log(`registering ${FEEDS} municipalities`);
    const storeClient = createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
    const queue = Array.from({ length: FEEDS }, (_, i) => i);
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const [uf, prefix] = UFS[i % UFS.length]!;
          await storeClient.registerMunicipality({
            ibge: `${prefix}${String(10_000 + i).padStart(5, "0")}`,
            name: `Município de Teste ${i}`,
            uf,
            active: true,
            feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
          });
        }
      }),
    );

    const session = await fetch(`${url}/api/session`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-malha-console": "1" },
      body: JSON.stringify({ user: USER.user, token: USER.token }),
    });
    const cookie = session.headers.get("set-cookie")!.split(";")[0]!;
    const api = async (path: string) => {
      const t0 = performance.now();
      const res = await fetch(`${url}${path}`, { headers: { cookie } });
      const body = (await res.json()) as { feeds: unknown[] };
      return { ms: performance.now() - t0, rows: body.feeds.length };
    };

    const browser = await launchChromium();
    const [name, value] = cookie.split("=") as [string, string];
    // Each load in a fresh context: an empty cache, as an operator opening the console for the first time.
    const load = async () => {
      const context = await browser.newContext({ locale: "pt-BR", timezoneId: "America/Sao_Paulo" });
      await context.addCookies([{ name, value, url }]);
      const page = await context.newPage();
      const t0 = performance.now();
      await page.goto(url);
      await page.locator('table.feeds[data-loaded="yes"] tbody tr').first().waitFor();
      const ms = performance.now() - t0;
      const rows = await page.locator("table.feeds tbody tr").count();
      // Where the time went, from the page's own clock (ms since navigation start).
      // (A string: this file is type-checked without the DOM library.)
      const phases = (await page.evaluate(`(() => {
        const nav = performance.getEntriesByType("navigation")[0];
        const res = performance.getEntriesByType("resource");
        const end = (path) => res.find((r) => new URL(r.name).pathname === path)?.responseEnd ?? NaN;
        return {
          html: nav.responseEnd,
          script: res.find((r) => r.name.endsWith(".js"))?.responseEnd ?? NaN,
          me: end("/api/me"),
          feeds: end("/api/feeds"),
          rendered: performance.getEntriesByName("malha:feeds-rendered")[0]?.startTime ?? NaN,
        };
      })()`)) as Record<string, number>;
      await context.close();
      return { ms, rows, phases };
    };
    const loads: number[] = [];
    const phases: Record<string, number[]> = {};
    let rows = 0;
    for (let i = 0; i < REPS + 2; i++) {
      const r = await load();
      rows = r.rows;
      if (i < 2) continue;
      loads.push(r.ms);
      for (const [k, v] of Object.entries(r.phases)) (phases[k] ??= []).push(v);
    }
    await browser.close();

    const apiCases: [string, string][] = [
      [`first page (default size, ${DEFAULT_PAGE_SIZE})`, "/api/feeds"],
      ["a page of 1,000 feeds", "/api/feeds?pageSize=1000"],
      ["name filter, broad (all match)", `/api/feeds?q=${encodeURIComponent("teste")}`],
      ["name filter, one municipality", `/api/feeds?q=${encodeURIComponent(`Teste ${FEEDS - 1}`)}`],
      ["UF filter (1 in 20)", "/api/feeds?uf=RJ"],
      ["state filter (error: none)", "/api/feeds?state=error"],
    ];
    const apiRows: string[] = [];
    for (const [label, path] of apiCases) {
      const samples: number[] = [];
      let n = 0;
      for (let i = 0; i < REPS + 2; i++) {
        const r = await api(path);
        n = r.rows;
        if (i >= 2) samples.push(r.ms);
      }
      apiRows.push(`| GET ${label} | ${n} rows | ${median(samples).toFixed(0)} ms | ${p95(samples).toFixed(0)} ms |`);
    }

    const med = median(loads);
    const out = [
      `Console bench: ${FEEDS} feeds, ${REPS} measured loads (services ${runtime.label})`,
      "",
      "| what | rows | median | p95 |",
      "| --- | --- | --- | --- |",
      `| Sincronização: navigation → table rendered, page clock (chromium, cold cache) | ${rows} rows | ${median(phases.rendered!).toFixed(0)} ms | ${p95(phases.rendered!).toFixed(0)} ms |`,
      `| the same seen from playwright (goto → rows found) | ${rows} rows | ${med.toFixed(0)} ms | ${p95(loads).toFixed(0)} ms |`,
      ...apiRows,
      "",
      `page load phases (median ms since navigation start): ${Object.entries(phases)
        .map(([k, v]) => `${k} ${median(v).toFixed(0)}`)
        .join(", ")}`,
      "",
      `target: page load < ${TARGET_MS} ms → ${median(phases.rendered!) < TARGET_MS ? "met" : "MISSED"} (median ${median(phases.rendered!).toFixed(0)} ms, page clock)`,
      `load average while measuring: ${loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")} on ${cpus().length} CPUs`,
    ];
    process.stdout.write(`${out.join("\n")}\n`);
  } finally {
    for (const p of procs.reverse()) p.kill("SIGKILL");
    await db.drop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
