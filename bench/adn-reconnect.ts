// npx tsx --expose-gc bench/adn-reconnect.ts — CPU of one ADN call on a new mTLS connection through
// `AdnHttpClient`, as a sync run of a fleet sweep makes it (issue #20): the certificate's pool exists,
// but its connection closed long ago. The server answers `connection: close`, and a garbage collection
// runs between calls, as minutes of other work would. Prints CPU ms per call (client and server share
// this process) and how many handshakes resumed a TLS session. Flags: --calls 300 --certificates 10
// --keep-alive no.
import { once } from "node:events";
import { createServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { AdnHttpClient } from "../libs/adn/http.js";
import { createTestRoot, issueEcnpj, issueServer } from "../tools/adn-sim/icp-brasil.js";

function flag(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] ? process.argv[i + 1]! : fallback;
}
const CALLS = Number(flag("calls", "300"));
const CERTIFICATES = Number(flag("certificates", "10"));
/** `--close-pools yes`: every pool is closed before each call, as after ADN_POOL_IDLE_SECONDS (a new TLS context too). */
const CLOSE_POOLS = flag("close-pools", "no") === "yes";
/** `--keep-alive yes`: connections stay open, for the cost of a call without any handshake. */
const KEEP_ALIVE = flag("keep-alive", "no") === "yes";
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc (npx tsx --expose-gc bench/adn-reconnect.ts)");

const root = createTestRoot("AC Raiz Bench");
const server = issueServer(root);
let handshakes = 0;
let resumed = 0;
const https = createServer(
  { key: server.keyPem, cert: server.certPem, ca: root.certPem, requestCert: true, rejectUnauthorized: false },
  (_req, res) => {
    res.writeHead(200, { "content-type": "application/json", ...(KEEP_ALIVE ? {} : { connection: "close" }) });
    res.end('{"StatusProcessamento":"NENHUM_DOCUMENTO_LOCALIZADO"}');
  },
);
https.on("secureConnection", (s: TLSSocket) => {
  handshakes++;
  if (s.isSessionReused()) resumed++;
});
https.listen(0, "127.0.0.1");
await once(https, "listening");
const url = `https://127.0.0.1:${(https.address() as AddressInfo).port}/municipios/DFe/1`;

const http = new AdnHttpClient({ trustedCa: Buffer.from(root.certPem), maxResponseBytes: 1 << 20 });
const creds = Array.from({ length: CERTIFICATES }, (_, i) => {
  const c = issueEcnpj(root, { cnpj: `11222333${String(i).padStart(4, "0")}81` });
  return { privateKeyPem: c.keyPem, certificateChainPem: c.certPem + root.certPem };
});
const pool = (i: number) => http.pool(String(1_000_000 + (i % CERTIFICATES)), "v1", creds[i % CERTIFICATES]!);
// One call per certificate first: the pools and their TLS contexts exist, as after a fleet's first sync.
for (let i = 0; i < CERTIFICATES; i++) await http.get(pool(i), url, { timeoutMs: 10_000 });
handshakes = resumed = 0;
let cpuUs = 0;
for (let i = 0; i < CALLS; i++) {
  if (CLOSE_POOLS) http.closeIdle(Number.POSITIVE_INFINITY);
  gc();
  await new Promise((r) => setTimeout(r, 5));
  const before = process.cpuUsage();
  await http.get(pool(i), url, { timeoutMs: 10_000 });
  const used = process.cpuUsage(before);
  cpuUs += used.user + used.system;
}
console.log(
  `${CALLS} calls, ${CERTIFICATES} certificates: ${(cpuUs / 1000 / CALLS).toFixed(2)} ms CPU per call (client + server); ` +
    `${handshakes} handshakes, ${resumed} resumed; ${http.tlsSessionCount()} TLS sessions kept`,
);
await http.close();
https.close();
