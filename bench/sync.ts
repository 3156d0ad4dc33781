// `npm run bench:sync`: the NFS-e sync path against its ceiling and the seed's MVP, in ONE run, printed as
// one table. See bench/README.md for what each figure means. Flags (or BENCH_SYNC_* env, e.g. BENCH_SYNC_DOCUMENTS):
//   --municipalities N (10)     --documents M (4000)        --reps R (3)          --page-size P (50)
//   --rss-factor F (2)          one more ingest at M×F to see whether peak RSS grows with M (0 = skip)
//   --latency-ms L (150)        --latency-documents D (3000) --latency-reps (3)
//   --mvp-sample S (200)        --mvp-concurrency C (3)      --parse-reps (3)
//   --bootstrap-concurrency B (N) --profile DIR (write --cpu-prof profiles of each service there)
//   --warmup-municipalities W (N) more feeds of M entries each mesh ingests first, unmeasured (0 = measure cold)
//   --warmup-ingests I (2)      that many warm-up ingests of W feeds, one after the other
//   --tsx                       run the services from source under tsx instead of compiled dist/ (bench/runtime.ts)
//   --service-node-options "…"  NODE_OPTIONS for store, gateway and coordinator (e.g. "--max-old-space-size=128")
//   --service-env "K=V …"       more env of the three services (e.g. "STORE_DECODE_THREADS=1")
import { cpus } from "node:os";
import { resolve } from "node:path";
import { runCeiling, mapFeeds, type CeilingResult } from "./ceiling.js";
import { runIngest, SERVICES, type IngestResult, type Meter } from "./e2e.js";
import { runMvp, type MvpResult } from "./mvp.js";
import { cpuSeconds, untilQuiet } from "./procstat.js";
import { median } from "./stats.js";
import { runParse, type ParseResult } from "./parse.js";
import { prepareRuntime } from "./runtime.js";
import { describeStoreStages, type StoreStages } from "./store-stages.js";
import type { FeedPages } from "./workload.js";

function flag(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const env = process.env[`BENCH_SYNC_${name.toUpperCase().replace(/-/g, "_")}`];
  const text = i >= 0 ? process.argv[i + 1] : env;
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isFinite(n) || n < 0) throw new Error(`--${name}: not a number: ${text}`);
  return n;
}
function textFlag(name: string): string | undefined {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? process.argv[i + 1] : process.env[`BENCH_SYNC_${name.toUpperCase().replace(/-/g, "_")}`];
}

const N = flag("municipalities", 10);
const M = flag("documents", 4000);
const REPS = Math.max(1, flag("reps", 3));
const PAGE = flag("page-size", 50);
const RSS_FACTOR = flag("rss-factor", 2);
// V8's default young generation on 64-bit Node 20: two semi-spaces of up to 16 MB (the "flat" check below).
const YOUNG_GENERATION_MB = 32;
const LAT_MS = flag("latency-ms", 150);
const LAT_DOCS = flag("latency-documents", 3000);
const LAT_REPS = Math.max(1, flag("latency-reps", 3));
const MVP_SAMPLE = flag("mvp-sample", 200);
const MVP_CONC = Math.max(1, flag("mvp-concurrency", 3));
const PARSE_REPS = Math.max(1, flag("parse-reps", 3));
const BOOT = Math.max(1, flag("bootstrap-concurrency", N));
const WARMUP = flag("warmup-municipalities", N);
const WARMUP_INGESTS = Math.max(1, flag("warmup-ingests", 2));
const PROFILE = textFlag("profile");
const NODE_OPTS = textFlag("service-node-options");
const SERVICE_ENV = Object.fromEntries(
  (textFlag("service-env") ?? "")
    .split(/\s+/)
    .filter(Boolean)
    .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
);
const SERVICE_OPTS = { ...(NODE_OPTS ? { serviceNodeOptions: NODE_OPTS } : {}), extraServiceEnv: SERVICE_ENV };

const fmt = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);

