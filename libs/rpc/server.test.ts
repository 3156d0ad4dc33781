import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import * as http2 from "node:http2";
import { create, type DescService } from "@bufbuild/protobuf";
import { Writable } from "node:stream";
import { Code, ConnectError, createClient, type ServiceImpl } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport, createGrpcWebTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { createMeshTls } from "../../test/support/mesh-tls.js";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../gen/health/v1/health_pb.js";
import { AdnGatewayService, DeliverFeedsRequestSchema, DeliverFeedsResponseSchema } from "../gen/malha/adn/v1/adn_gateway_pb.js";
import { VaultService } from "../gen/malha/vault/v1/vault_pb.js";
import { createLogger } from "../log/logger.js";
import { createServiceClient } from "./client.js";
import { Metrics, serveMetrics } from "./metrics.js";
import { peerIdentityKey, serve, startRpcServer, type RpcServer, type RpcServerOptions } from "./server.js";
import { type AccessTable, publicTable } from "./auth/access.js";

/** These tests are about the runtime, not about callers: every method public. */
const serveOpen = <S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>) =>
  serve(service, impl, publicTable(service) as AccessTable<S>);

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  });
  return { log: createLogger({ service: "test", level: "debug", destination }), lines };
}

const running: RpcServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.shutdown({ drainMs: 0, timeoutMs: 1000 })));
});

async function start(services: RpcServerOptions["services"], extra: Partial<RpcServerOptions> = {}) {
  const { log, lines } = capturedLogger();
  const metrics = new Metrics("test");
  const server = await startRpcServer({ services, host: "127.0.0.1", port: 0, log, metrics, ...extra });
  running.push(server);
  return { server, lines, metrics, baseUrl: `http://127.0.0.1:${server.port}` };
}

