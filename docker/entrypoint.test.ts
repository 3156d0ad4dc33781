// The image's entrypoint, without Docker: the compiled output laid out exactly as the runtime stage of
// the Dockerfile copies it (package.json, migrations/, node_modules/, dist/, docker/*.js) in a temporary
// directory, each service started through `node docker/entrypoint.js <name>`, and every other command of
// the entrypoint (migrate, malha, help) run from there: what `docker run malha:<tag> <command>` and the
// systemd layout (/opt/malha) execute.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MeshServiceName } from "../libs/rpc/mesh.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../test/support/mysql.js";
import { promtoolCheckMetrics } from "../test/support/promtool.js";
import { ROOT, SERVICE_NAMES } from "./config-vars.js";

let image: string;
let db: ThrowawayDatabase;
const running: ChildProcess[] = [];

function run(cmd: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile(cmd, args, { cwd }, (err, stdout, stderr) =>
      err ? reject(new Error(`${cmd} ${args.join(" ")}:\n${stdout}${stderr}`)) : resolve(),
    ),
  );
}

beforeAll(async () => {
  image = mkdtempSync(join(tmpdir(), "malha-image-"));
  db = await createThrowawayDatabase();
  // Its own outDir, so a concurrent `npm run build` elsewhere never sees half-written files.
  await run(
    process.execPath,
    [join(ROOT, "node_modules/typescript/bin/tsc"), "-p", "scripts/tsconfig.build.json", "--outDir", join(image, "dist")],
    ROOT,
  );
  copyFileSync(join(ROOT, "package.json"), join(image, "package.json"));
  symlinkSync(join(ROOT, "migrations"), join(image, "migrations"));
  symlinkSync(join(ROOT, "node_modules"), join(image, "node_modules"));
  mkdirSync(join(image, "docker"));
  for (const f of ["entrypoint.js", "healthcheck.js"]) copyFileSync(join(ROOT, "docker", f), join(image, "docker", f));
}, 180_000);

afterAll(async () => {
  for (const p of running) p.kill("SIGKILL");
  await db?.drop();
  if (image) rmSync(image, { recursive: true, force: true });
});

interface Started {
  proc: ChildProcess;
  output: string[];
  exited: Promise<number | null>;
}

function entrypoint(args: string[], env: Record<string, string>): Started {
  const proc = spawn(process.execPath, ["docker/entrypoint.js", ...args], {
    cwd: image,
    env: {
      PATH: process.env.PATH,
      GRPC_HOST: "127.0.0.1",
      METRICS_HOST: "127.0.0.1",
      METRICS_PORT: "0",
      SHUTDOWN_DRAIN_SECONDS: "0",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(proc);
  const output: string[] = [];
  proc.stdout!.on("data", (c: Buffer) => output.push(c.toString()));
  proc.stderr!.on("data", (c: Buffer) => output.push(c.toString()));
  return { proc, output, exited: new Promise((resolve) => proc.once("exit", (code) => resolve(code))) };
}

async function serving(started: Started, name: string): Promise<{ port: number; metricsPort: number; http1Port?: number }> {
  for (;;) {
    const line = started.output
      .join("")
      .split("\n")
      .find((l) => l.includes('"msg":"serving"'));
    if (line) return JSON.parse(line) as { port: number; metricsPort: number; http1Port?: number };
    const exited = await Promise.race([
      started.exited.then((code) => ({ code })),
      new Promise<undefined>((r) => setTimeout(() => r(undefined), 50)),
    ]);
    if (exited) throw new Error(`${name} exited with ${exited.code}:\n${started.output.join("")}`);
  }
}

function healthcheck(p: number, service = ""): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ["docker/healthcheck.js", String(p), service], { cwd: image }, (err, stdout) =>
      resolve({ code: err ? ((err as { code?: number }).code ?? 1) : 0, out: stdout.trim() }),
    );
  });
}

/** A stand-in web app and an empty operators file: enough for the console to start. */
function consoleEnv(): Record<string, string> {
  const dir = join(image, "console-env");
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Malha</title>\n");
  writeFileSync(join(dir, "users"), "# no operators\n");
  return {
    CONSOLE_STATIC_DIR: dir,
    CONSOLE_USERS_FILE: join(dir, "users"),
    CONSOLE_SESSION_SECRET: "x".repeat(32),
    CONSOLE_HTTP_PORT: "0",
  };
}

/** The service each one reports SERVING for; the console serves only health over gRPC. */
const TYPE_NAMES: Record<Exclude<MeshServiceName, "console">, string> = {
  vault: "malha.vault.v1.VaultService",
  "adn-gateway": "malha.adn.v1.AdnGatewayService",
  store: "malha.store.v1.StoreService",
  artifacts: "malha.artifacts.v1.ArtifactsService",
  coordinator: "malha.coordinator.v1.CoordinatorService",
  billing: "malha.billing.v1.BillingService",
  danfse: "malha.danfse.v1.DanfseService",
};

