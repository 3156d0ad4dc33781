import { createHook } from "node:async_hooks";
import { once } from "node:events";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import type { TLSSocket } from "node:tls";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createTestRoot, issueEcnpj, issueServer } from "../../tools/adn-sim/icp-brasil.js";
import { createLogger } from "../log/logger.js";
import { runInScope } from "../rpc/context.js";
import { AdnHttpClient, AdnHttpFailure, TLS_SESSION_KEEP_MS } from "./http.js";

// A real HTTPS server asking for client certificates, as the ADN does.
const trusted = createTestRoot("AC Raiz Confiavel");
const stranger = createTestRoot("AC Raiz Estranha");
const client = issueEcnpj(trusted, { cnpj: "11222333000181" });
let server: Server;
let base = "";
// Requests to /held wait here until the test releases them.
const held: (() => void)[] = [];
// Every handshake the server completed: whether it resumed a session.
const handshakes: boolean[] = [];

beforeAll(async () => {
  const cert = issueServer(trusted);
  server = createServer(
    { key: cert.keyPem, cert: cert.certPem, ca: trusted.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => {
      if (req.url === "/held") {
        held.push(() => res.writeHead(200, { "content-type": "application/json" }).end("{}"));
        return;
      }
      const peer = (req.socket as TLSSocket).getPeerCertificate();
      // /close answers on a connection it then closes, as after undici's idle timeout: the next call connects anew.
      res.writeHead(200, { "content-type": "application/json", ...(req.url === "/close" ? { connection: "close" } : {}) });
      res.end(JSON.stringify({ subject: peer.subject?.CN ?? "" }));
    },
  );
  server.on("secureConnection", (socket: TLSSocket) => handshakes.push(socket.isSessionReused()));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  base = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

const creds = { privateKeyPem: client.keyPem, certificateChainPem: client.certPem + trusted.certPem };

describe("AdnHttpClient TLS", () => {
  it("presents the municipality's certificate and reuses one pool (and TLS context) for every call", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    const pool = http.pool("3550308", "v1", creds);
    expect(http.pool("3550308", "v1", creds)).toBe(pool);
    for (let i = 0; i < 3; i++) {
      const res = await http.get(pool, `${base}/x`, { timeoutMs: 5000 });
      expect(res.status).toBe(200);
      expect(JSON.parse(res.body.toString()).subject).toBe("EMPRESA TESTE LTDA:11222333000181");
    }
    await http.close();
  });

  it("opens at most `connections` connections for a certificate's concurrent calls; a call beyond them waits for one", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20, connections: 2 });
    handshakes.length = 0;
    held.length = 0;
    const pool = http.pool("3550308", "v1", creds);
    const calls = [1, 2, 3].map(() => http.get(pool, `${base}/held`, { timeoutMs: 5000 }));
    while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
    // The third waits behind one of the two: the server never sees it while both are held.
    await new Promise((r) => setTimeout(r, 100));
    expect(held.length).toBe(2);
    expect(handshakes).toHaveLength(2);
    held.shift()?.();
    while (held.length < 2) await new Promise((r) => setTimeout(r, 10));
    for (const release of held.splice(0)) release();
    expect((await Promise.all(calls)).map((r) => r.status)).toEqual([200, 200, 200]);
    expect(handshakes).toHaveLength(2);
    // Idle again: the next call takes a connection already open.
    expect((await http.get(pool, `${base}/x`, { timeoutMs: 5000 })).status).toBe(200);
    expect(handshakes).toHaveLength(2);
    await http.close();
  });

  it("refuses a server whose certificate no trusted CA issued", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(stranger.certPem), maxResponseBytes: 1 << 20 });
    const err = await http.get(http.pool("3550308", "v1", creds), `${base}/x`, { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AdnHttpFailure);
    expect((err as AdnHttpFailure).kind).toBe("network");
    await http.close();
  });
});

