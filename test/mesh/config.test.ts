// A bad or missing variable stops a service before it listens, with one line that names it; so does a
// port another process already holds.
import { createServer, type Server } from "node:net";
import { describe, expect, it } from "vitest";
import { createThrowawayDatabase } from "../support/mysql.js";
import { EPHEMERAL_ENV, spawnService } from "../support/service-process.js";
import type { MeshServiceName } from "../../libs/rpc/mesh.js";

async function startFailing(name: MeshServiceName, env: Record<string, string | undefined>) {
  const { lines, exited } = spawnService(name, { ...EPHEMERAL_ENV, ...env });
  const { code } = await exited;
  return { code, lines };
}

describe("configuration errors", () => {
  it.each([
    ["vault", { GRPC_PORT: "fifty" }, "vault: config error: GRPC_PORT must be an integer between 0 and 65535, got a non-integer"],
    ["billing", { LOG_LEVEL: "loud" }, "billing: config error: LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent"],
    [
      "artifacts",
      { TLS_CERT_FILE: "/nonexistent/cert.pem" },
      "artifacts: config error: TLS_CERT_FILE names a file that cannot be read (ENOENT: /nonexistent/cert.pem)",
    ],
    ["store", { MYSQL_URL: undefined }, "store: config error: MYSQL_URL is required (mysql://user:pass@host:port/db)"],
    [
      "store",
      { MYSQL_URL: "mysql://malha:s3cret@127.0.0.1:1" },
      "store: config error: MYSQL_URL is invalid: database name is missing (expected mysql://user:pass@host:port/db)",
    ],
  ] as const)("%s with %j exits 78 with one line", async (name, env, line) => {
    const result = await startFailing(name, env);
    expect(result.code).toBe(78);
    expect(result.lines).toEqual([line]);
  });
});

describe("JetStream replicas", () => {
  const natsUrl = () => {
    const url = process.env.NATS_URL;
    if (!url) throw new Error("NATS_URL is not set: export the stack env (`bash scripts/stack.sh env`)");
    return url;
  };

  it("a standalone NATS cannot hold NATS_REPLICAS=3: the coordinator stops with one line naming the bucket", async () => {
    const result = await startFailing("coordinator", {
      NATS_URL: natsUrl(),
      NATS_REPLICAS: "3",
      COORDINATOR_LEASE_BUCKET: `r3_${process.pid}`,
    });
    expect(result.code).toBe(1);
    expect(result.lines.at(-1)).toBe(
      `coordinator: failed to start: cannot open lease bucket r3_${process.pid} with 3 replica(s): replicas > 1 not supported in non-clustered mode`,
    );
  });

  it("billing does not become ready with NATS_REPLICAS=3 on a standalone NATS, and says which stream", async () => {
    const db = await createThrowawayDatabase();
    try {
      const prefix = `r3${process.pid}`;
      const result = await startFailing("billing", {
        NATS_URL: natsUrl(),
        MYSQL_URL: db.url,
        ARTIFACTS_URL: "http://127.0.0.1:1",
        BILLING_NATS_PREFIX: prefix,
        BILLING_TRUST_NETWORK: "true",
        NATS_REPLICAS: "3",
      });
      expect(result.code).toBe(1);
      const failure = result.lines
        .map((l) => JSON.parse(l) as { msg: string; err?: { message: string } })
        .find((l) => l.msg === "failed to become ready");
      expect(failure?.err?.message).toMatch(
        new RegExp(
          `^cannot create stream ${prefix}\\S* with 3 replica\\(s\\) \\(NATS_REPLICAS\\): replicas > 1 not supported in non-clustered mode$`,
        ),
      );
    } finally {
      await db.drop();
    }
  });

  it("NATS_REPLICAS outside 1–5 is a configuration error", async () => {
    const result = await startFailing("coordinator", { NATS_URL: natsUrl(), NATS_REPLICAS: "0" });
    expect(result.code).toBe(78);
    expect(result.lines).toEqual([expect.stringMatching(/^coordinator: config error: NATS_REPLICAS must be an integer between 1 and 5/)]);
  });
});

describe("ports already in use", () => {
  const hold = () =>
    new Promise<{ server: Server; port: number }>((resolve) => {
      const server = createServer().listen(0, "127.0.0.1", () => resolve({ server, port: (server.address() as { port: number }).port }));
    });

  it.each([
    ["gRPC", "GRPC_PORT"],
    ["metrics", "METRICS_PORT"],
    ["HTTP/1.1", "HTTP1_PORT"],
  ] as const)("a taken %s port exits 1 with one line naming the address", async (what, variable) => {
    const { server, port } = await hold();
    try {
      // The database is never reached: listening comes before the ready check.
      const result = await startFailing("store", { MYSQL_URL: "mysql://malha:x@127.0.0.1:1/malha", [variable]: String(port) });
      expect(result.code).toBe(1);
      expect(result.lines.at(-1)).toBe(`store: cannot listen on 127.0.0.1:${port} for ${what}: address already in use (EADDRINUSE)`);
      expect(result.lines.join("\n")).not.toMatch(/\n\s+at /); // no stack trace
    } finally {
      server.close();
    }
  });
});
