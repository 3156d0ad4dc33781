// The README's buf curl / curl examples, run against real services: documentation that cannot rot.
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MESH, type MeshServiceName } from "../../libs/rpc/mesh.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../support/mysql.js";
import { serviceEnv } from "../support/mesh-env.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const readme = readFileSync(`${ROOT}README.md`, "utf8");
const commands = [...readme.matchAll(/```sh\n([\s\S]*?)```/g)]
  .flatMap((block) => block[1]!.split("\n"))
  .filter((line) => line.startsWith("npx buf curl ") || line.startsWith("curl "));

const byPort = new Map<number, MeshServiceName>((Object.keys(MESH) as MeshServiceName[]).map((name) => [MESH[name].port, name]));
const servicesUsed = [...new Set(commands.flatMap((c) => [...c.matchAll(/127\.0\.0\.1:(\d+)/g)].map((m) => Number(m[1]))))];

let db: ThrowawayDatabase;
const started = new Map<number, ServiceProcess>();
beforeAll(async () => {
  db = await createThrowawayDatabase();
  for (const port of servicesUsed) {
    const name = byPort.get(port);
    if (!name) throw new Error(`README uses port ${port}, which is no mesh service`);
    started.set(port, await startService(name, serviceEnv(name, db.url)));
  }
});
afterAll(async () => {
  for (const svc of started.values()) svc.kill("SIGKILL");
  await db?.drop();
});

describe("README examples", () => {
  it("has examples to run", () => {
    expect(commands.length).toBeGreaterThanOrEqual(5);
  });

  it.each(commands)("%s", async (command) => {
    // Same command, pointed at the port the test instance got.
    const local = command.replace(/127\.0\.0\.1:(\d+)/g, (_m, port: string) => `127.0.0.1:${started.get(Number(port))!.port}`);
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      execFile("bash", ["-c", local], { cwd: ROOT }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(code, stderr).toBe(0);
    expect(stdout).toMatch(/SERVING|malha\.|grpc\./);
  });
});

describe("README examples that call billing", () => {
  // Billing authenticates every tenant call (BILLING_TENANT_TOKENS_FILE): an example without the token
  // answers UNAUTHENTICATED, and one for another tenant than the token's PERMISSION_DENIED.
  const billingCalls = readme.split("\n").filter((l) => /^(grpcurl|npx buf curl|curl) .*malha\.billing\.v1\.BillingService\//.test(l));

  it("there are such examples, for grpcurl and buf curl", () => {
    expect(billingCalls.some((l) => l.startsWith("grpcurl"))).toBe(true);
    expect(billingCalls.some((l) => l.startsWith("npx buf curl"))).toBe(true);
  });

  it.each(billingCalls.map((l) => [l.slice(0, 80), l]))("%s… sends the dev tenant's token for that tenant", (_short, line) => {
    expect(line).toMatch(/-H "authorization: Bearer \$(TOKEN|\(cat \/tmp\/malha-stack\/dev\/billing-token-demo\))"/);
    expect(line).toMatch(/"tenant":"demo"/);
  });
});
