// What production runs: the compiled JavaScript under dist/, started with plain node (no tsx).
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Health, HealthCheckResponse_ServingStatus as Status } from "../../libs/gen/health/v1/health_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../support/mysql.js";
import { startService } from "../support/service-process.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
let db: ThrowawayDatabase;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  await new Promise<void>((resolve, reject) =>
    execFile("npm", ["run", "build", "--silent"], { cwd: ROOT }, (err, stdout, stderr) =>
      err ? reject(new Error(`npm run build failed:\n${stdout}${stderr}`)) : resolve(),
    ),
  );
}, 180_000);
afterAll(async () => {
  await db?.drop();
});

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string, prefix = ""): string[] {
  return readdirSync(join(dir, prefix), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? filesUnder(dir, join(prefix, e.name)) : [join(prefix, e.name)],
  );
}

describe("compiled build", () => {
  it("ships no test code, fixtures, tools or fault hooks", () => {
    const dist = join(ROOT, "dist");
    const files = filesUnder(dist);
    expect(files.length).toBeGreaterThan(100);
    const offending = files.filter((f) => /\.test\.|(^|\/)(testing|fixtures|testdata|test|tools)\/|adn-sim|sql56|kill-at/.test(f));
    expect(offending).toEqual([]);
    // A process that kills itself is a test's switch (test/support/kill-at.ts), never the product's.
    const selfKill = files.filter(
      (f) =>
        f.endsWith(".js") &&
        /process\.kill\(process\.pid|MALHA_TEST_KILL_AT|BILLING_FAULT_KILL_AT/.test(readFileSync(join(dist, f), "utf8")),
    );
    expect(selfKill).toEqual([]);
  });

  it("starts the store from dist/ with plain node, finds the migrations and reports SERVING", async () => {
    const store = await startService("store", { MYSQL_URL: db.url }, { compiled: true });
    try {
      const health = createClient(Health, createGrpcTransport({ baseUrl: store.baseUrl }));
      expect((await health.check({ service: "malha.store.v1.StoreService" })).status).toBe(Status.SERVING);
      const [rows] = await db.pool.query("SELECT COUNT(*) AS n FROM schema_migrations");
      expect(Number((rows as { n: number }[])[0]?.n)).toBeGreaterThan(0);
    } finally {
      store.kill("SIGTERM");
    }
    expect((await store.exited).code).toBe(0);
  });
});