describe("RPC runtime", () => {
  it("ends a server stream's handler when its client cancels while holding it back (flow control), counted as CANCELED", async () => {
    let handlerEnded!: () => void;
    const ended = new Promise<void>((resolve) => (handlerEnded = resolve));
    let sent = 0;
    const { baseUrl, metrics } = await start([
      serveOpen(AdnGatewayService, {
        async *deliverFeeds() {
          try {
            // Far more than the stream's flow-control window: the writes block once the client stops reading.
            for (; sent < 200; sent++)
              yield create(DeliverFeedsResponseSchema, {
                delivery: 1,
                part: { case: "report", value: { page: BigInt(sent + 1), head: { call: { versaoAplicativo: "x".repeat(150_000) } } } },
              });
          } finally {
            handlerEnded();
          }
        },
      }),
    ]);
    const client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl }));
    const cancel = new AbortController();
    // The caller's side stays open (a start, then nothing) until the call is cancelled.
    const requests = (async function* () {
      yield create(DeliverFeedsRequestSchema, { delivery: 1, part: { case: "start", value: {} } });
      await new Promise((resolve) => cancel.signal.addEventListener("abort", resolve));
    })();
    const stream = client.deliverFeeds(requests, { signal: cancel.signal })[Symbol.asyncIterator]();
    await stream.next();
    // The handler stops making progress: it is held back, not finished.
    let before = -1;
    while (before !== sent) {
      before = sent;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(sent).toBeLessThan(200);
    cancel.abort();
    await ended;
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/malha_rpc_handled_total\{[^}]*method="DeliverFeeds",code="Canceled"[^}]*\} 1/);
  });

  it("answers methods without an implementation with UNIMPLEMENTED", async () => {
    const { baseUrl } = await start([serveOpen(VaultService, {})]);
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
    const err = await vault.getCertificate({ id: "1" }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.Unimplemented);
  });

  it("keeps deliberate errors and hides unexpected ones behind INTERNAL + request id", async () => {
    const { baseUrl, lines } = await start([
      serveOpen(VaultService, {
        getCertificate: () => {
          throw new ConnectError("certificate 42 not found", Code.NotFound);
        },
        listCertificates: () => {
          throw new Error("ER_ACCESS_DENIED at /srv/secret/path.ts:12 password=hunter2");
        },
      }),
    ]);
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
    const notFound = ConnectError.from(await vault.getCertificate({ id: "42" }).catch((e: unknown) => e));
    expect(notFound.code).toBe(Code.NotFound);
    expect(notFound.rawMessage).toBe("certificate 42 not found");

    const internal = ConnectError.from(
      await vault.listCertificates({}, { headers: { "x-request-id": "req-abc" } }).catch((e: unknown) => e),
    );
    expect(internal.code).toBe(Code.Internal);
    expect(internal.rawMessage).toBe("internal error (request id req-abc)");
    expect(internal.rawMessage).not.toMatch(/hunter2|\/srv|ER_ACCESS/);
    expect(internal.metadata.get("x-request-id")).toBe("req-abc");
    // The details stay in the server's log, under the same request id.
    const logged = lines.find((l) => l.requestId === "req-abc" && l.msg === "rpc failed unexpectedly");
    expect(JSON.stringify(logged)).toContain("ER_ACCESS_DENIED");
  });

  it("writes one access line per RPC at info: method, code, duration, request id, caller, peer", async () => {
    const { baseUrl, lines, server } = await start([
      serveOpen(VaultService, {
        getCertificate: () => ({}),
        listCertificates: () => {
          throw new ConnectError("ibge must be 7 digits", Code.InvalidArgument);
        },
      }),
    ]);
    server.health.setAll(Status.SERVING);
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
    await vault.getCertificate({ id: "1" }, { headers: { "x-request-id": "acc-1" } });
    await vault.listCertificates({}, { headers: { "x-request-id": "acc-2" } }).catch(() => undefined);
    await createClient(Health, createGrpcTransport({ baseUrl })).check({});
    const access = lines.filter((l) => l.msg === "rpc");
    expect(access.filter((l) => l.level === "info")).toEqual([
      expect.objectContaining({
        requestId: "acc-1",
        rpc: "malha.vault.v1.VaultService/GetCertificate",
        code: "OK",
        protocol: "grpc",
        caller: null,
        peer: expect.stringMatching(/^127\.0\.0\.1:\d+$/),
      }),
      expect.objectContaining({ requestId: "acc-2", rpc: "malha.vault.v1.VaultService/ListCertificates", code: "InvalidArgument" }),
    ]);
    for (const l of access) expect(typeof l.durationMs, JSON.stringify(l)).toBe("number");
    // Probes' health checks go to debug, so they do not drown the log.
    expect(access.filter((l) => l.rpc === "grpc.health.v1.Health/Check").map((l) => l.level)).toEqual(["debug"]);
  });

  it("with the access log off (RPC_ACCESS_LOG=false) logs only failures at info and above", async () => {
    const { baseUrl, lines } = await start(
      [
        serveOpen(VaultService, {
          getCertificate: () => ({}),
          listCertificates: () => {
            throw new ConnectError("no", Code.NotFound);
          },
        }),
      ],
      { accessLog: false },
    );
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
    await vault.getCertificate({ id: "1" });
    await vault.listCertificates({}).catch(() => undefined);
    const loud = lines.filter((l) => l.level !== "debug" && typeof l.rpc === "string");
    expect(loud.map((l) => [l.msg, l.code])).toEqual([["rpc refused", "NotFound"]]);
  });

  it("echoes a caller's request id and makes one up otherwise", async () => {
    const { baseUrl } = await start([serveOpen(VaultService, { getCertificate: () => ({}) })]);
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
    let header: Headers | undefined;
    await vault.getCertificate({ id: "1" }, { headers: { "x-request-id": "given-1" }, onHeader: (h) => (header = h) });
    expect(header?.get("x-request-id")).toBe("given-1");
    await vault.getCertificate({ id: "1" }, { headers: { "x-request-id": "bad id\twith spaces" }, onHeader: (h) => (header = h) });
    expect(header?.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("passes request id, cancellation and the remaining deadline to downstream calls", async () => {
    const seen: { requestId: string | null; timeoutMs: number | undefined }[] = [];
    const downstream = await start([
      serveOpen(VaultService, {
        getCertificate: (_req, ctx) => {
          seen.push({ requestId: ctx.requestHeader.get("x-request-id"), timeoutMs: ctx.timeoutMs() });
          return {};
        },
      }),
    ]);
    const peer = createServiceClient(VaultService, { baseUrl: downstream.baseUrl, defaultTimeoutMs: 60_000 });
    const upstream = await start([
      serveOpen(VaultService, {
        getCertificate: async () => {
          await peer.client.getCertificate({ id: "down" });
          return {};
        },
      }),
    ]);
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl: upstream.baseUrl }));
    await vault.getCertificate({ id: "up" }, { timeoutMs: 5000, headers: { "x-request-id": "chain-7" } });
    // Without an incoming deadline the client's default applies.
    await vault.getCertificate({ id: "up" }, { headers: { "x-request-id": "chain-8" } });
    peer.close();
    expect(seen[0]?.requestId).toBe("chain-7");
    expect(seen[0]?.timeoutMs).toBeLessThanOrEqual(5000);
    expect(seen[0]?.timeoutMs).toBeGreaterThan(0);
    expect(seen[1]?.requestId).toBe("chain-8");
    expect(seen[1]?.timeoutMs).toBeGreaterThan(5000);
    expect(seen[1]?.timeoutMs).toBeLessThanOrEqual(60_000);
  });

  it("streams SERVING then NOT_SERVING on Health.Watch during shutdown, and ends the stream", async () => {
    const { server, baseUrl } = await start([serveOpen(VaultService, {})]);
    running.pop();
    const { ServingStatus } = await import("./health.js");
    server.health.setAll(ServingStatus.SERVING);
    const health = createClient(Health, createGrpcTransport({ baseUrl }));
    const statuses: Status[] = [];
    const watching = (async () => {
      for await (const res of health.watch({ service: "malha.vault.v1.VaultService" })) {
        statuses.push(res.status);
        if (statuses.length === 1) void server.shutdown({ drainMs: 50, timeoutMs: 2000 });
      }
    })();
    await watching;
    expect(statuses).toEqual([Status.SERVING, Status.NOT_SERVING]);
    const list = ConnectError.from(await health.check({}).catch((e: unknown) => e));
    expect(list.code).toBe(Code.Unavailable);
  });

  it("lets an in-flight call finish during shutdown, and aborts one that outlives the timeout", async () => {
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let aborted = false;
    const { server, baseUrl } = await start([
      serveOpen(VaultService, {
        getCertificate: async () => {
          await released;
          return { certificate: { id: "done" } };
        },
        listCertificates: async (_req, ctx) => {
          await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
          aborted = true;
          throw new ConnectError("stopped", Code.Unavailable);
        },
      }),
    ]);
    running.pop();
    const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
    const finishing = vault.getCertificate({ id: "1" });
    const hanging = vault.listCertificates({}).catch((e: unknown) => ConnectError.from(e));
    await new Promise((r) => setTimeout(r, 50)); // both calls are in flight
    const stopped = server.shutdown({ drainMs: 0, timeoutMs: 300 });
    setTimeout(release, 50);
    expect((await finishing).certificate?.id).toBe("done");
    await stopped;
    expect(aborted).toBe(true);
    expect((await hanging) instanceof ConnectError).toBe(true);
    // The listener is closed: a new connection is refused.
    const again = ConnectError.from(
      await createClient(VaultService, createGrpcTransport({ baseUrl }))
        .getCertificate({ id: "2" })
        .catch((e: unknown) => e),
    );
    expect(again.code).toBe(Code.Unavailable);
  });

  it("reports per-service status, NOT_FOUND for unknown services, and all statuses on List", async () => {
    const { server, baseUrl } = await start([serveOpen(VaultService, {})]);
    const health = createClient(Health, createGrpcTransport({ baseUrl }));
    expect((await health.check({ service: "" })).status).toBe(Status.NOT_SERVING);
    server.health.set("malha.vault.v1.VaultService", Status.SERVING);
    expect((await health.check({ service: "malha.vault.v1.VaultService" })).status).toBe(Status.SERVING);
    const unknown = ConnectError.from(await health.check({ service: "nope.Service" }).catch((e: unknown) => e));
    expect(unknown.code).toBe(Code.NotFound);
    const list = await health.list({});
    expect(Object.keys(list.statuses).sort()).toEqual(["", "malha.vault.v1.VaultService"]);
  });

  it("counts RPCs by code on the Prometheus endpoint", async () => {
    const { baseUrl, metrics } = await start([serveOpen(VaultService, {})]);
    const http = await serveMetrics(metrics, "127.0.0.1", 0);
    try {
      const vault = createClient(VaultService, createGrpcTransport({ baseUrl }));
      await vault.getCertificate({ id: "1" }).catch(() => undefined);
      const address = http.address();
      const port = typeof address === "object" && address ? address.port : 0;
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
      expect(text).toContain(
        'malha_rpc_handled_total{service="malha.vault.v1.VaultService",method="GetCertificate",code="Unimplemented",malha_service="test"} 1',
      );
      expect(text).toContain("process_cpu_seconds_total");
      expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
    } finally {
      http.close();
    }
  });
});

