// The authentication interceptor in a real server over a socket: unary and streaming calls are refused
// before their handler runs, an admitted caller reaches the handler through the context values, the
// server's own services stay public, and a service whose table misses a method does not start.
import { spawnSync } from "node:child_process";
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type HandlerContext } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterEach, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../gen/health/v1/health_pb.js";
import { ArtifactsService, PutArtifactRequestSchema } from "../../gen/malha/artifacts/v1/artifacts_pb.js";
import { createLogger } from "../../log/logger.js";
import { Metrics } from "../metrics.js";
import { type RpcServer, serve, startRpcServer } from "../server.js";
import { type AccessTable, adminCaller, meshPeerCaller, publicTable } from "./access.js";
import type { CallerAuth } from "./authorize.js";
import { type Caller, callerName, callerOf } from "./caller.js";
import { secretDigest, sharedSecretResolver } from "./resolvers.js";

const lines: Record<string, unknown>[] = [];
const quiet = createLogger({
  service: "test",
  level: "info",
  destination: new Writable({
    write(chunk: Buffer, _e, cb) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      cb();
    },
  }),
});
const running: RpcServer[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.shutdown({ drainMs: 0, timeoutMs: 1000 })));
});

const auth: CallerAuth = {
  resolvers: [
    sharedSecretResolver({
      kind: "admin",
      name: "operator",
      header: "x-admin",
      setting: "ADMIN",
      digest: secretDigest("admin-0123456789"),
    }),
    sharedSecretResolver({ kind: "meshPeer", name: "billing", header: "x-peer", setting: "PEER", digest: secretDigest("peer-0123456789") }),
  ],
};

const table: AccessTable<typeof ArtifactsService> = {
  ...(publicTable(ArtifactsService) as AccessTable<typeof ArtifactsService>),
  getArtifact: [adminCaller],
  putArtifact: [adminCaller],
  statArtifact: [meshPeerCaller("billing")],
};

async function start() {
  const seen: (Caller | undefined)[] = [];
  const who = (ctx: HandlerContext) => {
    const caller = callerOf(ctx.values);
    seen.push(caller);
    return caller ? callerName(caller) : "nobody";
  };
  const server = await startRpcServer({
    services: [
      serve(
        ArtifactsService,
        {
          async *getArtifact(_req, ctx) {
            yield { part: { case: "metadata", value: { id: who(ctx) } } };
          },
          async putArtifact(reqs, ctx) {
            for await (const _ of reqs);
            return { artifact: { id: who(ctx) } };
          },
          statArtifact: (_req, ctx) => ({ artifact: { id: who(ctx) } }),
          listArtifacts: (_req, ctx) => (who(ctx), {}),
        },
        table,
      ),
    ],
    host: "127.0.0.1",
    port: 0,
    log: quiet,
    metrics: new Metrics("test"),
    auth,
  });
  running.push(server);
  const as = (headers: Record<string, string>) =>
    createClient(
      ArtifactsService,
      createGrpcTransport({
        baseUrl: `http://127.0.0.1:${server.port}`,
        interceptors: [(next) => (req) => (Object.entries(headers).forEach(([k, v]) => req.header.set(k, v)), next(req))],
      }),
    );
  return { server, seen, as, baseUrl: `http://127.0.0.1:${server.port}` };
}

const failure = (p: Promise<unknown>) =>
  p.then(
    () => expect.unreachable("the call succeeded"),
    (e: unknown) => [Code[ConnectError.from(e).code], ConnectError.from(e).rawMessage],
  );

async function* onePart() {
  yield create(PutArtifactRequestSchema, {});
}

