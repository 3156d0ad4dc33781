import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, EnvReader } from "../../libs/config/env.js";
import { readGatewayConfig } from "./config.js";

const read = (env: Record<string, string>) => readGatewayConfig(new EnvReader(env));

describe("gateway configuration", () => {
  it("defaults to the real ADN hosts, the vault, 60 s, 3 retries, a 5-minute cool-down and pools closed after 2 idle seconds", () => {
    expect(read({})).toEqual({
      baseUrlProducao: "https://adn.nfse.gov.br",
      baseUrlProducaoRestrita: "https://adn.producaorestrita.nfse.gov.br",
      requestTimeoutMs: 60_000,
      maxRetries: 3,
      backoffBaseMs: 1000,
      backoffMaxMs: 30_000,
      maxDecompressedBytes: 8 * 1024 * 1024,
      maxResponseBytes: 64 * 1024 * 1024,
      maxBatchBytes: 15 * 1024 * 1024,
      rateLimitCooldownMs: 300_000,
      idlePoolMs: 2_000,
      maxTlsContexts: 6_000,
      credentials: { kind: "vault", refreshMs: 60_000 },
    });
    expect(read({ ADN_TLS_CONTEXTS_MAX: "0" }).maxTlsContexts).toBe(0);
    expect(read({ ADN_POOL_IDLE_SECONDS: "0" }).idlePoolMs).toBe(0);
    // Below the retry back-off is fine: a retry reopens a pool closed meanwhile (decision 0037).
    expect(read({ ADN_POOL_IDLE_SECONDS: "1", NFSE_RETRY_BACKOFF_MAX_SECONDS: "30" }).idlePoolMs).toBe(1000);
  });

  it("selects the directory source explicitly and reads the vault secret from a file", () => {
    expect(read({ ADN_CREDENTIALS_DIR: "/run/creds" }).credentials).toEqual({ kind: "dir", dir: "/run/creds", refreshMs: 1000 });
    expect(read({ ADN_CREDENTIALS_DIR: "/run/creds", ADN_CREDENTIALS_REFRESH_SECONDS: "0" }).credentials).toMatchObject({ refreshMs: 0 });
    const dir = mkdtempSync(join(tmpdir(), "malha-gw-cfg-"));
    writeFileSync(join(dir, "secret"), "s3cret-value-for-vault\n");
    expect(read({ VAULT_CREDENTIALS_SECRET_FILE: join(dir, "secret") }).credentials).toMatchObject({
      kind: "vault",
      secret: "s3cret-value-for-vault",
    });
    expect(read({ VAULT_CREDENTIALS_SECRET: "inline-secret-value" }).credentials).toMatchObject({ secret: "inline-secret-value" });
  });

  it.each([
    [{ ADN_BASE_URL_PRODUCAO: "http://adn.nfse.gov.br" }, "ADN_BASE_URL_PRODUCAO"],
    [{ NFSE_MAX_RETRIES: "-1" }, "NFSE_MAX_RETRIES"],
    [{ NFSE_REQUEST_TIMEOUT_SECONDS: "abc" }, "NFSE_REQUEST_TIMEOUT_SECONDS"],
    [{ NFSE_RETRY_BACKOFF_BASE_SECONDS: "10", NFSE_RETRY_BACKOFF_MAX_SECONDS: "1" }, "NFSE_RETRY_BACKOFF_MAX_SECONDS"],
    [{ ADN_CA_FILE: "/nonexistent/ca.pem" }, "ADN_CA_FILE"],
    [{ ADN_POOL_IDLE_SECONDS: "-1" }, "ADN_POOL_IDLE_SECONDS"],
    [{ ADN_TLS_CONTEXTS_MAX: "6k" }, "ADN_TLS_CONTEXTS_MAX"],
    [{ ADN_TLS_CONTEXTS_MAX: "-1" }, "ADN_TLS_CONTEXTS_MAX"],
    // More than the store accepts as one ApplyBatch: every such batch would fail there instead.
    [{ ADN_MAX_BATCH_BYTES: String(16 * 1024 * 1024) }, "ADN_MAX_BATCH_BYTES"],
    [{ VAULT_CREDENTIALS_SECRET: "a-secret-value", VAULT_CREDENTIALS_SECRET_FILE: "/x" }, "VAULT_CREDENTIALS_SECRET_FILE"],
    [{ VAULT_CREDENTIALS_SECRET_FILE: "/nonexistent/secret" }, "VAULT_CREDENTIALS_SECRET_FILE"],
  ])("refuses %j naming %s, never echoing a secret", (env, variable) => {
    let err: unknown;
    try {
      read(env as Record<string, string>);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).variable).toBe(variable);
    expect((err as ConfigError).message).not.toContain("a-secret-value");
  });
});