describe("a request body that does not decode as the method's message", () => {
  // Field 1 (id) announces 5 bytes and carries 1: protobuf cannot decode it.
  const truncated = Uint8Array.of(0x0a, 0x05, 0x31);

  function grpcCall(port: number, message: Uint8Array): Promise<http2.IncomingHttpHeaders> {
    const session = http2.connect(`http://127.0.0.1:${port}`);
    const frame = Buffer.alloc(5 + message.byteLength);
    frame.writeUInt32BE(message.byteLength, 1);
    frame.set(message, 5);
    return new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
      const stream = session.request({
        ":method": "POST",
        ":path": "/malha.vault.v1.VaultService/GetCertificate",
        "content-type": "application/grpc",
        te: "trailers",
      });
      // A trailers-only answer carries the status in its headers.
      stream.on("response", (headers) => headers["grpc-status"] !== undefined && resolve(headers));
      stream.on("trailers", resolve);
      stream.on("error", reject);
      stream.resume();
      stream.end(frame);
    }).finally(() => session.close());
  }

  it("is INVALID_ARGUMENT with the decoder's reason over gRPC and Connect, and never reaches the handler", async () => {
    let calls = 0;
    const { server } = await start(
      [
        serveOpen(VaultService, {
          getCertificate: (req) => {
            calls++;
            return { certificate: { id: req.id } };
          },
        }),
      ],
      { http1: { host: "127.0.0.1", port: 0 } },
    );
    const grpc = await grpcCall(server.port, truncated);
    expect(grpc["grpc-status"]).toBe(String(Code.InvalidArgument));
    expect(decodeURIComponent(String(grpc["grpc-message"]))).toMatch(/^parse binary: /);

    const connect = await fetch(`http://127.0.0.1:${server.http1Port}/malha.vault.v1.VaultService/GetCertificate`, {
      method: "POST",
      headers: { "content-type": "application/proto" },
      body: truncated,
    });
    expect(connect.status).toBe(400);
    const error = (await connect.json()) as { code: string; message: string };
    expect(error.code).toBe("invalid_argument");
    expect(error.message).toMatch(/^parse binary: /);
    expect(calls).toBe(0);

    // The same bytes made whole are answered, by both protocols.
    const whole = Uint8Array.of(0x0a, 0x01, 0x31);
    expect((await grpcCall(server.port, whole))["grpc-status"]).toBe("0");
    const ok = await fetch(`http://127.0.0.1:${server.http1Port}/malha.vault.v1.VaultService/GetCertificate`, {
      method: "POST",
      headers: { "content-type": "application/proto" },
      body: whole,
    });
    expect(ok.status).toBe(200);
    expect(calls).toBe(2);
  });
});

