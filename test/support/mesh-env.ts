// What each service needs in its environment to start in a test: the throwaway database, the stack's
// NATS, test-only secrets and temp directories. One place, shared by every test that starts services.
import { randomBytes } from "node:crypto";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MeshServiceName } from "../../libs/rpc/mesh.js";

/** A test-only master key (32 bytes); never a real one. */
export const TEST_MASTER_KEY = Buffer.alloc(32, 7).toString("base64");

export function serviceEnv(name: MeshServiceName, mysqlUrl: string): Record<string, string> {
  const natsUrl = process.env.NATS_URL ?? "";
  switch (name) {
    case "store":
      return { MYSQL_URL: mysqlUrl };
    case "vault":
      return { MYSQL_URL: mysqlUrl, NFSE_MASTER_KEY: TEST_MASTER_KEY };
    case "artifacts":
      return {
        MYSQL_URL: mysqlUrl,
        ARTIFACT_DIR: join(tmpdir(), `malha-artifacts-${randomBytes(4).toString("hex")}`),
        ARTIFACT_LINK_SECRET: "test-only-link-secret-0123456789abcdef",
        ARTIFACT_HTTP_PORT: "0",
      };
    case "coordinator":
      return { NATS_URL: natsUrl, COORDINATOR_LEASE_BUCKET: `leases_t_${randomBytes(4).toString("hex")}` };
    case "billing":
      // Tests of the mesh call billing as a trusted caller; tenant tokens have tests of their own.
      return {
        MYSQL_URL: mysqlUrl,
        NATS_URL: natsUrl,
        BILLING_NATS_PREFIX: `bt${randomBytes(4).toString("hex")}`,
        BILLING_TRUST_NETWORK: "true",
      };
    case "adn-gateway":
      return {};
    case "console":
      return consoleEnv();
    case "danfse":
      return { MYSQL_URL: mysqlUrl };
  }
}

/** A stand-in web app (an index.html) and an empty operators file: enough for the console to start. */
export function consoleEnv(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), "malha-console-env-"));
  writeFileSync(join(dir, "index.html"), "<!doctype html><title>Malha</title>\n");
  writeFileSync(join(dir, "users"), "# no operators\n");
  return {
    CONSOLE_STATIC_DIR: dir,
    CONSOLE_USERS_FILE: join(dir, "users"),
    CONSOLE_SESSION_SECRET: "test-only-session-secret-0123456789abcdef",
    CONSOLE_HTTP_PORT: "0",
  };
}