describe("AdnHttpClient TLS sessions (decision 0029)", () => {
  setFlagsFromString("--expose-gc");
  const gc = runInNewContext("gc") as () => void;
  const subjectOf = async (http: AdnHttpClient, pool: ReturnType<AdnHttpClient["pool"]>) =>
    JSON.parse((await http.get(pool, `${base}/close`, { timeoutMs: 5000 })).body.toString()).subject as string;

  it("resumes the certificate's session on a new connection, after a garbage collection and after its pool closed", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    handshakes.length = 0;
    expect(await subjectOf(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    // undici alone holds the session through a WeakRef: a collection used to drop it.
    gc();
    expect(await subjectOf(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    http.closeIdle(Date.now() + 1);
    expect(http.poolCount()).toBe(0);
    gc();
    expect(await subjectOf(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    expect(handshakes).toEqual([false, true, true]);
    expect(http.tlsSessionCount()).toBe(1);
    await http.close();
  });

  it("sends a call made right after another on the same connection", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    handshakes.length = 0;
    const pool = http.pool("3550308", "v1", creds);
    for (let i = 0; i < 3; i++) expect((await http.get(pool, `${base}/x`, { timeoutMs: 5000 })).status).toBe(200);
    expect(handshakes).toEqual([false]);
    await http.close();
  });

  it("forgets a session TLS_SESSION_KEEP_MS after it arrived, the certificate's newest one counting", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const t0 = Date.now();
      await subjectOf(http, http.pool("3550308", "v1", creds));
      vi.setSystemTime(t0 + 3_600_000);
      await subjectOf(http, http.pool("3304557", "v1", creds));
      // São Paulo's credentials replaced 1.5 h in: a full handshake, and its session is now the newer one.
      vi.setSystemTime(t0 + 5_400_000);
      await subjectOf(http, http.pool("3550308", "v2", creds));
      expect(http.tlsSessionCount()).toBe(2);
      vi.setSystemTime(t0 + 3_600_000 + TLS_SESSION_KEEP_MS + 60_000);
      http.closeIdle(Date.now() + 1);
      expect(http.tlsSessionCount()).toBe(1);
      handshakes.length = 0;
      await subjectOf(http, http.pool("3304557", "v1", creds));
      await subjectOf(http, http.pool("3550308", "v2", creds));
      // Rio's session was forgotten: a full handshake; São Paulo's was kept and resumed.
      expect(handshakes).toEqual([false, true]);
      vi.setSystemTime(Date.now() + TLS_SESSION_KEEP_MS + 1);
      http.closeIdle(Date.now() + 1);
      expect(http.tlsSessionCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await http.close();
    }
  });

  it("never offers the session of replaced credentials: the new certificate gets a full handshake", async () => {
    const other = issueEcnpj(trusted, { cnpj: "11444777000161", razaoSocial: "OUTRA EMPRESA LTDA" });
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    handshakes.length = 0;
    expect(await subjectOf(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    const replaced = http.pool("3550308", "v2", { privateKeyPem: other.keyPem, certificateChainPem: other.certPem + trusted.certPem });
    expect(await subjectOf(http, replaced)).toBe("OUTRA EMPRESA LTDA:11444777000161");
    expect(handshakes).toEqual([false, false]);
    expect(http.tlsSessionCount()).toBe(1);
    await http.close();
  });
});

describe("AdnHttpClient TLS contexts (decision 0050)", () => {
  const other = issueEcnpj(trusted, { cnpj: "11444777000161", razaoSocial: "OUTRA EMPRESA LTDA" });
  const otherCreds = { privateKeyPem: other.keyPem, certificateChainPem: other.certPem };
  const subject = async (http: AdnHttpClient, pool: ReturnType<AdnHttpClient["pool"]>) =>
    JSON.parse((await http.get(pool, `${base}/x`, { timeoutMs: 5000 })).body.toString()).subject as string;

  it("keeps a certificate's context after its pool closed, and builds a new one for replaced credentials", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    expect(await subject(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    http.closeIdle(Date.now() + 1);
    expect(http.poolCount()).toBe(0);
    expect(await subject(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    expect(http.tlsContextsBuilt()).toBe(1);
    // The vault's new version for the same municipality: its own context, presenting the new certificate.
    expect(await subject(http, http.pool("3550308", "v2", otherCreds))).toBe("OUTRA EMPRESA LTDA:11444777000161");
    expect(http.tlsContextsBuilt()).toBe(2);
    expect(http.tlsContextCount()).toBe(1);
    await http.close();
    expect(http.tlsContextCount()).toBe(0);
  });

  it("keeps at most maxTlsContexts, the least recently used going first; 0 keeps none", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20, maxTlsContexts: 2 });
    for (const ibge of ["3550308", "3304557", "5300108"]) {
      http.pool(ibge, "v1", creds);
      http.closeIdle(Date.now() + 1);
    }
    expect([http.tlsContextCount(), http.tlsContextsBuilt()]).toEqual([2, 3]);
    // São Paulo's was the oldest: built again (and Rio's goes); Brasília's was kept.
    expect(await subject(http, http.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    http.closeIdle(Date.now() + 1);
    http.pool("5300108", "v1", creds);
    expect([http.tlsContextCount(), http.tlsContextsBuilt()]).toEqual([2, 4]);
    await http.close();

    const none = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20, maxTlsContexts: 0 });
    none.pool("3550308", "v1", creds);
    none.closeIdle(Date.now() + 1);
    expect(await subject(none, none.pool("3550308", "v1", creds))).toBe("EMPRESA TESTE LTDA:11222333000181");
    expect([none.tlsContextCount(), none.tlsContextsBuilt()]).toEqual([0, 2]);
    await none.close();
  });

  it("forgets a context TLS_SESSION_KEEP_MS after its pool last opened", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const t0 = Date.now();
      http.pool("3550308", "v1", creds);
      vi.setSystemTime(t0 + 3_600_000);
      http.closeIdle(Date.now() + 1);
      http.pool("3304557", "v1", creds);
      vi.setSystemTime(t0 + TLS_SESSION_KEEP_MS + 1);
      http.closeIdle(Date.now() + 1);
      expect(http.tlsContextCount()).toBe(1);
      vi.setSystemTime(t0 + 3_600_000 + TLS_SESSION_KEEP_MS + 1);
      http.closeIdle(Date.now() + 1);
      expect(http.tlsContextCount()).toBe(0);
    } finally {
      vi.useRealTimers();
      await http.close();
    }
  });
});

describe("AdnHttpClient idle pools", () => {
  it("closes a certificate's pool once idle and opens a fresh one on the next call", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    const first = http.pool("3550308", "v1", creds);
    expect((await http.get(first, `${base}/x`, { timeoutMs: 5000 })).status).toBe(200);
    http.pool("3304557", "v1", creds);
    expect(http.poolCount()).toBe(2);
    http.closeIdle(Date.now() + 1);
    expect(http.poolCount()).toBe(0);
    const second = http.pool("3550308", "v1", creds);
    expect(second).not.toBe(first);
    expect((await http.get(second, `${base}/x`, { timeoutMs: 5000 })).status).toBe(200);
    await http.close();
  });

  it("sends a later attempt through a pool closed for idleness since (a retry's back-off past the idle limit) through the pool opened again", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    const first = http.pool("3550308", "v1", creds);
    expect((await http.get(first, `${base}/x`, { timeoutMs: 5000 })).status).toBe(200);
    http.closeIdle(Date.now() + 1);
    expect(http.poolCount()).toBe(0);
    const res = await http.get(first, `${base}/x`, { timeoutMs: 5000 });
    expect(JSON.parse(res.body.toString()).subject).toBe("EMPRESA TESTE LTDA:11222333000181");
    expect(http.poolCount()).toBe(1);
    expect(http.pool("3550308", "v1", creds)).not.toBe(first);
    await http.close();
  });

  it("does not open a closed pool again once its certificate was replaced: the old credentials' call fails", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    const other = issueEcnpj(trusted, { cnpj: "11222333000181", razaoSocial: "OUTRA" });
    const first = http.pool("3550308", "v1", creds);
    expect((await http.get(first, `${base}/x`, { timeoutMs: 5000 })).status).toBe(200);
    http.closeIdle(Date.now() + 1);
    const replaced = http.pool("3550308", "v2", { privateKeyPem: other.keyPem, certificateChainPem: other.certPem + trusted.certPem });
    await expect(http.get(first, `${base}/x`, { timeoutMs: 5000 })).rejects.toBeInstanceOf(AdnHttpFailure);
    expect(http.poolCount()).toBe(1);
    expect(http.pool("3550308", "v2", creds)).toBe(replaced);
    await http.close();
  });

  it("never closes a pool with a request in flight", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    const pool = http.pool("3550308", "v1", creds);
    const call = http.get(pool, `${base}/held`, { timeoutMs: 5000 });
    while (held.length === 0) await new Promise((r) => setTimeout(r, 10));
    http.closeIdle(Date.now() + 1);
    expect(http.poolCount()).toBe(1);
    expect(http.pool("3550308", "v1", creds)).toBe(pool);
    held.shift()?.();
    expect((await call).status).toBe(200);
    http.closeIdle(Date.now() + 1);
    expect(http.poolCount()).toBe(0);
    await http.close();
  });

  it("closes idle pools by itself when given an idle limit", async () => {
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20, idlePoolMs: 200 });
    await http.get(http.pool("3550308", "v1", creds), `${base}/x`, { timeoutMs: 5000 });
    while (http.poolCount() > 0) await new Promise((r) => setTimeout(r, 50));
    expect(http.pool("3550308", "v1", creds)).toBeDefined();
    expect(http.poolCount()).toBe(1);
    await http.close();
  });
});

