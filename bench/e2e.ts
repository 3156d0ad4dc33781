// End-to-end ingest through the real mesh: register N municipalities, let the coordinator sync them from
// NSU 0 until every feed has caught up, and read the time the store recorded for the runs, the CPU time
// each process used in between (/proc/<pid>/stat) and each service's peak RSS (VmHWM) at the end.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RowDataPacket } from "mysql2/promise";
import type { SimSwitches } from "../tools/adn-sim/switches.js";
import { startBenchMesh, type BenchMesh, type ServiceName } from "./mesh.js";
import { MemorySampler } from "./memory-sampler.js";
import { cpuSeconds, peakRssMb, pidFromFile, untilQuiet } from "./procstat.js";
import { type StoreStages, storeStagesBetween, storeStageTotals } from "./store-stages.js";
import { mixOf, pagesOf, type FeedPages, type Mix } from "./workload.js";

const PRELOAD = fileURLToPath(new URL("./cpu-prof-preload.mjs", import.meta.url));

export const SERVICES: ServiceName[] = ["adn-gateway", "coordinator", "store"];
export type Meter = ServiceName | "sim+bench" | "mariadbd";

export interface IngestResult {
  municipalities: number;
  feedSize: number;
  mix: Mix;
  documents: number;
  /** First run started → last run finished, as recorded by the store (DB clock). */
  seconds: number;
  docsPerSecond: number;
  /** Registration → every feed caught up (includes the ≤ 1 s scheduler sweep delay). */
  wallSeconds: number;
  cpuSeconds: Partial<Record<Meter, number>>;
  peakRssMb: Partial<Record<ServiceName, number>>;
  /** VmHWM once the service is serving, before the first registration (start-up footprint). */
  startRssMb: Partial<Record<ServiceName, number>>;
  calls: number;
  verified: boolean;
  /** With trackCommits: median ms between batch commits after the first `warmupBatches` (steady state). */
  steadyBatchMs?: number;
  batches?: number;
  mariadbPid?: number;
  /** From the store's metrics over the ingest (bench/store-stages.ts). */
  storeStages?: StoreStages;
  /** With warmupMunicipalities: the warm-up ingest, measured as a cold start. */
  warmup?: WarmupResult;
  /** Under the peaks: each service's highest RSS, heap and external memory over the ingest (bench/memory-sampler.ts). */
  memory: string[];
}

/** The warm-up ingest's own figures: the same services measured cold, paired with the ingest after it. */
export interface WarmupResult {
  documents: number;
  docsPerSecond: number;
  /** CPU-s per 1,000 documents of the three services and MariaDB (the simulator and bench left out). */
  cpuPer1k: number;
}

export interface IngestOptions {
  municipalities: number;
  /**
   * Feeds of the same size ingested first, on the same mesh and unmeasured: the services are then measured
   * with their code optimized, as a service that has run for a while is (docs/decisions/0058-bench-sync-measures-warm-services.md).
   */
  warmupMunicipalities?: number;
  /**
   * How many such warm-up ingests, one after the other (1 by default): a service's per-call functions reach
   * V8's optimizing compiler only after some hundreds of calls, more than one ingest of N feeds makes (0070).
   */
  warmupIngests?: number;
  feedSize: number;
  switches?: Partial<SimSwitches>;
  bootstrapConcurrency: number;
  profileDir?: string;
  /** NODE_OPTIONS of the three services (e.g. a V8 heap limit), on top of the profiler's. */
  serviceNodeOptions?: string;
  /** More env of the three services (bench:sync --service-env). */
  extraServiceEnv?: Record<string, string>;
  /** Runs with the mesh still up after catch-up (ceiling, MVP on the same database). */
  after?: (mesh: BenchMesh, feeds: FeedPages[], mariadbPid: number | undefined) => Promise<void>;
  timeoutMs?: number;
  /** Poll nfse_sync_runs.batches every 10 ms to time the period between batch commits (one feed). */
  trackCommits?: boolean;
  warmupBatches?: number;
}

function serviceEnv(dir: string | undefined, name: string, nodeOptions = "", extra: Record<string, string> = {}): Record<string, string> {
  if (!dir) return nodeOptions ? { ...extra, NODE_OPTIONS: nodeOptions } : extra;
  const d = join(dir, name);
  mkdirSync(d, { recursive: true });
  // Node 20 refuses --cpu-prof in NODE_OPTIONS; the preload starts the same V8 profiler.
  return { ...extra, NODE_OPTIONS: `--import ${PRELOAD} ${nodeOptions}`.trim(), BENCH_CPU_PROF_DIR: d };
}