async function main() {
  if (!process.env.NATS_URL || !process.env.MYSQL_URL) throw new Error("export NATS_URL and MYSQL_URL (bash scripts/stack.sh start)");
  const runtime = prepareRuntime(log);
  const switches = { pageSize: PAGE };
  const ingests: IngestResult[] = [];
  const ceilings: CeilingResult[] = [];
  const mvps: MvpResult[] = [];
  const parses: ParseResult[] = [];
  const ceilingCpuPer1k: number[] = [];
  let feedsForParse: FeedPages[] | undefined;

  // (1)–(3): each repetition is a fresh mesh; the ceiling and the MVP sample run right after catch-up on the
  // same database server, so every ratio is paired within one repetition.
  for (let rep = 1; rep <= REPS; rep++) {
    log(`ingest ${rep}/${REPS}: ${N} municipalities × ${M} entries`);
    const r = await runIngest({
      municipalities: N,
      ...(WARMUP > 0 ? { warmupMunicipalities: WARMUP, warmupIngests: WARMUP_INGESTS } : {}),
      feedSize: M,
      switches,
      bootstrapConcurrency: BOOT,
      ...SERVICE_OPTS,
      ...(PROFILE && rep === 1 ? { profileDir: resolve(PROFILE, "ingest") } : {}),
      after: async (mesh, feeds, mariadbPid) => {
        const mapped = mapFeeds(feeds);
        const settled = mariadbPid ? await untilQuiet(mariadbPid) : 0;
        log(`  ceiling ${rep}/${REPS} (MariaDB settled after ${settled.toFixed(1)} s)`);
        const self0 = process.cpuUsage();
        const db0 = mariadbPid ? cpuSeconds(mariadbPid) : undefined;
        const c = await runCeiling(mesh.db.url, mapped);
        const self = process.cpuUsage(self0);
        const db1 = mariadbPid ? cpuSeconds(mariadbPid) : undefined;
        ceilingCpuPer1k.push(
          (1000 * ((self.user + self.system) / 1e6 + (db0 !== undefined && db1 !== undefined ? db1 - db0 : 0))) / c.documents,
        );
        ceilings.push(c);
        if (MVP_SAMPLE > 0) {
          log(`  MVP sample ${rep}/${REPS}: ${MVP_SAMPLE} documents through the mariadb CLI`);
          mvps.push(await runMvp(mesh.db.url, mapped, MVP_SAMPLE, MVP_CONC));
        }
        feedsForParse ??= feeds;
      },
    });
    ingests.push(r);
    log(
      `  ${fmt(r.docsPerSecond)} docs/s end to end, ceiling ${fmt(ceilings.at(-1)!.docsPerSecond)} docs/s${r.verified ? "" : "  (ROW COUNT MISMATCH)"}`,
    );
  }

  // Peak RSS as M grows: one more ingest at M × factor.
  let bigger: IngestResult | undefined;
  if (RSS_FACTOR > 0 && RSS_FACTOR !== 1) {
    log(`ingest at ${fmt(M * RSS_FACTOR)} entries per feed (RSS vs M)`);
    bigger = await runIngest({
      municipalities: N,
      feedSize: Math.round(M * RSS_FACTOR),
      switches,
      bootstrapConcurrency: BOOT,
      ...SERVICE_OPTS,
    });
  }

  // (4) latency hiding: one feed, simulator latency per call.
  const latency: IngestResult[] = [];
  for (let rep = 1; rep <= LAT_REPS && LAT_MS > 0; rep++) {
    log(`latency ${rep}/${LAT_REPS}: 1 feed × ${LAT_DOCS}, ${LAT_MS} ms per call`);
    latency.push(
      await runIngest({
        municipalities: 1,
        feedSize: LAT_DOCS,
        switches: { ...switches, latencyMs: LAT_MS },
        bootstrapConcurrency: 1,
        trackCommits: true,
        ...SERVICE_OPTS,
        ...(PROFILE ? { profileDir: resolve(PROFILE, "latency") } : {}),
      }),
    );
  }

  // (5) parse cost on this one thread.
  for (let rep = 1; rep <= PARSE_REPS && feedsForParse; rep++) parses.push(runParse(feedsForParse));

  // ---- the table ----
  const rows: [string, string, string][] = [];
  const add = (what: string, value: string, target = "") => rows.push([what, value, target]);
  const ok = (met: boolean) => (met ? "met" : "MISSED");
  const mix = ingests[0]!.mix;
  add(
    "workload",
    `${N} feeds × ${fmt(M)} NSUs; ${fmt(mix.visible)} distributed per run: ${fmt(mix.notes)} NFS-e (${fmt((100 * mix.notes) / mix.visible, 1)}%), ${fmt(mix.events)} events (${fmt((100 * mix.events) / mix.visible, 1)}%)`,
  );
  add(
    "",
    `not in lote=true batches: ${fmt(mix.hidden)} hidden NSUs + ${fmt(mix.holes)} true holes; avg XML ${fmt(mix.avgXmlBytes)} B; page ${PAGE}`,
  );
  add("repetitions", `${REPS} × (ingest + ceiling${MVP_SAMPLE > 0 ? " + MVP sample" : ""}); medians below`);
  if (WARMUP > 0)
    add(
      "warm-up",
      `${WARMUP_INGESTS} × ${WARMUP} more feeds × ${fmt(M)} NSUs ingested first by each mesh, one ingest after the other, unmeasured (the first: (1a))`,
    );
  add("", `all rows verified: ${ingests.every((r) => r.verified) ? "yes" : "NO"}`);

  const e2e = median(ingests.map((r) => r.docsPerSecond));
  const ceil = median(ceilings.map((c) => c.docsPerSecond));
  const ratios = ingests.map((r, i) => r.docsPerSecond / ceilings[i]!.docsPerSecond);
  add(
    "(1) end-to-end ingest",
    `${fmt(e2e)} docs/s  (runs: ${ingests.map((r) => fmt(r.docsPerSecond)).join(", ")}; wall incl. scheduling ${fmt(median(ingests.map((r) => r.wallSeconds)), 1)} s)`,
  );
  if (bigger)
    add(
      `    at M=${fmt(bigger.feedSize)} (1 run)`,
      `${fmt(bigger.docsPerSecond)} docs/s, ${fmt(bigger.documents)} docs; ${fmt((bigger.docsPerSecond / median(ceilings.map((c) => c.docsPerSecond))) * 100, 1)}% of the median ceiling`,
    );
  const meters: Meter[] = [...SERVICES, "sim+bench", "mariadbd"];
  for (const m of meters) {
    const per1k = ingests
      .map((r) => (r.cpuSeconds[m] !== undefined ? (1000 * r.cpuSeconds[m]!) / r.documents : NaN))
      .filter((x) => !Number.isNaN(x));
    if (per1k.length === 0) continue;
    add(
      `    CPU s / 1,000 docs: ${m}`,
      `${fmt(median(per1k), 3)}${m === "mariadbd" ? "  (the whole server: includes any other client of the stack)" : m === "sim+bench" ? "  (ADN simulator, in the bench process)" : ""}`,
    );
  }
  const allCpu = (r: IngestResult) => Object.values(r.cpuSeconds).reduce((a, b) => a + (b ?? 0), 0);
  const totalCpu = median(ingests.map((r) => (1000 * allCpu(r)) / r.documents));
  add("    CPU s / 1,000 docs: all", fmt(totalCpu, 3));
  const warmups = ingests.flatMap((r) => (r.warmup ? [{ r, w: r.warmup }] : []));
  if (warmups.length > 0) {
    // Paired in each mesh: its first ingest (code not yet optimized) against the measured one after it.
    const servicesAndDb = (r: IngestResult) => allCpu(r) - (r.cpuSeconds["sim+bench"] ?? 0);
    add(
      "(1a) the warm-up ingest (cold)",
      `${fmt(median(warmups.map(({ w }) => w.docsPerSecond)))} docs/s; services + mariadbd ${fmt(median(warmups.map(({ w }) => w.cpuPer1k)), 3)} CPU-s / 1,000 docs against ${fmt(median(warmups.map(({ r }) => (1000 * servicesAndDb(r)) / r.documents)), 3)} in (1)`,
    );
  }
  // The share of the machine the mesh kept busy: end to end / ceiling = that share × the cores × the
  // ceiling's time per document ÷ the mesh's CPU per document (bench/README.md, 2026-12-03).
  const cores = cpus().length;
  const busy = ingests.map((r) => (r.docsPerSecond * allCpu(r)) / r.documents / cores);
  add("    cores kept busy", `${fmt(100 * median(busy), 1)}% of ${cores}  (runs: ${busy.map((b) => `${fmt(100 * b, 1)}%`).join(", ")})`);
  const stages = ingests.flatMap((r) => (r.storeStages ? [r.storeStages] : []));
  if (stages.length > 0) {
    const mid = (f: (x: StoreStages) => number) => median(stages.map(f));
    add(
      "    store: decode, writing",
      describeStoreStages({
        pages: mid((x) => x.pages),
        decodeMs: mid((x) => x.decodeMs),
        calls: mid((x) => x.calls),
        writeMs: mid((x) => x.writeMs),
      }),
    );
  }
  for (const s of SERVICES) {
    const small = Math.max(...ingests.map((r) => r.peakRssMb[s] ?? 0));
    const big = bigger?.peakRssMb[s];
    // "Flat": at M × factor the peak is at most 15 % above the largest peak at M (GC timing varies), or at
    // most one young generation above it: V8 sizes that (up to 2 × 16 MB semi-spaces) by the allocation
    // rate, not by M, so a small process (the coordinator: ≈ 85 MB) can gain 20 % from it alone.
    const flat = big === undefined || big <= Math.max(small * 1.15, small + YOUNG_GENERATION_MB);
    const met = small <= 256 && (big === undefined || big <= 256) && flat;
    const growth = big !== undefined ? ` (${big >= small ? "+" : ""}${fmt((100 * (big - small)) / small)}%)` : "";
    const atStart = median(ingests.map((r) => r.startRssMb[s] ?? 0));
    add(
      `    peak RSS: ${s}`,
      `${fmt(small)} MB at M=${fmt(M)} (${fmt(atStart)} MB once serving)${big !== undefined ? `; ${fmt(big)} MB at M=${fmt(bigger!.feedSize)}${growth}` : ""}`,
      `≤ 256 MB${big !== undefined ? ", flat" : ""}: ${ok(met)}`,
    );
  }
  // Where the peaks went, in the first ingest at M and in the one at M × F (sampled twice a second; a peak
  // between samples is missed).
  for (const line of ingests[0]?.memory ?? []) add("", line);
  for (const line of bigger?.memory ?? []) add(`    at M=${fmt(bigger!.feedSize)}`, line);
  add("(2) ceiling (1 mysql2 conn)", `${fmt(ceil)} docs/s  (runs: ${ceilings.map((c) => fmt(c.docsPerSecond)).join(", ")})`);
  add(
    "    CPU s / 1,000 docs: ceiling",
    `${fmt(median(ceilingCpuPer1k), 3)} (writer process + mariadbd; parse and mapping done beforehand)`,
  );
  add(
    "    end-to-end / ceiling",
    `${fmt(100 * median(ratios), 1)}%  (paired per run: ${ratios.map((x) => `${fmt(100 * x, 1)}%`).join(", ")})`,
    `≥ 50%: ${ok(median(ratios) >= 0.5)}`,
  );
  if (mvps.length > 0) {
    const mvp = median(mvps.map((x) => x.docsPerSecond));
    const speedups = ingests.map((r, i) => r.docsPerSecond / mvps[i]!.docsPerSecond);
    add(
      "(3) seed MVP (mariadb CLI per stmt)",
      `${fmt(mvp, 1)} docs/s  (${mvps[0]!.documents} docs, ${mvps[0]!.statements} subprocesses, ${mvps[0]!.concurrency} workers; runs: ${mvps.map((x) => fmt(x.docsPerSecond, 1)).join(", ")})`,
    );
    add("    ceiling / MVP", `${fmt(median(ceilings.map((c, i) => c.docsPerSecond / mvps[i]!.docsPerSecond)), 1)}×`);
    add(
      "    end-to-end / MVP",
      `${fmt(median(speedups), 1)}×  (paired: ${speedups.map((x) => `${fmt(x, 1)}×`).join(", ")})`,
      // A figure, not a target (issue #20): on a quiet machine the ceiling itself is only ≈ 70–80× the MVP.
      "(a figure)",
    );
  }
  if (latency.length > 0) {
    const bound = PAGE / (LAT_MS / 1000);
    const lat = median(latency.map((r) => r.docsPerSecond));
    const calls = latency[0]!.calls;
    add(
      "(4) latency hiding",
      `${fmt(lat, 1)} docs/s, 1 feed, ${LAT_MS} ms/call, ${fmt(latency[0]!.documents)} docs in ${calls} calls (runs: ${latency.map((r) => fmt(r.docsPerSecond, 1)).join(", ")})`,
    );
    add("    bound: page ÷ latency", `${fmt(bound, 1)} docs/s → ${fmt((100 * lat) / bound, 1)}% of it`, `≥ 90%: ${ok(lat / bound >= 0.9)}`);
    const callBound = latency[0]!.documents / ((calls * LAT_MS) / 1000);
    add("    bound incl. the final empty call", `${fmt(callBound, 1)} docs/s → ${fmt((100 * lat) / callBound, 1)}% of it`);
    const steady = latency.map((r) => r.steadyBatchMs).filter((x): x is number => x !== undefined);
    if (steady.length > 0) {
      const ms = median(steady);
      add(
        "    steady state (after 5 batches)",
        `${fmt(ms)} ms per batch of ${PAGE} → ${fmt(PAGE / (ms / 1000), 1)} docs/s = ${fmt((100 * PAGE) / (ms / 1000) / bound, 1)}% of the bound`,
      );
    }
  }
  if (parses.length > 0) {
    add(
      "(5) parse, 1 thread: decodeItem",
      `${fmt(median(parses.map((p) => p.decodeDocsPerSecond)))} docs/s  (${fmt(parses[0]!.documents)} docs × ${parses.length})`,
    );
    add("    decodeItem + store itemRow", `${fmt(median(parses.map((p) => p.decodeAndMapDocsPerSecond)))} docs/s`);
    add("    end-to-end / parse alone", `${fmt((100 * e2e) / median(parses.map((p) => p.decodeDocsPerSecond)), 1)}%`);
  }

  const w0 = Math.max(...rows.map((r) => r[0].length));
  const w1 = Math.min(110, Math.max(...rows.map((r) => r[1].length)));
  const line = `${"-".repeat(w0)}-+-${"-".repeat(w1)}-+-${"-".repeat(22)}`;
  console.log(
    `\nNFS-e sync benchmark — ${new Date().toISOString()} — ${(await import("node:os")).cpus().length} CPUs, node ${process.version}, services ${runtime.label}${NODE_OPTS ? `, NODE_OPTIONS=${NODE_OPTS}` : ""}${
      Object.keys(SERVICE_ENV).length
        ? `, env ${Object.entries(SERVICE_ENV)
            .map(([k, v]) => `${k}=${v}`)
            .join(" ")}`
        : ""
    }`,
  );
  console.log(line);
  for (const [a, b, c] of rows) console.log(`${a.padEnd(w0)} | ${b.padEnd(w1)} | ${c}`);
  console.log(line);
  if (PROFILE)
    console.log(`CPU profiles: ${resolve(PROFILE)}/{ingest,latency}/<service>/*.cpuprofile (bench/profile-top.ts summarises them)`);
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
