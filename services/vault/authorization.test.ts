import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { readRuntimeConfig } from "../../libs/rpc/runtime-config.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { authorize } from "../../libs/rpc/auth/authorize.js";
import type { PeerIdentity } from "../../libs/rpc/context.js";
import { adminAuth, secretAuth, vaultAccess, vaultCallers, type AdminAuth, type CredentialsAuth } from "./authorization.js";
import { readVaultConfig } from "./config.js";

const SECRET = "0123456789abcdef-gateway";
const dir = mkdtempSync(join(tmpdir(), "malha-auth-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const peer = (cn: string | undefined, sans: string[] = []): PeerIdentity => ({
  subjectCommonName: cn,
  subjectAltNames: sans,
  fingerprint256: "AA",
});
const NO_ADMIN = adminAuth([], undefined);

/** The vault's decision for one call, as the authentication interceptor makes it. */
function decide(
  credentials: CredentialsAuth,
  admin: AdminAuth,
  method: keyof typeof VaultService.method,
  p: PeerIdentity | undefined,
  headers: Record<string, string> = {},
) {
  const name = VaultService.method[method].name;
  return authorize(name, vaultAccess(credentials)[method], vaultCallers(credentials, admin), { header: new Headers(headers), peer: p });
}

/** The code and message of the refusal `fn` throws. */
function refusal(fn: () => unknown): [string, string] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    return [Code[(err as ConnectError).code], (err as ConnectError).rawMessage];
  }
  throw new Error("expected a refusal");
}

const credentials = (auth: CredentialsAuth, p: PeerIdentity | undefined, headers: Record<string, string> = {}) =>
  decide(auth, NO_ADMIN, "getClientCredentials", p, headers);

describe("GetClientCredentials", () => {
  it("with mTLS accepts the gateway identity as CN or DNS SAN; another certificate is refused, no certificate is unauthenticated", () => {
    const auth: CredentialsAuth = { mode: "mtls", identity: "adn-gateway" };
    expect(credentials(auth, peer("adn-gateway"))).toEqual({ kind: "meshPeer", name: "adn-gateway", proof: "client certificate" });
    expect(credentials(auth, peer("pod-7", ["DNS:adn-gateway"]))).toMatchObject({ kind: "meshPeer", name: "adn-gateway" });
    expect(refusal(() => credentials(auth, peer("billing", ["IP Address:127.0.0.1"])))).toEqual([
      "PermissionDenied",
      "GetClientCredentials is a call for the mesh peer 'adn-gateway' and needs a client certificate named 'adn-gateway'; the caller is 'billing'",
    ]);
    expect(refusal(() => credentials(auth, undefined, { "x-malha-vault-secret": SECRET }))).toEqual([
      "Unauthenticated",
      expect.stringMatching(/the caller is 'no client certificate'$/),
    ]);
  });

  it("without mTLS wants the exact shared secret", () => {
    const auth = secretAuth(SECRET);
    expect(credentials(auth, undefined, { "x-malha-vault-secret": SECRET })).toMatchObject({ kind: "meshPeer", name: "adn-gateway" });
    expect(refusal(() => credentials(auth, undefined))).toEqual([
      "Unauthenticated",
      "GetClientCredentials is a call for the mesh peer 'adn-gateway' and needs the x-malha-vault-secret header (VAULT_CREDENTIALS_SECRET); the caller is 'no client certificate'",
    ]);
    for (const wrong of [SECRET.slice(0, -1), `${SECRET}0`])
      expect(refusal(() => credentials(auth, undefined, { "x-malha-vault-secret": wrong }))).toEqual([
        "Unauthenticated",
        "GetClientCredentials is a call for the mesh peer 'adn-gateway': the x-malha-vault-secret header is wrong",
      ]);
    // An administrator is authenticated, but credentials are the gateway's alone.
    expect(
      refusal(() => decide(auth, adminAuth([], ADMIN), "getClientCredentials", undefined, { "x-malha-vault-admin-secret": ADMIN })),
    ).toEqual(["PermissionDenied", expect.stringMatching(/the caller is 'administrator'$/)]);
  });

  it("fails closed when nothing is configured", () => {
    expect(refusal(() => credentials({ mode: "closed" }, peer("adn-gateway"), { "x-malha-vault-secret": SECRET }))).toEqual([
      "PermissionDenied",
      "GetClientCredentials is disabled: the vault has neither an mTLS client CA (TLS_CLIENT_CA_FILE) nor VAULT_CREDENTIALS_SECRET configured",
    ]);
  });
});

