import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { readRuntimeConfig } from "../../libs/rpc/runtime-config.js";
import { authorizeCredentialsCaller, secretAuth, type CredentialsAuth } from "./authorization.js";
import { readVaultConfig } from "./config.js";

const SECRET = "0123456789abcdef-gateway";
const dir = mkdtempSync(join(tmpdir(), "malha-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function denied(auth: CredentialsAuth, peer: Parameters<typeof authorizeCredentialsCaller>[1], headers: Record<string, string> = {}): string {
  try {
    authorizeCredentialsCaller(auth, peer, new Headers(headers));
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    return (err as ConnectError).rawMessage;
  }
  throw new Error("expected PERMISSION_DENIED");
}

describe("authorizeCredentialsCaller", () => {
  const peer = (cn: string | undefined, sans: string[] = []) => ({ subjectCommonName: cn, subjectAltNames: sans, fingerprint256: "AA" });

  it("with mTLS accepts the gateway identity as CN or DNS SAN and nothing else", () => {
    const auth: CredentialsAuth = { mode: "mtls", identity: "adn-gateway" };
    expect(() => authorizeCredentialsCaller(auth, peer("adn-gateway"), new Headers())).not.toThrow();
    expect(() => authorizeCredentialsCaller(auth, peer("pod-7", ["DNS:adn-gateway"]), new Headers())).not.toThrow();
    expect(denied(auth, peer("billing", ["IP Address:127.0.0.1"]))).toMatch(/identity 'adn-gateway'.*'billing'/);
    expect(denied(auth, undefined, { "x-malha-vault-secret": SECRET })).toMatch(/no client certificate/);
  });

  it("without mTLS wants the exact shared secret", () => {
    const auth = secretAuth(SECRET);
    expect(() => authorizeCredentialsCaller(auth, undefined, new Headers({ "x-malha-vault-secret": SECRET }))).not.toThrow();
    expect(denied(auth, undefined)).toMatch(/header is missing/);
    expect(denied(auth, undefined, { "x-malha-vault-secret": SECRET.slice(0, -1) })).toMatch(/header is wrong/);
    expect(denied(auth, undefined, { "x-malha-vault-secret": `${SECRET}0` })).toMatch(/header is wrong/);
  });

  it("fails closed when nothing is configured", () => {
    expect(denied({ mode: "closed" }, peer("adn-gateway"), { "x-malha-vault-secret": SECRET })).toMatch(/disabled/);
  });
});

describe("readVaultConfig credentials mode", () => {
  const base = { MYSQL_URL: "mysql://u:p@127.0.0.1:3306/malha", NFSE_MASTER_KEY: Buffer.alloc(32, 1).toString("base64") };
  const read = (env: Record<string, string>) => {
    const reader = new EnvReader({ ...base, ...env });
    return readVaultConfig(reader, readRuntimeConfig(reader, { port: 1, metricsPort: 2 }));
  };

  it("chooses mTLS when a client CA is set, else the secret (value or file), else closed", () => {
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const tls = { TLS_CERT_FILE: file("c.pem", "x"), TLS_KEY_FILE: file("k.pem", "x"), TLS_CLIENT_CA_FILE: file("ca.pem", "x") };
    expect(read({ ...tls, VAULT_ADN_GATEWAY_IDENTITY: "gw" }).credentialsAuth).toEqual({ mode: "mtls", identity: "gw" });
    expect(read({ ...tls }).credentialsAuth).toEqual({ mode: "mtls", identity: "adn-gateway" });
    expect(read({ VAULT_CREDENTIALS_SECRET: SECRET }).credentialsAuth.mode).toBe("secret");
    const fromFile = read({ VAULT_CREDENTIALS_SECRET_FILE: file("secret", `${SECRET}\n`) }).credentialsAuth;
    expect(() => authorizeCredentialsCaller(fromFile, undefined, new Headers({ "x-malha-vault-secret": SECRET }))).not.toThrow();
    expect(read({}).credentialsAuth).toEqual({ mode: "closed" });
  });

  it("refuses a short secret or two sources, without echoing it", () => {
    expect(() => read({ VAULT_CREDENTIALS_SECRET: "short-one" })).toThrow(/^config error: VAULT_CREDENTIALS_SECRET must be at least 16 characters$/);
    expect(() => read({ VAULT_CREDENTIALS_SECRET: SECRET, VAULT_CREDENTIALS_SECRET_FILE: "/x" })).toThrow(/cannot be combined/);
    expect(() => read({ MYSQL_URL: "" })).toThrow(/^config error: MYSQL_URL is required/);
  });
});
