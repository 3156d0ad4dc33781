// What offering a kept TLS session costs the client when it opens a connection (the gateway offers one on
// each run of a feed: decision 0029). Node 20's tls.connect applies its `session` option twice, each time
// parsing the session and the server certificate in it; the gateway now offers it once, with
// setSession (decision 0051). Timed: this thread's CPU for the synchronous part of opening C connections
// (where both applications happen), the two ways alternating; every connection's handshake is then
// awaited and must have resumed the session, or the run fails. A third way sets the session as the gateway
// keeps it since decision 0062: without the server's certificate.
//   npx tsx bench/tls-resume.ts [--connections 200] [--rounds 5]
import type { AddressInfo } from "node:net";
import { connect, createSecureContext, createServer, type SecureContext, type TLSSocket } from "node:tls";
import { withoutPeerCertificate } from "../libs/adn/tls-session.js";
import { completeCnpj } from "../libs/tax-id/index.js";
import { createTestRoot, issueEcnpj, issueServer } from "../tools/adn-sim/icp-brasil.js";
import { median } from "./stats.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const CONNECTIONS = arg("connections", 200);
const ROUNDS = arg("rounds", 5);

const root = createTestRoot();
const server = issueServer(root);
const client = issueEcnpj(root, { cnpj: completeCnpj("100000000001") });
const tlsServer = createServer({ key: server.keyPem, cert: server.certPem, ca: root.certPem, requestCert: true }, (s) => s.end("ok"));
await new Promise<void>((resolve) => tlsServer.listen(0, "127.0.0.1", resolve));
const port = (tlsServer.address() as AddressInfo).port;
const context: SecureContext = createSecureContext({ key: client.keyPem, cert: client.certPem, ca: root.certPem });
const target = { host: "127.0.0.1", port, servername: "localhost", secureContext: context };

function handshake(socket: TLSSocket): Promise<{ resumed: boolean; session?: Buffer }> {
  return new Promise((resolve, reject) => {
    let session: Buffer | undefined;
    socket.on("session", (s: Buffer) => {
      session = s;
    });
    socket.once("secureConnect", () => {
      const resumed = socket.isSessionReused();
      // TLS 1.3 sends its tickets after the handshake: wait for the server's end.
      socket.once("close", () => resolve({ resumed, ...(session ? { session } : {}) }));
      socket.resume();
    });
    socket.once("error", reject);
  });
}

const first = await handshake(connect(target));
if (!first.session) throw new Error("the server sent no session ticket");
const session = first.session;

type Mode = (i: number) => TLSSocket;
const asOption: Mode = () => connect({ ...target, session });
const setOnceWith =
  (offered: Buffer): Mode =>
  () => {
    const socket = connect(target);
    (socket as TLSSocket & { setSession(s: Buffer): void }).setSession(offered);
    return socket;
  };
const setOnce = setOnceWith(session);
const kept = withoutPeerCertificate(session);
const setKept = setOnceWith(kept);

async function round(mode: Mode): Promise<number> {
  const start = process.cpuUsage();
  const sockets = Array.from({ length: CONNECTIONS }, (_, i) => mode(i));
  const used = process.cpuUsage(start);
  const done = await Promise.all(sockets.map(handshake));
  const fresh = done.filter((d) => !d.resumed).length;
  if (fresh > 0) throw new Error(`${fresh} of ${CONNECTIONS} connections did not resume the session`);
  return used.user + used.system;
}

await round(asOption);
await round(setOnce);
await round(setKept);
const a: number[] = [];
const b: number[] = [];
const c: number[] = [];
for (let r = 0; r < ROUNDS; r++) {
  a.push(await round(asOption));
  b.push(await round(setOnce));
  c.push(await round(setKept));
}
const perConnection = (xs: number[]) => median(xs) / 1000 / CONNECTIONS;
const [ma, mb, mc] = [perConnection(a), perConnection(b), perConnection(c)];
console.log(
  `Opening a connection that offers a kept session (${CONNECTIONS} connections, median of ${ROUNDS} alternating rounds, CPU ms, every one resumed):`,
);
console.log(`  session as tls.connect's option   ${ma.toFixed(3)}`);
console.log(`  session set once on the socket    ${mb.toFixed(3)}   ${(((mb - ma) / ma) * 100).toFixed(1)} %`);
console.log(
  `  … kept without the server's cert  ${mc.toFixed(3)}   ${(((mc - ma) / ma) * 100).toFixed(1)} %  (session ${session.length} → ${kept.length} bytes)`,
);
tlsServer.close();
