// Diagnostic: FetchBatch round trips against the simulator at a given latency, called directly (no
// coordinator, no store), to split the per-batch period of the latency test into ADN latency + gateway work.
//   npx tsx bench/diag-fetch.ts [latencyMs=150] [calls=15]
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { AdnGatewayService } from "../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { startBenchMesh } from "./mesh.js";

const latencyMs = Number(process.argv[2] ?? 150);
const calls = Number(process.argv[3] ?? 15);
const mesh = await startBenchMesh({ municipalities: 1, feedSize: 50 * (calls + 1), switches: { latencyMs } });
try {
  const gw = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: mesh.services["adn-gateway"].baseUrl }));
  const feed = { ibge: mesh.municipalities[0]!.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO };
  let after = 0n;
  const times: number[] = [];
  for (let i = 0; i < calls; i++) {
    const t0 = performance.now();
    const res = await gw.fetchBatch({ feed, afterNsu: after });
    times.push(performance.now() - t0);
    after = res.items.reduce((m, it) => (it.nsu > m ? it.nsu : m), after);
  }
  const sorted = [...times].sort((a, b) => a - b);
  console.log(
    `FetchBatch ms (latency ${latencyMs}): ${times.map((t) => t.toFixed(0)).join(" ")}; median ${sorted[sorted.length >> 1]!.toFixed(0)}`,
  );
} finally {
  await mesh.stop();
}
process.exit(0);
