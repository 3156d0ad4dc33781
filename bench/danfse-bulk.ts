// The bulk part of `npm run bench:danfse`: DANFSe exports end to end through real processes
// (test/support/danfse-mesh.ts: notes synced from the ADN simulator into the store, the artifacts service on
// a temp dir, one danfse process): CreateDanfseExport of N chaves → COMPLETED (polled every 50 ms) → the
// zip through its signed link, sha256 checked. CPU and peak RSS come from /proc of each service process.
// A small export runs first and a large one after in the same danfse process: its peak RSS after each
// shows whether memory grows with the export's size (it should not: the zip is streamed).
import { createHash } from "node:crypto";
import { DanfseExportState } from "../libs/gen/malha/danfse/v1/danfse_pb.js";
import { startDanfseMesh } from "../test/support/danfse-mesh.js";
import { procSample } from "./billing/proc.js";

export interface BulkRun {
  notes: number;
  wallMs: number;
  zipBytes: number;
  /** CPU seconds during the export, per process. */
  cpu: Record<string, number>;
  /** danfse's VmHWM after the export, MB. */
  danfsePeakRssMb: number;
}

export interface BulkResult {
  runs: BulkRun[];
  renderThreads: number;
}

export async function runDanfseBulk(p: { sizes: number[]; compiled: boolean; log: (msg: string) => void }): Promise<BulkResult> {
  const largest = Math.max(...p.sizes);
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
    // Warm-up: threads started, JIT and connections warm, before anything is measured.
    await exportOnce(
      mesh,
      ibge,
      notes.slice(0, 20).map((n) => n.chave),
    );
    const runs: BulkRun[] = [];
    for (const size of [...p.sizes].sort((x, y) => x - y)) {
      const before = cpuNow();
      const t0 = performance.now();
      const zipBytes = await exportOnce(
        mesh,
        ibge,
        notes.slice(0, size).map((n) => n.chave),
      );
      const wallMs = performance.now() - t0;
      const after = cpuNow();
      const run = {
        notes: size,
        wallMs,
        zipBytes,
        cpu: Object.fromEntries(Object.keys(pids).map((k) => [k, after[k]! - before[k]!])),
        danfsePeakRssMb: procSample(pids.danfse!).peakRssMb,
      };
      p.log(`  ${size} notes: ${(size / (wallMs / 1000)).toFixed(0)} notes/s, danfse peak RSS ${run.danfsePeakRssMb.toFixed(0)} MB`);
      runs.push(run);
    }
    return { runs, renderThreads: Number(process.env.DANFSE_RENDER_THREADS ?? "2") };
  } finally {
    await mesh.stop();
  }
}

/** One export to its end, the zip downloaded and checked; returns the zip's size. */
async function exportOnce(mesh: Awaited<ReturnType<typeof startDanfseMesh>>, ibge: string, chaves: string[]): Promise<number> {
  let e = (await mesh.client.createDanfseExport({ ibge, chaves })).export!;
  while (e.state === DanfseExportState.RUNNING) {
    await new Promise((r) => setTimeout(r, 50));
    e = (await mesh.client.getDanfseExport({ exportId: e.id })).export!;
  }
  if (e.state !== DanfseExportState.COMPLETED || e.failed > 0)
    throw new Error(`export ${e.id} ended ${e.state}: ${e.error} (${e.failed} failed)`);
  const res = await fetch(e.zip!.downloadUrl);
  const zip = new Uint8Array(await res.arrayBuffer());
  if (createHash("sha256").update(zip).digest("hex") !== e.zip!.sha256) throw new Error("the downloaded zip does not match its sha256");
  return zip.length;
}
