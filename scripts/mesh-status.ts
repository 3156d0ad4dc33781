// Prints the gRPC health of every mesh service; with --wait SECONDS, waits until all are SERVING.
//   tsx scripts/mesh-status.ts [--wait 60] [--host 127.0.0.1]
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../libs/gen/health/v1/health_pb.js";
import { MESH, type MeshServiceName } from "../libs/rpc/mesh.js";

const args = process.argv.slice(2);
const flag = (name: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const waitSeconds = Number(flag("--wait") ?? 0);
const host = flag("--host") ?? "127.0.0.1";

async function check(name: MeshServiceName): Promise<string> {
  const client = createClient(Health, createGrpcTransport({ baseUrl: `http://${host}:${MESH[name].port}` }));
  try {
    const res = await client.check({ service: "" }, { timeoutMs: 2000 });
    return Status[res.status];
  } catch {
    return "UNREACHABLE";
  }
}

const names = Object.keys(MESH) as MeshServiceName[];
const deadline = Date.now() + waitSeconds * 1000;
let statuses: string[];
for (;;) {
  statuses = await Promise.all(names.map(check));
  if (statuses.every((s) => s === "SERVING") || Date.now() >= deadline) break;
  await new Promise((r) => setTimeout(r, 250));
}
for (const [i, name] of names.entries()) {
  const { port, metricsPort } = MESH[name];
  console.log(`${name.padEnd(12)} ${statuses[i]!.padEnd(12)} grpc ${host}:${port}  metrics http://${host}:${metricsPort}/metrics`);
}
process.exit(statuses.every((s) => s === "SERVING") ? 0 : 1);