describe("authInterceptor", () => {
  it("hands an admitted caller to unary and streaming handlers through the context, without touching the request", async () => {
    lines.length = 0;
    const { as, seen } = await start();
    const admin = as({ "x-admin": "admin-0123456789" });
    const parts = [];
    for await (const part of admin.getArtifact({ id: "a" })) parts.push(part.part.value);
    expect(parts).toMatchObject([{ id: "operator" }]);
    expect((await admin.putArtifact(onePart())).artifact?.id).toBe("operator");
    expect((await as({ "x-peer": "peer-0123456789" }).statArtifact({ id: "a" })).artifact?.id).toBe("billing");
    expect(seen.map((c) => c?.kind)).toEqual(["admin", "admin", "meshPeer"]);
    // The access log names the authenticated caller.
    expect(lines.filter((l) => l.msg === "rpc" && String(l.rpc).startsWith("malha.artifacts")).map((l) => [l.rpc, l.caller])).toEqual([
      ["malha.artifacts.v1.ArtifactsService/GetArtifact", "operator"],
      ["malha.artifacts.v1.ArtifactsService/PutArtifact", "operator"],
      ["malha.artifacts.v1.ArtifactsService/StatArtifact", "billing"],
    ]);
  });

  it("refuses unary, server-streaming and client-streaming calls before their handler runs", async () => {
    const { as, seen } = await start();
    const anyone = as({});
    const read = async (it: AsyncIterable<unknown>) => {
      for await (const _ of it);
    };
    expect(await failure(read(anyone.getArtifact({ id: "a" })))).toEqual([
      "Unauthenticated",
      "GetArtifact is an administrative call and needs the x-admin header (ADMIN); the caller is 'no client certificate'",
    ]);
    expect(await failure(as({ "x-peer": "peer-0123456789" }).putArtifact(onePart()))).toEqual([
      "PermissionDenied",
      "PutArtifact is an administrative call and needs the x-admin header (ADMIN); the caller is 'billing'",
    ]);
    expect(await failure(as({ "x-admin": "admin-0123456789" }).statArtifact({ id: "a" }))).toEqual([
      "PermissionDenied",
      "StatArtifact is a call for the mesh peer 'billing' and needs the x-peer header (PEER); the caller is 'operator'",
    ]);
    expect(await failure(as({ "x-peer": "wrong-wrong" }).statArtifact({ id: "a" }))).toEqual([
      "Unauthenticated",
      "StatArtifact is a call for the mesh peer 'billing': the x-peer header is wrong",
    ]);
    expect(seen).toEqual([]);
  });

  it("lets anyone call a public method, with no caller in the context, and keeps health and reflection public", async () => {
    const { as, seen, baseUrl } = await start();
    await as({}).listArtifacts({});
    expect(seen).toEqual([undefined]);
    const health = createClient(Health, createGrpcTransport({ baseUrl }));
    expect((await health.check({ service: "" })).status).toBe(Status.NOT_SERVING);
  });
});

describe("a service whose access table misses a method", () => {
  it("is refused by serve and by the server, naming the method", async () => {
    const { statArtifact: _left, ...partial } = table;
    expect(() => serve(ArtifactsService, {}, partial as AccessTable<typeof ArtifactsService>)).toThrow(
      "the access table of malha.artifacts.v1.ArtifactsService is incomplete: StatArtifact has no entry",
    );
    const handBuilt = { service: ArtifactsService, impl: {}, access: partial };
    await expect(
      startRpcServer({ services: [handBuilt] as never, host: "127.0.0.1", port: 0, log: quiet, metrics: new Metrics("test") }),
    ).rejects.toThrow(/StatArtifact has no entry/);
  });

  it("stops the process at start, before listening, with one line naming the method", () => {
    const run = spawnSync(process.execPath, ["--import", "tsx", "libs/rpc/auth/testing/incomplete-table-main.ts"], {
      env: { PATH: process.env.PATH ?? "", GRPC_HOST: "127.0.0.1", GRPC_PORT: "0", METRICS_PORT: "0" },
      encoding: "utf8",
      timeout: 30_000,
    });
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toBe(
      "store: failed to start: the access table of malha.store.v1.StoreService is incomplete: ListEvents has no entry",
    );
  });
});
