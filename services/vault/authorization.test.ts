import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { readRuntimeConfig } from "../../libs/rpc/runtime-config.js";
import {
  adminAuth,
  authorizeAdminCaller,
  authorizeCredentialsCaller,
  secretAuth,
  type AdminAuth,
  type CredentialsAuth,
} from "./authorization.js";
import { readVaultConfig } from "./config.js";

const SECRET = "0123456789abcdef-gateway";
const dir = mkdtempSync(join(tmpdir(), "malha-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The message of the PERMISSION_DENIED `authorize` throws. */
function deniedMessage(authorize: () => void): string {
  try {
    authorize();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.PermissionDenied);
    return (err as ConnectError).rawMessage;
  }
  throw new Error("expected PERMISSION_DENIED");
}

const denied = (auth: CredentialsAuth, peer: Parameters<typeof authorizeCredentialsCaller>[1], headers: Record<string, string> = {}) =>
  deniedMessage(() => authorizeCredentialsCaller(auth, peer, new Headers(headers)));

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

const ADMIN = "0123456789abcdef-operator";

const adminDenied = (auth: AdminAuth, peer: Parameters<typeof authorizeAdminCaller>[2], headers: Record<string, string> = {}) =>
  deniedMessage(() => authorizeAdminCaller(auth, "ImportCertificate", peer, new Headers(headers)));

describe("authorizeAdminCaller", () => {
  const peer = (cn: string | undefined, sans: string[] = []) => ({ subjectCommonName: cn, subjectAltNames: sans, fingerprint256: "AA" });
  const admit = (auth: AdminAuth, p: Parameters<typeof authorizeAdminCaller>[2], headers: Record<string, string> = {}) =>
    expect(() => authorizeAdminCaller(auth, "ImportCertificate", p, new Headers(headers))).not.toThrow();

  it("with the admin secret wants that exact header, and the gateway's secret is not it", () => {
    const auth = adminAuth([], ADMIN);
    admit(auth, undefined, { "x-malha-vault-admin-secret": ADMIN });
    expect(adminDenied(auth, undefined)).toBe(
      "ImportCertificate is an administrative call and needs the x-malha-vault-admin-secret header (VAULT_ADMIN_SECRET); the caller is 'no client certificate'",
    );
    expect(adminDenied(auth, undefined, { "x-malha-vault-admin-secret": `${ADMIN}x` })).toMatch(/header is wrong$/);
    expect(adminDenied(auth, peer("adn-gateway"), { "x-malha-vault-secret": ADMIN })).toMatch(/the caller is 'adn-gateway'$/);
  });

  it("with admin identities accepts their client certificates (CN or DNS SAN), and a secret as well when both are set", () => {
    const auth = adminAuth(["malha-admin", "ops"], undefined);
    admit(auth, peer("malha-admin"));
    admit(auth, peer("laptop-3", ["DNS:ops"]));
    expect(adminDenied(auth, peer("adn-gateway"))).toBe(
      "ImportCertificate is an administrative call and needs a client certificate named 'malha-admin' or 'ops'; the caller is 'adn-gateway'",
    );
    expect(adminDenied(auth, undefined, { "x-malha-vault-admin-secret": ADMIN })).toMatch(/the caller is 'no client certificate'$/);
    const both = adminAuth(["malha-admin"], ADMIN);
    admit(both, peer("coordinator"), { "x-malha-vault-admin-secret": ADMIN });
    admit(both, peer("malha-admin"));
    // A wrong secret is refused even from an admin certificate: whoever sent it has a problem to fix.
    expect(adminDenied(both, peer("malha-admin"), { "x-malha-vault-admin-secret": "wrong-wrong-wrong" })).toMatch(/header is wrong$/);
  });

  it("fails closed when neither is configured", () => {
    expect(adminDenied(adminAuth([], undefined), peer("malha-admin"), { "x-malha-vault-admin-secret": ADMIN })).toMatch(
      /^ImportCertificate is disabled: the vault has neither VAULT_ADMIN_SECRET nor VAULT_ADMIN_IDENTITIES configured/,
    );
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

  it("reads the administrators: secret (value or file) and identities, refusing what would let the gateway administer", () => {
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const tls = { TLS_CERT_FILE: file("c.pem", "x"), TLS_KEY_FILE: file("k.pem", "x"), TLS_CLIENT_CA_FILE: file("ca.pem", "x") };
    expect(read({}).adminAuth).toEqual({ identities: [] });
    const fromFile = read({ VAULT_ADMIN_SECRET_FILE: file("admin", `${ADMIN}\n`) }).adminAuth;
    expect(() =>
      authorizeAdminCaller(fromFile, "RotateMasterKey", undefined, new Headers({ "x-malha-vault-admin-secret": ADMIN })),
    ).not.toThrow();
    expect(read({ ...tls, VAULT_ADMIN_IDENTITIES: " malha-admin , ops," }).adminAuth.identities).toEqual(["malha-admin", "ops"]);
    expect(() => read({ VAULT_ADMIN_IDENTITIES: "malha-admin" })).toThrow(
      /^config error: VAULT_ADMIN_IDENTITIES needs mTLS \(TLS_CLIENT_CA_FILE\)/,
    );
    expect(() => read({ ...tls, VAULT_ADMIN_IDENTITIES: "ops,adn-gateway" })).toThrow(
      /^config error: VAULT_ADMIN_IDENTITIES must not name the ADN gateway's identity 'adn-gateway'/,
    );
    expect(() => read({ VAULT_CREDENTIALS_SECRET: SECRET, VAULT_ADMIN_SECRET: SECRET })).toThrow(
      /^config error: VAULT_ADMIN_SECRET must differ from VAULT_CREDENTIALS_SECRET/,
    );
    expect(() => read({ VAULT_ADMIN_SECRET: "short-one" })).toThrow(/^config error: VAULT_ADMIN_SECRET must be at least 16 characters$/);
  });

  it("refuses a short secret or two sources, without echoing it", () => {
    expect(() => read({ VAULT_CREDENTIALS_SECRET: "short-one" })).toThrow(
      /^config error: VAULT_CREDENTIALS_SECRET must be at least 16 characters$/,
    );
    expect(() => read({ VAULT_CREDENTIALS_SECRET: SECRET, VAULT_CREDENTIALS_SECRET_FILE: "/x" })).toThrow(/cannot be combined/);
    expect(() => read({ MYSQL_URL: "" })).toThrow(/^config error: MYSQL_URL is required/);
  });
});