describe("RPC runtime on a plaintext HTTP/1.1 port (HTTP1_PORT)", () => {
  const curl = (args: string[]) =>
    new Promise<{ code: number; out: string }>((resolve) =>
      execFile("curl", ["-sS", "--http1.1", "-i", ...args], (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    );

  it("answers plain curl (HTTP/1.1, no TLS, no prior knowledge) with Connect/JSON, while the main port stays h2c", async () => {
    const { server, lines } = await start(
      [serveOpen(VaultService, { getCertificate: (req) => ({ certificate: { id: req.id, ibge: "3550308" } }) })],
      {
        http1: { host: "127.0.0.1", port: 0 },
      },
    );
    server.health.setAll(Status.SERVING);
    expect(server.http1Port).toBeGreaterThan(0);
    expect(server.http1Port).not.toBe(server.port);
    const health = await curl([
      "-H",
      "content-type: application/json",
      "-d",
      "{}",
      `http://127.0.0.1:${server.http1Port}/grpc.health.v1.Health/Check`,
    ]);
    expect(health.code, health.out).toBe(0);
    expect(health.out).toMatch(/^HTTP\/1\.1 200 OK\r?$/m);
    expect(health.out.trim().split("\n").at(-1)).toBe('{"status":"SERVING"}');
    const cert = await curl([
      "-H",
      "content-type: application/json",
      "-H",
      "x-request-id: h1-curl",
      "-d",
      '{"id":"7"}',
      `http://127.0.0.1:${server.http1Port}/malha.vault.v1.VaultService/GetCertificate`,
    ]);
    expect(cert.out.trim().split("\n").at(-1)).toBe('{"certificate":{"id":"7","ibge":"3550308"}}');
    expect(lines.find((l) => l.msg === "rpc" && l.requestId === "h1-curl")).toMatchObject({
      code: "OK",
      protocol: "connect",
      level: "info",
    });
    // A Connect error is JSON with the HTTP status Connect maps the code to.
    const bad = await curl([
      "-H",
      "content-type: application/json",
      "-d",
      '{"id":',
      `http://127.0.0.1:${server.http1Port}/malha.vault.v1.VaultService/GetCertificate`,
    ]);
    expect(bad.out).toMatch(/^HTTP\/1\.1 400 /m);
    expect(bad.out).toMatch(/"code":"invalid_argument"/);
    // The main port is still HTTP/2 only: curl without prior knowledge gets no HTTP/1.1 answer there.
    const main = await curl([
      "-H",
      "content-type: application/json",
      "-d",
      "{}",
      `http://127.0.0.1:${server.port}/grpc.health.v1.Health/Check`,
    ]);
    expect(main.out).not.toMatch(/^HTTP\/1\.1 200/m);
  });

  it("serves Connect and gRPC-Web clients over HTTP/1.1 (what a browser speaks), and refuses gRPC, which needs HTTP/2", async () => {
    const { server, lines } = await start([serveOpen(VaultService, { getCertificate: (req) => ({ certificate: { id: req.id } }) })], {
      http1: { host: "127.0.0.1", port: 0 },
    });
    const baseUrl = `http://127.0.0.1:${server.http1Port}`;
    const connect = createClient(VaultService, createConnectTransport({ baseUrl, httpVersion: "1.1" }));
    expect((await connect.getCertificate({ id: "1" })).certificate?.id).toBe("1");
    const grpcWeb = createClient(VaultService, createGrpcWebTransport({ baseUrl, httpVersion: "1.1" }));
    expect((await grpcWeb.getCertificate({ id: "2" }, { headers: { "x-request-id": "h1-web" } })).certificate?.id).toBe("2");
    expect(lines.find((l) => l.msg === "rpc" && l.requestId === "h1-web")).toMatchObject({ protocol: "grpc-web" });
    const grpc = createClient(VaultService, createGrpcTransport({ baseUrl }));
    await expect(grpc.getCertificate({ id: "3" }, { timeoutMs: 5000 })).rejects.toBeInstanceOf(ConnectError);
  });

  it("shuts down with idle keep-alive connections open", async () => {
    const { server } = await start([serveOpen(VaultService, { getCertificate: () => ({}) })], { http1: { host: "127.0.0.1", port: 0 } });
    const { Agent, request } = await import("undici");
    const agent = new Agent({ keepAliveTimeout: 60_000 });
    const res = await request(`http://127.0.0.1:${server.http1Port}/malha.vault.v1.VaultService/GetCertificate`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      dispatcher: agent,
    });
    expect(res.statusCode).toBe(200);
    await res.body.text();
    // Resolves without waiting for the shutdown timeout's forced close (a hung close() would time the test out).
    await server.shutdown({ drainMs: 0, timeoutMs: 30_000 });
    await agent.close();
  });
});

describe("RPC runtime over TLS", () => {
  const pki = createMeshTls();
  const read = (p: string) => readFileSync(p);

  it("serves TLS, and with a client CA requires and exposes the client certificate (mTLS)", async () => {
    const identities: (string | undefined)[] = [];
    const { server, lines } = await start(
      [
        serveOpen(VaultService, {
          getCertificate: (_req, ctx) => {
            identities.push(ctx.values.get(peerIdentityKey)?.subjectCommonName);
            return {};
          },
        }),
      ],
      { tls: { cert: read(pki.serverCert), key: read(pki.serverKey), clientCa: read(pki.caCert) } },
    );
    const baseUrl = `https://127.0.0.1:${server.port}`;
    const trusted = createServiceClient(VaultService, {
      baseUrl,
      tls: { ca: read(pki.caCert), cert: read(pki.clientCert), key: read(pki.clientKey) },
    });
    await trusted.client.getCertificate({ id: "1" });
    trusted.close();
    expect(identities).toEqual(["adn-gateway"]);
    // The access log names the verified caller.
    expect(lines.find((l) => l.msg === "rpc" && l.rpc === "malha.vault.v1.VaultService/GetCertificate")).toMatchObject({
      caller: "adn-gateway",
      code: "OK",
    });

    for (const tls of [{ ca: read(pki.caCert) }, { ca: read(pki.caCert), cert: read(pki.strangerCert), key: read(pki.strangerKey) }]) {
      const refused = createServiceClient(VaultService, { baseUrl, tls, defaultTimeoutMs: 5000 });
      // TLS 1.3 reports the refused certificate after the handshake, so the call fails either with the
      // alert or as a cancelled stream; what matters is that it fails and the handler never runs.
      await expect(refused.client.getCertificate({ id: "1" })).rejects.toBeInstanceOf(ConnectError);
      refused.close();
    }
    expect(identities).toHaveLength(1);
  });

  it("speaks Connect/JSON over HTTP/1.1 when TLS is on", async () => {
    const { server } = await start([serveOpen(VaultService, {})], {
      tls: { cert: read(pki.serverCert), key: read(pki.serverKey) },
    });
    server.health.setAll(Status.SERVING);
    const { request } = await import("undici");
    const { Agent } = await import("undici");
    const res = await request(`https://127.0.0.1:${server.port}/grpc.health.v1.Health/Check`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
      dispatcher: new Agent({ connect: { ca: read(pki.caCert) } }),
    });
    expect(res.statusCode).toBe(200);
    expect(await res.body.json()).toEqual({ status: "SERVING" });
  });
});
