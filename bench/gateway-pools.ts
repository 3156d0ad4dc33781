// npx tsx bench/gateway-pools.ts — the gateway's memory per certificate (issue #20, bench/README.md fleet
// section): one process opens N certificate pools in `AdnHttpClient` (one TLS context each), makes one
// HTTPS call through each to a local mTLS server, and prints its RSS before, after, and after the pools
// went idle for longer than the idle limit. Flags: --pools 1000 --extra-ca yes|no --idle-seconds 2.
// Run with `node --expose-gc` semantics via tsx: `npx tsx --expose-gc bench/gateway-pools.ts`.
import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import { AdnHttpClient } from "../libs/adn/http.js";
import { createTestRoot, issueEcnpj, issueServer } from "../tools/adn-sim/icp-brasil.js";

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}
const POOLS = Number(flag("pools", "1000"));
const EXTRA_CA = flag("extra-ca", "yes") === "yes";
const IDLE_SECONDS = Number(flag("idle-seconds", "2"));

const rssMb = () => {
  (globalThis as { gc?: () => void }).gc?.();
  return (process.memoryUsage().rss / 2 ** 20).toFixed(0);
};

const root = createTestRoot("AC Raiz Bench");
const client = issueEcnpj(root, { cnpj: "11222333000181" });
const cert = issueServer(root);
const server = createServer({ key: cert.keyPem, cert: cert.certPem, ca: root.certPem, requestCert: true }, (_req, res) => {
  res.writeHead(200, { "content-type": "application/json" });
  res.end("{}");
});
server.listen(0, "127.0.0.1");
await once(server, "listening");
const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/x`;

// Without an extra CA the local server's certificate cannot be verified: the calls are then skipped and
// only the contexts are measured.
const http = new AdnHttpClient({
  ...(EXTRA_CA ? { trustedCa: Buffer.from(root.certPem) } : {}),
  maxResponseBytes: 1 << 20,
  idlePoolMs: IDLE_SECONDS * 1000,
});
const creds = { privateKeyPem: client.keyPem, certificateChainPem: client.certPem + root.certPem };
const before = rssMb();
const t0 = process.hrtime.bigint();
for (let i = 0; i < POOLS; i++) {
  const pool = http.pool(String(1_000_000 + i), "v1", creds);
  if (EXTRA_CA) await http.get(pool, url, { timeoutMs: 10_000 });
}
const ms = Number(process.hrtime.bigint() - t0) / 1e6;
const held = rssMb();
await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000 * 2.5));
const idle = rssMb();
console.log(
  `pools=${POOLS} trustedCa=${EXTRA_CA} open ${ms.toFixed(0)} ms; RSS MB before ${before}, holding ${held}, ` +
    `after ${IDLE_SECONDS * 2.5} s idle ${idle}; pools left ${http.poolCount()}`,
);
await http.close();
server.close();
