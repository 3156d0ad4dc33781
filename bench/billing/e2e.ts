// A 200-boleto job end to end through the real services (test/support/billing-mesh.ts: a throwaway
// database, the artifacts service and one billing process, each its own process): create → COMPLETED,
// then the manifest and the zip through its signed link (sha256 checked). CPU and peak RSS come from
// /proc of each service process, so the figures are what the services spent, not the client.
import { createHash } from "node:crypto";
import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Pool, RowDataPacket } from "mysql2/promise";
import { createMysqlPool } from "../../libs/db/pool.js";
import { Environment, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { DEFAULT_RENDER_CONCURRENCY, defaultRenderThreads } from "../../services/billing/config.js";
import { boletoValido } from "../../services/billing/testing/fixtures.js";
import { benchRuntime } from "../runtime.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { scrape } from "../../test/support/prom-text.js";
import { pidFromFile, procSample, type ProcSample } from "./proc.js";

const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

export interface E2eRun {
  items: number;
  /** Client-side: create call → job COMPLETED as seen by polling (50 ms grain). */
  wallMs: number;
  /** The job's own duracao_ms / ms_por_item (first worker pick-up → final state). */
  duracaoMs: number;
  msPorItem: number;
  zipBytes: number;
  /**
   * Artifact content that crossed between billing and the artifacts service during the job, from the
   * artifacts service's malha_artifacts_content_bytes_total (received: PDFs, documents, inline entries;
   * sent: what billing read back). The client's zip download goes over the signed link, not counted.
   */
  artifactBytes: { received: number; sent: number };
  /** Statements the MariaDB server executed during the job (server-wide `Questions`: an upper bound). */
  sqlStatements: number;
  /** CPU seconds spent during the job, per process. */
  cpu: Record<string, number>;
}

export interface E2eResult {
  runs: E2eRun[];
  /** Peak RSS (VmHWM) per process at the end, MB. */
  peakRssMb: Record<string, number>;
  renderThreads: string;
  renderConcurrency: string;
}

// Server-wide: whatever else uses the same server meanwhile (another benchmark) is counted too, so the
// figure is an upper bound for the job.
async function questions(admin: Pool): Promise<number> {
  const [rows] = await admin.query<RowDataPacket[]>("SHOW GLOBAL STATUS LIKE 'Questions'");
  return Number(rows[0]?.Value ?? Number.NaN);
}

/** Processes to watch: the two services, and the stack's MariaDB and NATS when their pid files are found. */
function watched(mesh: BillingMesh): Record<string, number> {
  const stack = process.env.MALHA_STACK_DIR ?? "/tmp/malha-stack";
  const out: Record<string, number> = { billing: mesh.billing[0]!.proc.pid!, artifacts: mesh.artifacts.proc.pid! };
  const mysql = pidFromFile(`${stack}/mysql/mysqld.pid`);
  const nats = pidFromFile(`${stack}/nats.pid`);
  if (mysql) out["mariadb (stack)"] = mysql;
  if (nats) out["nats (stack)"] = nats;
  return out;
}

const snapshot = (pids: Record<string, number>) =>
  Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, procSample(pid)])) as Record<string, ProcSample>;

async function contentBytes(mesh: BillingMesh): Promise<{ received: number; sent: number }> {
  const samples = (await scrape(mesh.artifacts.metricsPort)).filter((s) => s.name === "malha_artifacts_content_bytes_total");
  const sum = (direction: string) => samples.filter((s) => s.labels.direction === direction).reduce((n, s) => n + s.value, 0);
  return { received: sum("received"), sent: sum("sent") };
}

