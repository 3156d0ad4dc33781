// What one certificate's TLS context costs to build (the gateway builds one each time a certificate's pool
// opens: once per run of a feed under the one-hour rule), with the chain as an A1 file carries it (leaf +
// root) and as the gateway presents it (presentedChain: leaf only). Same-run ratio, CPU time of this thread.
//   npx tsx bench/tls-context.ts [--certificates 200] [--rounds 5]
import { createSecureContext } from "node:tls";
import { completeCnpj } from "../libs/tax-id/index.js";
import { presentedChain } from "../services/adn-gateway/credentials.js";
import { createTestRoot, issueEcnpj } from "../tools/adn-sim/icp-brasil.js";
import { alternatingCpuMicros } from "./stats.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const CERTS = arg("certificates", 200);
const ROUNDS = arg("rounds", 5);

const root = createTestRoot();
const clients = Array.from({ length: CERTS }, (_, i) => issueEcnpj(root, { cnpj: completeCnpj(`${String(10_000_000 + i)}0001`) }));
const asFiled = clients.map((c) => ({ key: c.keyPem, cert: c.certPem + root.certPem }));
const asPresented = asFiled.map((c) => ({ key: c.key, cert: presentedChain(c.cert) }));

const build = (set: { key: string; cert: string }[]) => () => {
  for (const c of set) createSecureContext({ key: c.key, cert: c.cert, ca: root.certPem });
};
const [a, b] = alternatingCpuMicros(ROUNDS, build(asFiled), build(asPresented)).map((us) => us / 1000 / CERTS) as [number, number];
console.log(`TLS context per certificate (${CERTS} certificates, median of ${ROUNDS} alternating rounds, CPU ms):`);
console.log(`  chain as filed (leaf + root)   ${a.toFixed(3)}`);
console.log(`  chain as presented (leaf)      ${b.toFixed(3)}   ${(((b - a) / a) * 100).toFixed(1)} %`);