/** First run started → last run finished of these municipalities' feeds, as recorded by the store (DB clock). */
async function runSpanSeconds(mesh: BenchMesh, municipalities: readonly { ibge: string }[]): Promise<number> {
  const [span] = await mesh.db.pool.query<RowDataPacket[]>(
    "SELECT TIMESTAMPDIFF(MICROSECOND, MIN(started_at), MAX(finished_at)) AS us FROM nfse_sync_runs WHERE ibge IN (?)",
    [municipalities.map((m) => m.ibge)],
  );
  return Number(span[0]!.us) / 1e6;
}

/** Until every feed of `municipalities` has finished a run and has its next one scheduled. */
async function caughtUp(mesh: BenchMesh, municipalities: readonly { ibge: string }[], deadline: number): Promise<void> {
  const wanted = new Set(municipalities.map((m) => m.ibge));
  for (;;) {
    const { states } = await mesh.storeClient.listSyncStates({ pageSize: 500 });
    const mine = states.filter((s) => wanted.has(s.feed?.ibge ?? ""));
    if (mine.length === wanted.size && mine.every((s) => s.lastSuccessAt !== undefined && s.nextEligibleAt !== undefined)) return;
    if (Date.now() > deadline) throw new Error("ingest did not catch up in time");
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function runIngest(opts: IngestOptions): Promise<IngestResult> {
  const mesh = await startBenchMesh({
    municipalities: opts.municipalities,
    ...(opts.warmupMunicipalities ? { warmupMunicipalities: opts.warmupMunicipalities, warmupIngests: opts.warmupIngests ?? 1 } : {}),
    feedSize: opts.feedSize,
    ...(opts.switches ? { switches: opts.switches } : {}),
    coordinatorEnv: {
      NFSE_BOOTSTRAP_CONCURRENCY: String(opts.bootstrapConcurrency),
      NFSE_WORKER_CONCURRENCY: String(opts.bootstrapConcurrency),
    },
    serviceEnv: {
      store: serviceEnv(opts.profileDir, "store", opts.serviceNodeOptions, opts.extraServiceEnv),
      "adn-gateway": serviceEnv(opts.profileDir, "adn-gateway", opts.serviceNodeOptions, opts.extraServiceEnv),
      coordinator: serviceEnv(opts.profileDir, "coordinator", opts.serviceNodeOptions, opts.extraServiceEnv),
    },
  });
  try {
    const feeds = mesh.municipalities.map((m) => mesh.sim.feed(m.ibge, "DISTRIBUICAO"));
    const mix = mixOf(feeds);
    const stackDir = process.env.MALHA_STACK_DIR ?? "/tmp/malha-stack";
    const mariadbPid = pidFromFile(join(stackDir, "mysql", "mysqld.pid"));
    const pids: [Meter, number][] = SERVICES.map((s) => [s, mesh.services[s].proc.pid!] as [Meter, number]);
    if (mariadbPid) pids.push(["mariadbd", mariadbPid]);
    const startRss: Partial<Record<ServiceName, number>> = {};
    for (const s of SERVICES) startRss[s] = peakRssMb(mesh.services[s].proc.pid!);
    const deadline = Date.now() + (opts.timeoutMs ?? 30 * 60_000);
    let warmup: WarmupResult | undefined;
    for (const [i, group] of mesh.warmups.entries()) {
      if (mariadbPid) await untilQuiet(mariadbPid);
      const cpu0 = pids.map(([, pid]) => cpuSeconds(pid) ?? 0);
      await mesh.registerWarmup(i);
      await caughtUp(mesh, group, deadline);
      if (i > 0) continue;
      // The first one is the services' cold start, printed as such.
      const cpu = pids.reduce((sum, [, pid], j) => sum + (cpuSeconds(pid) ?? 0) - cpu0[j]!, 0);
      const documents = mixOf(group.map((m) => mesh.sim.feed(m.ibge, "DISTRIBUICAO"))).visible;
      const seconds = await runSpanSeconds(mesh, group);
      warmup = { documents, docsPerSecond: documents / seconds, cpuPer1k: (1000 * cpu) / documents };
    }
    // The ingest starts on a settled server, not in the flushing left by the phase before it.
    if (mariadbPid) await untilQuiet(mariadbPid);
    const before = new Map(pids.map(([k, pid]) => [k, cpuSeconds(pid) ?? 0]));
    const stagesBefore = await storeStageTotals(mesh.services.store.metricsPort);
    const selfBefore = process.cpuUsage();
    const callsBefore = mesh.sim.counters().total;
    const sampler = new MemorySampler(
      Object.fromEntries(SERVICES.map((s) => [s, { metricsPort: mesh.services[s].metricsPort, pid: mesh.services[s].proc.pid }])),
    );
    sampler.start(500);

    const t0 = performance.now();
    await mesh.registerAll();
    const commits: { t: number; batches: number }[] = [];
    let tracking = opts.trackCommits === true;
    const tracker = (async () => {
      let last = 0;
      while (tracking) {
        const [rows] = await mesh.db.pool.query<RowDataPacket[]>("SELECT SUM(batches) AS b FROM nfse_sync_runs");
        const b = Number(rows[0]?.b ?? 0);
        if (b !== last) {
          last = b;
          commits.push({ t: performance.now(), batches: b });
        }
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await caughtUp(mesh, mesh.municipalities, deadline);
    const wallSeconds = (performance.now() - t0) / 1000;
    const memory = sampler.stop();
    tracking = false;
    await tracker;
    const self = process.cpuUsage(selfBefore);
    const cpu: Partial<Record<Meter, number>> = {};
    for (const [k, pid] of pids) cpu[k] = (cpuSeconds(pid) ?? 0) - before.get(k)!;
    cpu["sim+bench"] = (self.user + self.system) / 1e6;
    const stages = storeStagesBetween(stagesBefore, await storeStageTotals(mesh.services.store.metricsPort));
    const rss: Partial<Record<ServiceName, number>> = {};
    for (const s of SERVICES) rss[s] = peakRssMb(mesh.services[s].proc.pid!);
    const calls = mesh.sim.counters().total - callsBefore;

    const [span] = await mesh.db.pool.query<RowDataPacket[]>(
      "SELECT SUM(documents + events + faults) AS items FROM nfse_sync_runs WHERE ibge IN (?)",
      [mesh.municipalities.map((m) => m.ibge)],
    );
    const seconds = await runSpanSeconds(mesh, mesh.municipalities);
    // Everything lote=true distributed is stored exactly once (hidden NSUs are reconciliation's, not measured).
    let stored = 0;
    for (const m of mesh.municipalities) {
      const [rows] = await mesh.db.pool.query<RowDataPacket[]>(
        `SELECT (SELECT COUNT(*) FROM nfse_documentos_${m.ibge}) + (SELECT COUNT(*) FROM nfse_eventos_${m.ibge}) AS n`,
      );
      stored += Number(rows[0]!.n);
    }
    const verified = stored === mix.visible && Number(span[0]!.items) === mix.visible;
    const warm = opts.warmupBatches ?? 5;
    const periods = commits
      .slice(1)
      .map((c, i) => ({ batch: c.batches, ms: (c.t - commits[i]!.t) / (c.batches - commits[i]!.batches) }))
      .filter((p) => p.batch > warm)
      .map((p) => p.ms)
      .sort((a, b) => a - b);
    if (opts.after)
      await opts.after(
        mesh,
        feeds.map((f) => pagesOf(f, mesh.sim.switches.pageSize)),
        mariadbPid,
      );
    return {
      municipalities: opts.municipalities,
      feedSize: opts.feedSize,
      mix,
      documents: mix.visible,
      seconds,
      docsPerSecond: mix.visible / seconds,
      wallSeconds,
      cpuSeconds: cpu,
      peakRssMb: rss,
      startRssMb: startRss,
      memory,
      calls,
      verified,
      ...(periods.length > 0 ? { steadyBatchMs: periods[periods.length >> 1]!, batches: commits.at(-1)?.batches ?? 0 } : {}),
      ...(mariadbPid ? { mariadbPid } : {}),
      ...(stages ? { storeStages: stages } : {}),
      ...(warmup ? { warmup } : {}),
    };
  } finally {
    await mesh.stop();
  }
}
