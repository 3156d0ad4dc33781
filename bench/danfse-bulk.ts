// The bulk part of `npm run bench:danfse`: DANFSe exports end to end through real processes
// (test/support/danfse-mesh.ts: notes synced from the ADN simulator into the store, the artifacts service on
// a temp dir, one danfse process): CreateDanfseExport of N chaves → COMPLETED (polled every 50 ms) → the
// zip through its signed link, sha256 checked. CPU and peak RSS come from /proc of each service process.
// A warm-up export runs first (its figure is the cold one), then the measured sizes, smallest first, in the
// same danfse process: its peak RSS after each shows whether memory grows with the export's size (it should
// not: the zip is streamed).
import { createHash } from "node:crypto";
import { DanfseExportState } from "../libs/gen/malha/danfse/v1/danfse_pb.js";
import { startDanfseMesh } from "../test/support/danfse-mesh.js";
import { procSample } from "./billing/proc.js";

export interface BulkRun {
  notes: number;
  /** Request to the client's verified download of the zip. */
  wallMs: number;
  /** Request to COMPLETED: the zip stored in artifacts and its link signed (the service's part). */
  serviceMs: number;
  zipBytes: number;
  /** CPU seconds during the export, per process. */
  cpu: Record<string, number>;
  /** danfse's VmHWM after the export, MB. */
  danfsePeakRssMb: number;
}

export interface BulkResult {
  /** The warm-up export, the first of the process. */
  cold: { notes: number; wallMs: number };
  runs: BulkRun[];
  renderThreads: number;
}

export async function runDanfseBulk(p: {
  sizes: number[];
  /** Notes of the warm-up export. */
  warmup: number;
  compiled: boolean;
  log: (msg: string) => void;
}): Promise<BulkResult> {
  const largest = Math.max(...p.sizes, p.warmup);
  // The simulator's feed mixes events and hidden NSUs with notes: ask for enough entries to hold `largest` notes.
  const mesh = await startDanfseMesh({
    municipalities: 1,
    feedSize: Math.ceil(largest * 2.4),
    compiled: p.compiled,
    ...(process.env.BENCH_DANFSE_NODE_OPTIONS ? { danfseEnv: { NODE_OPTIONS: process.env.BENCH_DANFSE_NODE_OPTIONS } } : {}),
  });
  try {
    const ibge = mesh.nfse.municipalities[0]!.ibge;
    const notes = await mesh.notes(ibge);
    if (notes.length < largest) throw new Error(`only ${notes.length} notes synced, ${largest} needed`);
    p.log(`  ${notes.length} notes synced into the store`);
    const pids: Record<string, number> = {
      danfse: mesh.danfse.proc.pid!,
      store: mesh.nfse.store.proc.pid!,
      artifacts: mesh.artifacts.proc.pid!,
    };
    const cpuNow = () => Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, procSample(pid).cpuSeconds]));
    // Warm-up: a first export of `warmup` notes, so threads, JIT and connections are as a running service
    // has them; its own figure is printed as the cold one (a process renders its first notes slower).
    const t0 = performance.now();
    await exportOnce(
      mesh,
      ibge,
      notes.slice(0, p.warmup).map((n) => n.chave),
    );
    const cold = { notes: p.warmup, wallMs: performance.now() - t0 };
    p.log(`  warm-up export of ${p.warmup} notes (cold process): ${(p.warmup / (cold.wallMs / 1000)).toFixed(0)} notes/s`);
    const runs: BulkRun[] = [];
    for (const size of [...p.sizes].sort((x, y) => x - y)) {
      const before = cpuNow();
      const t0 = performance.now();
      const { zipBytes, serviceMs } = await exportOnce(
        mesh,
        ibge,
        notes.slice(0, size).map((n) => n.chave),
      );
      const wallMs = performance.now() - t0;
      const after = cpuNow();
      const run = {
        notes: size,
        wallMs,
        serviceMs,
        zipBytes,
        cpu: Object.fromEntries(Object.keys(pids).map((k) => [k, after[k]! - before[k]!])),
        danfsePeakRssMb: procSample(pids.danfse!).peakRssMb,
      };
      p.log(
        `  ${size} notes: ${(size / (wallMs / 1000)).toFixed(0)} notes/s (service ${(size / (serviceMs / 1000)).toFixed(0)}), danfse peak RSS ${run.danfsePeakRssMb.toFixed(0)} MB`,
      );
      runs.push(run);
    }
    return { cold, runs, renderThreads: Number(process.env.DANFSE_RENDER_THREADS ?? "2") };
  } finally {
    await mesh.stop();
  }
}

/** One export to its end, the zip downloaded and checked: its size, and the time to COMPLETED. */
async function exportOnce(
  mesh: Awaited<ReturnType<typeof startDanfseMesh>>,
  ibge: string,
  chaves: string[],
): Promise<{ zipBytes: number; serviceMs: number }> {
  const t0 = performance.now();
  let e = (await mesh.client.createDanfseExport({ ibge, chaves })).export!;
  while (e.state === DanfseExportState.RUNNING) {
    await new Promise((r) => setTimeout(r, 50));
    e = (await mesh.client.getDanfseExport({ exportId: e.id })).export!;
  }
  const serviceMs = performance.now() - t0;
  if (e.state !== DanfseExportState.COMPLETED || e.failed > 0)
    throw new Error(`export ${e.id} ended ${e.state}: ${e.error} (${e.failed} failed)`);
  const res = await fetch(e.zip!.downloadUrl);
  const zip = new Uint8Array(await res.arrayBuffer());
  if (createHash("sha256").update(zip).digest("hex") !== e.zip!.sha256) throw new Error("the downloaded zip does not match its sha256");
  return { zipBytes: zip.length, serviceMs };
}
