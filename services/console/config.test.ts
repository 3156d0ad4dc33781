import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../../libs/config/env.js";
import { readConsoleConfig } from "./config.js";

const dir = mkdtempSync(join(tmpdir(), "malha-console-config-"));
writeFileSync(join(dir, "index.html"), "<!doctype html>");
writeFileSync(join(dir, "secret"), `${"s".repeat(40)}\n`);
const base = { CONSOLE_STATIC_DIR: dir, CONSOLE_USERS_FILE: join(dir, "users"), CONSOLE_SESSION_SECRET: "k".repeat(32) };
const read = (env: Record<string, string>) => readConsoleConfig(new EnvReader(env));
const refusal = (env: Record<string, string>) => {
  try {
    read(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("accepted");
};

describe("console config", () => {
  it("defaults: port 8057 on GRPC_HOST, 8 h sessions, no proxy header, cookie not Secure", () => {
    const c = read({ ...base, GRPC_HOST: "127.0.0.1" });
    expect(c).toMatchObject({ httpHost: "127.0.0.1", httpPort: 8057, sessionTtlMs: 8 * 3_600_000, cookieSecure: false, staticDir: dir });
    expect(c.trustProxyUserHeader).toBeUndefined();
    expect(read({ ...base, CONSOLE_TRUST_PROXY_USER_HEADER: "X-Forwarded-User" }).trustProxyUserHeader).toBe("x-forwarded-user");
  });

  it("reads the session key from a file, without its trailing newline", () => {
    const { CONSOLE_SESSION_SECRET: _inline, ...rest } = base;
    expect(read({ ...rest, CONSOLE_SESSION_SECRET_FILE: join(dir, "secret") }).sessionSecret.toString()).toBe("s".repeat(40));
  });

  it("reads the optional vault administrator secret inline or from a file, never both", () => {
    expect(read(base).vaultAdminSecret).toBeUndefined();
    expect(read({ ...base, CONSOLE_VAULT_ADMIN_SECRET_FILE: join(dir, "secret") }).vaultAdminSecret).toBe("s".repeat(40));
    expect(read({ ...base, CONSOLE_VAULT_ADMIN_SECRET: "adm" }).vaultAdminSecret).toBe("adm");
    expect(refusal({ ...base, CONSOLE_VAULT_ADMIN_SECRET: "adm", CONSOLE_VAULT_ADMIN_SECRET_FILE: join(dir, "secret") })).toMatch(
      /^config error: CONSOLE_VAULT_ADMIN_SECRET_FILE cannot be set together/,
    );
    expect(refusal({ ...base, CONSOLE_VAULT_ADMIN_SECRET_FILE: join(dir, "missing") })).toMatch(
      /^config error: CONSOLE_VAULT_ADMIN_SECRET_FILE names a file that cannot be read \(ENOENT/,
    );
  });

  it("names the variable of each mistake and never prints the secret", () => {
    const { CONSOLE_USERS_FILE: _u, ...noUsers } = base;
    expect(refusal(noUsers)).toMatch(/^config error: CONSOLE_USERS_FILE is required/);
    expect(refusal({ ...base, CONSOLE_SESSION_SECRET: "short-key" })).toMatch(
      /^config error: CONSOLE_SESSION_SECRET must be at least 32 bytes/,
    );
    expect(refusal({ ...base, CONSOLE_SESSION_SECRET: "short-key" })).not.toContain("short-key");
    expect(refusal({ ...base, CONSOLE_SESSION_SECRET_FILE: join(dir, "secret") })).toMatch(
      /^config error: CONSOLE_SESSION_SECRET_FILE cannot be set together/,
    );
    expect(refusal({ ...base, CONSOLE_STATIC_DIR: join(dir, "nope") })).toMatch(
      /^config error: CONSOLE_STATIC_DIR has no index.html .*npm run build:console/,
    );
    expect(refusal({ ...base, CONSOLE_TRUST_PROXY_USER_HEADER: "X User" })).toMatch(
      /^config error: CONSOLE_TRUST_PROXY_USER_HEADER must be an HTTP header name/,
    );
  });
});