describe("docker/entrypoint.js on the compiled output", () => {
  it("starts every service, each reports SERVING to the image's health check, and stops on SIGTERM", async () => {
    const natsUrl = process.env.NATS_URL;
    if (!natsUrl) throw new Error("NATS_URL is not set: export the stack env (`bash scripts/stack.sh env`)");
    const env: Record<MeshServiceName, Record<string, string>> = {
      vault: { MYSQL_URL: db.url, NFSE_MASTER_KEY: Buffer.alloc(32, 7).toString("base64") },
      // The store also opens the plaintext HTTP/1.1 listener (HTTP1_PORT), checked below with fetch (HTTP/1.1).
      store: { MYSQL_URL: db.url, HTTP1_PORT: "0" },
      artifacts: {
        MYSQL_URL: db.url,
        ARTIFACT_DIR: join(image, "artifacts"),
        ARTIFACT_LINK_SECRET: "x".repeat(32),
        ARTIFACT_HTTP_PORT: "0",
      },
      "adn-gateway": {},
      coordinator: {
        NATS_URL: natsUrl,
        COORDINATOR_LEASE_BUCKET: `leases_img_${process.pid}`,
        STORE_URL: "http://127.0.0.1:1",
        VAULT_URL: "http://127.0.0.1:1",
        ADN_GATEWAY_URL: "http://127.0.0.1:1",
      },
      billing: { MYSQL_URL: db.url, NATS_URL: natsUrl, BILLING_NATS_PREFIX: `img${process.pid}`, BILLING_TRUST_NETWORK: "true" },
      console: consoleEnv(),
      danfse: { MYSQL_URL: db.url, STORE_URL: "http://127.0.0.1:1", ARTIFACTS_URL: "http://127.0.0.1:1" },
    };
    const started = SERVICE_NAMES.map((name) => ({ name, s: entrypoint([name], { GRPC_PORT: "0", ...env[name] }) }));
    const ports = new Map<MeshServiceName, number>();
    for (const { name, s } of started) {
      const { port: p, metricsPort, http1Port } = await serving(s, name);
      if (name === "store") {
        const res = await fetch(`http://127.0.0.1:${http1Port}/grpc.health.v1.Health/Check`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: "{}",
        });
        expect(await res.json()).toEqual({ status: "SERVING" });
      } else expect(http1Port, name).toBeUndefined();
      ports.set(name, p);
      expect(await healthcheck(p), name).toEqual({ code: 0, out: "SERVING" });
      if (name !== "console") expect(await healthcheck(p, TYPE_NAMES[name]), name).toEqual({ code: 0, out: "SERVING" });
      // What Prometheus scrapes passes Prometheus' own linter (names, units, _total only on counters).
      const text = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      expect(promtoolCheckMetrics(text), `${name} /metrics`).toEqual({ status: 0, problems: "" });
    }
    // The operators' CLI from the same layout, against the running store.
    const cli = entrypoint(["malha", "municipalities", "list", "--json", "--store-url", `http://127.0.0.1:${ports.get("store")}`], {});
    expect(await cli.exited, cli.output.join("")).toBe(0);
    expect(JSON.parse(cli.output.join(""))).toEqual([]);
    for (const { s } of started) s.proc.kill("SIGTERM");
    for (const { name, s } of started) expect(await s.exited, name).toBe(0);
  }, 90_000);

  it("migrate applies migrations/ beside package.json (not dist/migrations), then finds nothing left to apply", async () => {
    const fresh = await createThrowawayDatabase();
    try {
      const first = entrypoint(["migrate"], { MYSQL_URL: fresh.url });
      expect(await first.exited, first.output.join("")).toBe(0);
      expect(first.output.join("")).toMatch(/migrations: [1-9]\d* applied, 0 already applied/);
      const again = entrypoint(["migrate"], { MYSQL_URL: fresh.url });
      expect(await again.exited, again.output.join("")).toBe(0);
      expect(again.output.join("")).toMatch(/migrations: 0 applied, [1-9]\d* already applied/);
    } finally {
      await fresh.drop();
    }
  });

  it("migrate takes another directory as its argument and says which one is missing", async () => {
    const missing = entrypoint(["migrate", join(image, "nope")], { MYSQL_URL: db.url });
    expect(await missing.exited).toBe(1);
    expect(missing.output.join("")).toContain(join(image, "nope"));
    const noUrl = entrypoint(["migrate"], {});
    expect(await noUrl.exited).toBe(2);
    expect(noUrl.output.join("")).toContain("MYSQL_URL is required");
  });

  it("help lists the commands (exit 0); no command at all is EX_USAGE", async () => {
    for (const arg of ["help", "--help"]) {
      const h = entrypoint([arg], {});
      expect(await h.exited).toBe(0);
      expect(h.output.join("")).toMatch(
        /^usage: <vault\|adn-gateway\|store\|artifacts\|coordinator\|billing\|console\|danfse> \| migrate \[dir\] \| malha <command…>/,
      );
    }
    const none = entrypoint([], {});
    expect(await none.exited).toBe(64);
    const cliHelp = entrypoint(["malha", "help"], {});
    expect(await cliHelp.exited).toBe(0);
    expect(cliHelp.output.join("")).toContain("usage: malha <command> [options]");
  });

  it("passes a configuration error through as exit code 78", async () => {
    const store = entrypoint(["store"], { GRPC_PORT: "0" });
    expect(await store.exited).toBe(78);
    expect(store.output.join("")).toContain("store: config error: MYSQL_URL is required");
  });

  it("refuses an unknown service name with EX_USAGE and lists the valid ones", async () => {
    const bogus = entrypoint(["postgres"], {});
    expect(await bogus.exited).toBe(64);
    expect(bogus.output.join("")).toMatch(
      /unknown service "postgres".*vault\|adn-gateway\|store\|artifacts\|coordinator\|billing\|console/,
    );
  });

  it("the health check fails when nothing answers on the port", async () => {
    expect((await healthcheck(1)).code).toBe(1);
  });
});
