import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../../libs/config/env.js";
import { readArtifactsConfig } from "./config.js";

const SECRET = "s".repeat(40);
const base = { ARTIFACT_DIR: "/var/lib/malha/artifacts", ARTIFACT_LINK_SECRET: SECRET, MYSQL_URL: "mysql://u:p@db:3306/malha" };
const read = (env: Record<string, string>) => readArtifactsConfig(new EnvReader(env));
const problem = (env: Record<string, string>) => {
  try {
    read(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  return undefined;
};

describe("artifacts config", () => {
  it("has the documented defaults", () => {
    const c = read(base);
    expect(c).toMatchObject({
      dir: "/var/lib/malha/artifacts",
      defaultTtlMs: 7 * 24 * 3600 * 1000,
      maxBytes: 256 * 1024 * 1024,
      httpPort: 8054,
      sweepIntervalMs: 300_000,
      orphanScanMs: 21_600_000,
      staleTempMs: 3_600_000,
      migrateOnStart: true,
    });
    expect(c.publicBaseUrl).toBeUndefined();
    expect(c.linkSecret.toString()).toBe(SECRET);
  });

  it("requires ARTIFACT_DIR, MYSQL_URL and a link secret", () => {
    expect(problem({ ...base, ARTIFACT_DIR: "" })).toMatch(/^config error: ARTIFACT_DIR is required/);
    expect(problem({ ...base, MYSQL_URL: "" })).toMatch(/^config error: MYSQL_URL is required/);
    expect(problem({ ...base, ARTIFACT_LINK_SECRET: "" })).toMatch(/^config error: ARTIFACT_LINK_SECRET is required/);
  });

  it("reads the secret from a file, refuses both at once and short secrets, and never echoes one", () => {
    const dir = mkdtempSync(join(tmpdir(), "malha-artifacts-config-"));
    const file = join(dir, "secret");
    writeFileSync(file, `${"f".repeat(32)}\n`);
    const { ARTIFACT_LINK_SECRET: _inline, ...noInline } = base;
    expect(read({ ...noInline, ARTIFACT_LINK_SECRET_FILE: file }).linkSecret.toString()).toBe("f".repeat(32));
    expect(problem({ ...base, ARTIFACT_LINK_SECRET_FILE: file })).toMatch(/cannot be set together/);
    const short = problem({ ...base, ARTIFACT_LINK_SECRET: "tooshort-secret" });
    expect(short).toMatch(/ARTIFACT_LINK_SECRET must be at least 32 bytes/);
    expect(short).not.toContain("tooshort-secret");
    expect(problem({ ...noInline, ARTIFACT_LINK_SECRET_FILE: join(dir, "missing") })).toMatch(/ENOENT/);
    rmSync(dir, { recursive: true, force: true });
  });

  it("validates numbers and the public base URL", () => {
    expect(read({ ...base, ARTIFACT_TTL_DIAS: "30", ARTIFACT_MAX_BYTES: "1024" })).toMatchObject({
      defaultTtlMs: 30 * 86_400_000,
      maxBytes: 1024,
    });
    expect(problem({ ...base, ARTIFACT_TTL_DIAS: "0" })).toMatch(/ARTIFACT_TTL_DIAS/);
    expect(problem({ ...base, ARTIFACT_MAX_BYTES: "lots" })).toMatch(/ARTIFACT_MAX_BYTES/);
    expect(problem({ ...base, ARTIFACT_PUBLIC_BASE_URL: "ftp://x" })).toMatch(/ARTIFACT_PUBLIC_BASE_URL/);
    expect(read({ ...base, ARTIFACT_PUBLIC_BASE_URL: "https://files.example.com/" }).publicBaseUrl).toBe("https://files.example.com");
  });
});