async function oneJob(mesh: BillingMesh, admin: Pool, pids: Record<string, number>, key: string, n: number): Promise<E2eRun> {
  const c = mesh.billingClient();
  const items = Array.from({ length: n }, (_, i) => boletoValido(i + 1));
  const bytes0 = await contentBytes(mesh);
  const q0 = await questions(admin);
  const before = snapshot(pids);
  const clientCpu0 = process.cpuUsage();
  const t0 = performance.now();
  const created = await c.createBoletoJob({
    tenant: "bench",
    idempotencyKey: key,
    requestedBy: "bench",
    environment: Environment.SANDBOX,
    items,
  });
  const jobId = created.job!.jobId;
  let job = created.job!;
  let polls = 0;
  while (!FINAL.includes(job.state)) {
    await new Promise((r) => setTimeout(r, 50));
    job = (await c.getBoletoJob({ tenant: "bench", jobId })).job!;
    polls++;
  }
  const wallMs = performance.now() - t0;
  const after = snapshot(pids);
  const clientCpu = process.cpuUsage(clientCpu0);
  // The polling reads are the client's, not the job's: measure one poll and take them out.
  const q1 = await questions(admin);
  await c.getBoletoJob({ tenant: "bench", jobId });
  const perPoll = (await questions(admin)) - q1 - 1;
  const sqlStatements = q1 - q0 - 1 - polls * perPoll;
  const bytes1 = await contentBytes(mesh);
  if (job.state !== JobState.COMPLETED) throw new Error(`bench job ${jobId} ended ${JobState[job.state]}: ${JSON.stringify(job.counters)}`);
  const art = await c.getBoletoJobArtifacts({ tenant: "bench", jobId });
  const zip = Buffer.from(await (await fetch(art.zip!.downloadUrl)).arrayBuffer());
  if (createHash("sha256").update(zip).digest("hex") !== art.zip!.sha256) throw new Error("zip sha256 does not match the manifest");
  if (art.items.filter((i) => i.pdf?.sha256).length !== n) throw new Error("manifest lacks PDFs");
  const cpu = Object.fromEntries(Object.keys(pids).map((k) => [k, after[k]!.cpuSeconds - before[k]!.cpuSeconds]));
  cpu["bench client"] = (clientCpu.user + clientCpu.system) / 1e6;
  return {
    items: n,
    wallMs,
    duracaoMs: Number(job.metrics?.duracaoMs ?? 0n),
    msPorItem: job.metrics?.msPorItem ?? 0,
    zipBytes: zip.length,
    artifactBytes: { received: bytes1.received - bytes0.received, sent: bytes1.sent - bytes0.sent },
    sqlStatements,
    cpu,
  };
}

/** One unmeasured warm-up job (JIT, worker threads, fonts, pools), then `reps` measured jobs in a row. */
/** The billing service's own defaults (services/billing/config.ts). */
export const SERVICE_DEFAULT_CONCURRENCY = String(DEFAULT_RENDER_CONCURRENCY);
export const serviceDefaultThreads = () => String(defaultRenderThreads(DEFAULT_RENDER_CONCURRENCY));

export async function runE2e(
  reps: number,
  n = 200,
  renderConcurrency = SERVICE_DEFAULT_CONCURRENCY,
  renderThreads = serviceDefaultThreads(),
): Promise<E2eResult> {
  // Passed explicitly: the test mesh pins its own (4 and 2) for the tests' sake.
  // BENCH_PROFILE_DIR: billing and artifacts write a CPU profile there when they stop (see ../cpu-prof-preload.mjs).
  const profileDir = process.env.BENCH_PROFILE_DIR;
  if (profileDir) mkdirSync(profileDir, { recursive: true });
  const profiling: Record<string, string> = profileDir
    ? { NODE_OPTIONS: `--import ${fileURLToPath(new URL("../cpu-prof-preload.mjs", import.meta.url))}`, BENCH_CPU_PROF_DIR: profileDir }
    : {};
  const mesh = await startBillingMesh({
    billingEnv: { BILLING_RENDER_CONCURRENCY: renderConcurrency, BILLING_RENDER_THREADS: renderThreads, ...profiling },
    artifactsEnv: profiling,
    compiled: benchRuntime().compiled,
  });
  const admin = createMysqlPool(process.env.MYSQL_URL!, { connectionLimit: 1 });
  try {
    const pids = watched(mesh);
    await oneJob(mesh, admin, pids, `warmup-${Date.now()}`, n);
    const runs: E2eRun[] = [];
    for (let r = 0; r < reps; r++) runs.push(await oneJob(mesh, admin, pids, `bench-${Date.now()}-${r}`, n));
    const end = snapshot(pids);
    return {
      runs,
      peakRssMb: Object.fromEntries(Object.entries(end).map(([k, s]) => [k, s.peakRssMb])),
      renderThreads,
      renderConcurrency,
    };
  } finally {
    await admin.end();
    if (profileDir) {
      // SIGKILL (mesh.stop) would lose the profiles: stop billing and artifacts gracefully first.
      for (const p of [mesh.billing[0]!, mesh.artifacts]) {
        p.kill("SIGTERM");
        await p.exited;
      }
    }
    await mesh.stop();
  }
}
