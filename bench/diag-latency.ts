// Diagnostic for the latency-hiding figure: one feed at a simulator latency, the store's batch commits
// observed every 10 ms (nfse_sync_runs.batches), printed as the period between commits in steady state.
//   npx tsx bench/diag-latency.ts [latencyMs=150] [entries=2000]
import type { RowDataPacket } from "mysql2/promise";
import { startBenchMesh } from "./mesh.js";

const latencyMs = Number(process.argv[2] ?? 150);
const entries = Number(process.argv[3] ?? 2000);
const mesh = await startBenchMesh({ municipalities: 1, feedSize: entries, switches: { latencyMs } });
try {
  await mesh.registerAll();
  const commits: { t: number; batches: number }[] = [];
  let last = 0;
  for (;;) {
    const [rows] = await mesh.db.pool.query<RowDataPacket[]>("SELECT batches, finished_at FROM nfse_sync_runs ORDER BY id DESC LIMIT 1");
    const r = rows[0];
    if (r && Number(r.batches) !== last) {
      last = Number(r.batches);
      commits.push({ t: performance.now(), batches: last });
    }
    if (r?.finished_at) break;
    await new Promise((res) => setTimeout(res, 10));
  }
  const gaps = commits.slice(1).map((c, i) => (c.t - commits[i]!.t) / (c.batches - commits[i]!.batches));
  const steady = gaps.slice(5).sort((a, b) => a - b);
  console.log(`latency ${latencyMs} ms: ${last} batches; period between commits (ms): ${gaps.map((g) => g.toFixed(0)).join(" ")}`);
  console.log(
    `steady-state median ${steady[steady.length >> 1]?.toFixed(0)} ms → ${(50 / (steady[steady.length >> 1]! / 1000)).toFixed(0)} docs/s`,
  );
} finally {
  await mesh.stop();
}
process.exit(0);