const ADMIN = "0123456789abcdef-operator";

describe("administrative calls", () => {
  const importAs = (admin: AdminAuth, p: PeerIdentity | undefined, headers: Record<string, string> = {}, creds = secretAuth(SECRET)) =>
    decide(creds, admin, "importCertificate", p, headers);

  it("with the admin secret want that exact header, and the gateway's secret is not it", () => {
    const auth = adminAuth([], ADMIN);
    expect(importAs(auth, undefined, { "x-malha-vault-admin-secret": ADMIN })).toEqual({
      kind: "admin",
      name: "administrator",
      proof: "the x-malha-vault-admin-secret header",
    });
    expect(refusal(() => importAs(auth, undefined))).toEqual([
      "Unauthenticated",
      "ImportCertificate is an administrative call and needs the x-malha-vault-admin-secret header (VAULT_ADMIN_SECRET); the caller is 'no client certificate'",
    ]);
    expect(refusal(() => importAs(auth, undefined, { "x-malha-vault-admin-secret": `${ADMIN}x` }))).toEqual([
      "Unauthenticated",
      "ImportCertificate is an administrative call: the x-malha-vault-admin-secret header is wrong",
    ]);
    // The gateway is authenticated by its own secret, and is not an administrator.
    expect(refusal(() => importAs(auth, undefined, { "x-malha-vault-secret": SECRET }))).toEqual([
      "PermissionDenied",
      "ImportCertificate is an administrative call and needs the x-malha-vault-admin-secret header (VAULT_ADMIN_SECRET); the caller is 'adn-gateway'",
    ]);
  });

  it("with admin identities accept their client certificates (CN or DNS SAN), and a secret as well when both are set", () => {
    const mtls: CredentialsAuth = { mode: "mtls", identity: "adn-gateway" };
    const auth = adminAuth(["malha-admin", "ops"], undefined);
    expect(importAs(auth, peer("malha-admin"), {}, mtls)).toMatchObject({ kind: "admin", name: "malha-admin" });
    expect(importAs(auth, peer("laptop-3", ["DNS:ops"]), {}, mtls)).toMatchObject({ kind: "admin", name: "ops" });
    expect(refusal(() => importAs(auth, peer("adn-gateway"), {}, mtls))).toEqual([
      "PermissionDenied",
      "ImportCertificate is an administrative call and needs a client certificate named 'malha-admin' or 'ops'; the caller is 'adn-gateway'",
    ]);
    expect(refusal(() => importAs(auth, undefined, { "x-malha-vault-admin-secret": ADMIN }, mtls))).toEqual([
      "Unauthenticated",
      expect.stringMatching(/the caller is 'no client certificate'$/),
    ]);
    const both = adminAuth(["malha-admin"], ADMIN);
    expect(importAs(both, peer("coordinator"), { "x-malha-vault-admin-secret": ADMIN }, mtls)).toMatchObject({ kind: "admin" });
    expect(importAs(both, peer("malha-admin"), {}, mtls)).toMatchObject({ kind: "admin", name: "malha-admin" });
    // A wrong secret is refused even from an admin certificate: whoever sent it has a problem to fix.
    expect(refusal(() => importAs(both, peer("malha-admin"), { "x-malha-vault-admin-secret": "wrong-wrong-wrong" }, mtls))).toEqual([
      "Unauthenticated",
      expect.stringMatching(/header is wrong$/),
    ]);
  });

  it("fail closed when neither is configured", () => {
    expect(refusal(() => importAs(NO_ADMIN, peer("malha-admin"), { "x-malha-vault-admin-secret": ADMIN }))).toEqual([
      "PermissionDenied",
      "ImportCertificate is disabled: the vault has neither VAULT_ADMIN_SECRET nor VAULT_ADMIN_IDENTITIES configured, so nobody may change its certificates or keys",
    ]);
  });

  it("leave reading open to the mesh: no credential is read", () => {
    expect(decide(secretAuth(SECRET), NO_ADMIN, "listCertificates", undefined, { "x-malha-vault-admin-secret": "wrong-wrong-wrong" })).toBe(
      undefined,
    );
    expect(decide({ mode: "closed" }, NO_ADMIN, "getCertificate", undefined)).toBe(undefined);
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
    expect(credentials(fromFile, undefined, { "x-malha-vault-secret": SECRET })).toMatchObject({ kind: "meshPeer" });
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
    expect(decide(secretAuth(SECRET), fromFile, "rotateMasterKey", undefined, { "x-malha-vault-admin-secret": ADMIN })).toMatchObject({
      kind: "admin",
    });
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