// A call must leave nothing holding the request it was made for: a timer or socket created in a request
// scope keeps that scope, and with it the request's whole graph, for as long as it lives (decision 0030).
describe("AdnHttpClient after a call", () => {
  it("leaves the calling request's scope collectable (undici's sockets and timers are not opened in it)", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    let scope: WeakRef<object> | undefined;
    await (async () => {
      const s = { requestId: "r1", signal: new AbortController().signal, log: createLogger({ service: "test" }) };
      scope = new WeakRef(s);
      // /close ends its connection: a socket opened in a request keeps that request's scope while it lives.
      const res = await runInScope(s, () => http.get(http.pool("3550308", "v1", creds), `${base}/close`, { timeoutMs: 60_000 }));
      expect(res.status).toBe(200);
    })();
    // A 60 s timer would hold the scope for a minute; the socket's close takes a few event-loop turns.
    for (let i = 0; i < 100 && scope!.deref() !== undefined; i++) {
      await new Promise((r) => setTimeout(r, 20));
      gc();
    }
    expect(scope!.deref()).toBeUndefined();
    await http.close();
  });

  it("leaves no timer armed for its deadline once a call has ended", async () => {
    const armed = new Set<number>();
    const hook = createHook({
      init(id, type, _trigger, resource) {
        if (type === "Timeout" && (resource as { _idleTimeout?: number })._idleTimeout === 60_000) armed.add(id);
      },
      destroy: (id) => armed.delete(id),
    }).enable();
    const http = new AdnHttpClient({ trustedCa: Buffer.from(trusted.certPem), maxResponseBytes: 1 << 20 });
    try {
      expect((await http.get(http.pool("3550308", "v1", creds), `${base}/x`, { timeoutMs: 60_000 })).status).toBe(200);
      await new Promise((r) => setImmediate(r)); // destroy hooks run after the current turn
      // An armed timer keeps what it closes over, and the request scope it was created in, until it fires.
      expect(armed.size).toBe(0);
    } finally {
      hook.disable();
      await http.close();
    }
  });
});
