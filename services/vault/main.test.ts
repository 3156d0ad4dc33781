// The vault as operators and the ADN gateway see it: a real process from main.ts, real gRPC over a
// socket, a real MariaDB throwaway database, real mTLS.
import { randomBytes } from "node:crypto";
import { readFileSync, writeFileSync } from "node:fs";
import { request as httpsRequest, createServer as createHttpsServer } from "node:https";
import { join } from "node:path";
import type { TLSSocket } from "node:tls";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  CertificateStatus,
  ImportRejectedSchema,
  ImportRejectionReason as Reason,
  VaultService,
} from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import {
  createTestRoot,
  issueCustom,
  issueEcnpj,
  issueServer,
  toLegacyPfx,
  toPfx,
  toPfxWith,
  type Issued,
} from "../../tools/adn-sim/icp-brasil.js";
import { clientWithHeaders } from "../../test/support/header-client.js";
import { createMeshTls, type MeshTlsFiles } from "../../test/support/mesh-tls.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { promtoolCheckMetrics } from "../../test/support/promtool.js";
import { spawnService, startService, EPHEMERAL_ENV, type ServiceProcess } from "../../test/support/service-process.js";

const DAY = 24 * 3600_000;
const SECRET = `gw-${randomBytes(16).toString("hex")}`;
const ADMIN_SECRET = `admin-${randomBytes(16).toString("hex")}`;
const PASSWORD = `Senha-${randomBytes(6).toString("hex")}-ção`;
const keyB64 = () => randomBytes(32).toString("base64");
const root = createTestRoot();

// Each describe block gets its own database: their vaults use different master keys under the same id.
let db: ThrowawayDatabase;
const databases: ThrowawayDatabase[] = [];
const started: ServiceProcess[] = [];
async function useFreshDatabase(): Promise<void> {
  db = await createThrowawayDatabase();
  databases.push(db);
}
afterAll(async () => {
  for (const svc of started) svc.kill("SIGKILL");
  for (const d of databases) await d.drop();
});

/** A vault on the current database; operators identify with VAULT_ADMIN_SECRET unless `env` says otherwise. */
async function start(env: Record<string, string>): Promise<ServiceProcess> {
  const svc = await startService("vault", { MYSQL_URL: db.url, VAULT_ADMIN_SECRET: ADMIN_SECRET, ...env });
  started.push(svc);
  return svc;
}

async function stop(svc: ServiceProcess, signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
  svc.kill(signal);
  await svc.exited;
}

/** An operator's client: every call carries the admin secret. */
const clientOf = (svc: ServiceProcess, adminSecret = ADMIN_SECRET) =>
  clientWithHeaders(VaultService, svc.baseUrl, { "x-malha-vault-admin-secret": adminSecret });
/** Any other caller in the mesh: no admin secret. */
const anonymousClientOf = (svc: ServiceProcess) => createClient(VaultService, createGrpcTransport({ baseUrl: svc.baseUrl }));
const secretHeader = (secret = SECRET) => ({ headers: { "x-malha-vault-secret": secret } });

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  if (err === undefined) throw new Error("expected the call to fail");
  return ConnectError.from(err);
}

describe("vault over gRPC with a shared secret for the gateway", () => {
  const masterKey = keyB64();
  let svc: ServiceProcess;
  let vault: Client<typeof VaultService>;
  let leaf: Issued;
  let pfx: Buffer;
  const ibge = "3550308";

  beforeAll(async () => {
    await useFreshDatabase();
    svc = await start({ NFSE_MASTER_KEY: masterKey, VAULT_CREDENTIALS_SECRET: SECRET, LOG_LEVEL: "debug" });
    vault = clientOf(svc);
    leaf = issueEcnpj(root, { cnpj: "11222333000181", razaoSocial: "MUNICIPIO DE TESTE" });
    pfx = toPfx(leaf, [root], PASSWORD);
  });

  it("imports a 3DES PFX, lists it, and its credentials complete a real mTLS handshake with a server trusting the test CA", async () => {
    const imported = await vault.importCertificate({ ibge, pfx, password: PASSWORD, requestedBy: "operador" });
    expect(imported).toMatchObject({ created: true, activated: true, replacedCertificateId: "" });
    expect(imported.certificate).toMatchObject({
      ibge,
      cnpj: "11222333000181",
      fingerprintSha256: leaf.fingerprint256,
      status: CertificateStatus.ACTIVE,
      keyId: "default",
      chainLength: 2,
    });
    const listed = await vault.listCertificates({ ibge });
    expect(listed.certificates.map((c) => c.id)).toEqual([imported.certificate!.id]);
    expect((await vault.getCertificate({ id: imported.certificate!.id })).certificate?.subject).toContain(
      "CN=MUNICIPIO DE TESTE:11222333000181",
    );

    const creds = await vault.getClientCredentials({ ibge }, secretHeader());
    expect(creds).toMatchObject({ unchanged: false, certificateId: imported.certificate!.id, cnpj: "11222333000181" });
    expect(await mtlsHandshake(creds.privateKeyPem, creds.certificateChainPem)).toBe("MUNICIPIO DE TESTE:11222333000181");
    const again = await vault.getClientCredentials({ ibge, knownVersion: creds.version }, secretHeader());
    expect(again).toMatchObject({ unchanged: true, version: creds.version, privateKeyPem: "" });
  });

  it("imports the legacy RC2-40 PFX; re-importing is idempotent", async () => {
    const legacy = issueEcnpj(root, { cnpj: "99888777000100", otherNameEncoding: "printable" });
    const bytes = toLegacyPfx(legacy, [root], "legado");
    const first = await vault.importCertificate({ ibge: "3304557", pfx: bytes, password: "legado" });
    expect(first).toMatchObject({ created: true, activated: true });
    expect(first.certificate?.cnpj).toBe("99888777000100");
    const second = await vault.importCertificate({ ibge: "3304557", pfx: bytes, password: "legado" });
    expect(second).toMatchObject({ created: false, activated: false });
    expect(second.certificate?.id).toBe(first.certificate?.id);
  });

  it("deactivates and re-activates over gRPC, and lists the expiring-soon view soonest first", async () => {
    const [cert] = (await vault.listCertificates({ ibge: "3304557" })).certificates;
    const noReason = await failure(vault.deactivateCertificate({ id: cert!.id, reason: "" }));
    expect([Code[noReason.code], noReason.rawMessage]).toEqual(["InvalidArgument", "reason is required"]);
    const off = await vault.deactivateCertificate({ id: cert!.id, reason: "senha vazou", requestedBy: "operador" });
    expect(off.certificate).toMatchObject({ status: CertificateStatus.DEACTIVATED, deactivationReason: "senha vazou" });
    expect(off.certificate?.deactivatedAt).toBeDefined();
    const none = await failure(vault.getClientCredentials({ ibge: "3304557" }, secretHeader()));
    expect(Code[none.code]).toBe("NotFound");
    const on = await vault.activateCertificate({ id: cert!.id });
    expect(on).toMatchObject({ replacedCertificateId: "", certificate: { status: CertificateStatus.ACTIVE, deactivationReason: "" } });
    expect(Code[(await failure(vault.getCertificate({ id: "424242" }))).code]).toBe("NotFound");

    const soon = await vault.listCertificates({
      expiringBefore: { seconds: BigInt(Math.floor(Date.now() / 1000) + 400 * 86400), nanos: 0 },
    });
    const notAfters = soon.certificates.map((c) => Number(c.notAfter!.seconds));
    expect(notAfters.length).toBeGreaterThanOrEqual(2);
    expect(notAfters).toEqual([...notAfters].sort((x, y) => x - y));
    expect(
      (await vault.listCertificates({ expiringBefore: { seconds: BigInt(Math.floor(Date.now() / 1000) + 86400), nanos: 0 } })).certificates,
    ).toEqual([]);
  });

  it("refuses every unusable PFX with its code, ImportRejected reason and precise message", async () => {
    const ok = { cnpj: "11222333000181" };
    const other = issueEcnpj(root, ok);
    const cases: { name: string; pfx: Uint8Array; password?: string; ibge?: string; code: Code; reason?: Reason; message: RegExp }[] = [
      {
        name: "wrong password",
        pfx,
        password: "errada",
        code: Code.InvalidArgument,
        reason: Reason.WRONG_PASSWORD,
        message: /^the password does not open the PFX/,
      },
      {
        name: "not PKCS#12",
        pfx: Buffer.from(leaf.certPem),
        code: Code.InvalidArgument,
        reason: Reason.NOT_PKCS12,
        message: /not a PKCS#12/,
      },
      {
        name: "too large",
        pfx: Buffer.alloc(64 * 1024 + 1, 1),
        code: Code.InvalidArgument,
        reason: Reason.TOO_LARGE,
        message: /limit is 65536/,
      },
      {
        name: "no private key",
        pfx: toPfxWith(null, [leaf], PASSWORD),
        code: Code.InvalidArgument,
        reason: Reason.NO_PRIVATE_KEY,
        message: /^the PFX holds no private key$/,
      },
      {
        name: "key mismatch",
        pfx: toPfxWith(other.key === leaf.key ? root.key : other.key, [leaf], PASSWORD),
        code: Code.InvalidArgument,
        reason: Reason.KEY_MISMATCH,
        message: /^the private key does not match the certificate/,
      },
      {
        name: "expired",
        pfx: toPfx(issueEcnpj(root, { ...ok, notBefore: new Date(Date.now() - 40 * DAY), notAfter: new Date(Date.now() - DAY) }), [], "x"),
        password: "x",
        code: Code.FailedPrecondition,
        reason: Reason.EXPIRED,
        message: /^the certificate expired at \d{4}-/,
      },
      {
        name: "not yet valid",
        pfx: toPfx(issueEcnpj(root, { ...ok, notBefore: new Date(Date.now() + DAY) }), [], "x"),
        password: "x",
        code: Code.FailedPrecondition,
        reason: Reason.NOT_YET_VALID,
        message: /^the certificate is not valid before \d{4}-/,
      },
      {
        name: "no client auth",
        pfx: toPfx(issueEcnpj(root, { ...ok, clientAuth: false }), [], "x"),
        password: "x",
        code: Code.InvalidArgument,
        reason: Reason.NO_CLIENT_AUTH,
        message: /no TLS client-authentication extended key usage/,
      },
      {
        name: "no CNPJ",
        pfx: toPfx(issueCustom(root, { commonName: "SERVIDOR SEM CNPJ" }), [], "x"),
        password: "x",
        code: Code.InvalidArgument,
        reason: Reason.CNPJ_NOT_FOUND,
        message: /^no CNPJ in the certificate/,
      },
      { name: "bad ibge", pfx, ibge: "35503", code: Code.InvalidArgument, message: /^ibge must be 7 digits$/ },
    ];
    for (const c of cases) {
      const err = await failure(vault.importCertificate({ ibge: c.ibge ?? "3509502", pfx: c.pfx, password: c.password ?? PASSWORD }));
      expect({ name: c.name, code: Code[err.code] }).toEqual({ name: c.name, code: Code[c.code] });
      expect(err.rawMessage, c.name).toMatch(c.message);
      if (c.reason !== undefined)
        expect(
          err.findDetails(ImportRejectedSchema).map((d) => d.reason),
          c.name,
        ).toEqual([c.reason]);
    }
    // CN fallback: no otherName, CNPJ in the CN.
    const cnOnly = issueCustom(root, { commonName: "PREFEITURA:12345678000195" });
    const imported = await vault.importCertificate({ ibge: "3509502", pfx: toPfx(cnOnly, [], "x"), password: "x" });
    expect(imported.certificate?.cnpj).toBe("12345678000195");
    expect((await vault.listCertificates({ ibge: "3509502" })).certificates).toHaveLength(1);
  });

  it("refuses every change to a caller without the admin secret, before reading its request, and changes nothing", async () => {
    const before = (await vault.listCertificates({})).certificates;
    const anyone = anonymousClientOf(svc);
    const wrong = clientOf(svc, `${ADMIN_SECRET}x`);
    const gateway = clientWithHeaders(VaultService, svc.baseUrl, { "x-malha-vault-secret": SECRET });
    const id = before[0]!.id;
    const attempts: [string, (c: Client<typeof VaultService>) => Promise<unknown>][] = [
      ["ImportCertificate", (c) => c.importCertificate({ ibge: "3106200", pfx, password: PASSWORD })],
      // An invalid request as well: validation must not run (and answer) for a caller with no right.
      ["ImportCertificate", (c) => c.importCertificate({ ibge: "1", pfx: new Uint8Array(0), password: "" })],
      ["DeactivateCertificate", (c) => c.deactivateCertificate({ id, reason: "tentativa" })],
      ["ActivateCertificate", (c) => c.activateCertificate({ id })],
      ["RotateMasterKey", (c) => c.rotateMasterKey({ maxRows: 10 })],
    ];
    for (const [call, attempt] of attempts) {
      const missing = await failure(attempt(anyone));
      expect([Code[missing.code], missing.rawMessage]).toEqual([
        "Unauthenticated",
        `${call} is an administrative call and needs the x-malha-vault-admin-secret header (VAULT_ADMIN_SECRET); the caller is 'no client certificate'`,
      ]);
      // The gateway's secret proves the gateway, which is not an administrator.
      const asGateway = await failure(attempt(gateway));
      expect([Code[asGateway.code], asGateway.rawMessage]).toEqual([
        "PermissionDenied",
        `${call} is an administrative call and needs the x-malha-vault-admin-secret header (VAULT_ADMIN_SECRET); the caller is 'adn-gateway'`,
      ]);
      const bad = await failure(attempt(wrong));
      expect([Code[bad.code], bad.rawMessage]).toEqual([
        "Unauthenticated",
        `${call} is an administrative call: the x-malha-vault-admin-secret header is wrong`,
      ]);
    }
    // Reading stays open to the mesh (the coordinator lists which municipalities have a certificate).
    expect((await anyone.listCertificates({})).certificates).toEqual(before);
    expect((await anyone.getCertificate({ id })).certificate).toEqual(before[0]);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM certificates");
    expect(Number(rows[0]!.n)).toBe(before.length);
  });

  it("hands credentials only to a caller with the gateway's secret", async () => {
    const missing = await failure(vault.getClientCredentials({ ibge }));
    // The operator's client sends the admin secret only: an administrator, not the gateway.
    expect([Code[missing.code], missing.rawMessage]).toEqual([
      "PermissionDenied",
      "GetClientCredentials is a call for the mesh peer 'adn-gateway' and needs the x-malha-vault-secret header (VAULT_CREDENTIALS_SECRET); the caller is 'administrator'",
    ]);
    const anonymous = await failure(anonymousClientOf(svc).getClientCredentials({ ibge }));
    expect([Code[anonymous.code], anonymous.rawMessage]).toEqual([
      "Unauthenticated",
      expect.stringMatching(/needs the x-malha-vault-secret header \(VAULT_CREDENTIALS_SECRET\); the caller is 'no client certificate'$/),
    ]);
    const wrong = await failure(anonymousClientOf(svc).getClientCredentials({ ibge }, secretHeader(`${SECRET}x`)));
    expect([Code[wrong.code], wrong.rawMessage]).toEqual([
      "Unauthenticated",
      "GetClientCredentials is a call for the mesh peer 'adn-gateway': the x-malha-vault-secret header is wrong",
    ]);
  });

  it("keeps only ciphertext in MySQL: no PFX bytes, password, PEM or master key in any column", async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT * FROM certificates");
    const [keys] = await db.pool.query<RowDataPacket[]>("SELECT * FROM vault_master_keys");
    expect(rows.length).toBeGreaterThanOrEqual(3);
    const keyBody = pemBody(leaf.keyPem);
    const forbidden = [
      pfx,
      Buffer.from(PASSWORD),
      Buffer.from("PRIVATE KEY"),
      Buffer.from("BEGIN CERTIFICATE"),
      Buffer.from(keyBody.slice(0, 48)),
      Buffer.from(pemBody(leaf.certPem).slice(0, 48)),
      Buffer.from(masterKey),
      Buffer.from(masterKey, "base64"),
    ];
    for (const row of [...rows, ...keys]) {
      for (const [column, value] of Object.entries(row)) {
        if (value === null || value instanceof Date || typeof value === "number") continue;
        const bytes = Buffer.isBuffer(value) ? value : Buffer.from(String(value));
        for (const needle of forbidden) expect(bytes.includes(needle), `${column} holds a secret`).toBe(false);
      }
    }
    const row = rows.find((r) => r["fingerprint_sha256"] === leaf.fingerprint256)!;
    expect(row).toMatchObject({ algorithm: "aes-256-gcm", key_id: "default" });
    expect((row["private_key_nonce"] as Buffer).length).toBe(12);
    expect((row["pfx_ciphertext"] as Buffer).length).toBe(pfx.length);
  });

  it("a ciphertext copied to another row fails that row with DATA_LOSS; nothing else breaks", async () => {
    await db.pool.query(
      `UPDATE certificates dst JOIN certificates src ON src.ibge = ? AND src.active_ibge IS NOT NULL
         SET dst.chain_ciphertext = src.chain_ciphertext, dst.chain_nonce = src.chain_nonce, dst.chain_auth_tag = src.chain_auth_tag
       WHERE dst.ibge = '3304557'`,
      [ibge],
    );
    const err = await failure(vault.getClientCredentials({ ibge: "3304557" }, secretHeader()));
    expect(Code[err.code]).toBe("DataLoss");
    expect(err.rawMessage).toMatch(/chain ciphertext failed authentication/);
    // The gateway goes by this reason, not by the message.
    expect(err.findDetails(ErrorInfoSchema).map((d) => [d.domain, d.reason])).toEqual([["malha.vault", "CIPHERTEXT_TAMPERED"]]);
    const none = await failure(vault.getClientCredentials({ ibge: "1100015" }, secretHeader()));
    expect([Code[none.code], none.findDetails(ErrorInfoSchema)[0]?.reason]).toEqual(["NotFound", "NO_ACTIVE_CERTIFICATE"]);
    expect((await vault.getClientCredentials({ ibge }, secretHeader())).privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
    expect((await vault.listCertificates({})).certificates.length).toBeGreaterThanOrEqual(3);
  });

  it("exports certificate gauges by status, expiry window and seconds to expiry per municipality, and passes promtool", async () => {
    const text = await (await fetch(`http://127.0.0.1:${svc.metricsPort}/metrics`)).text();
    expect(text).toMatch(/^malha_vault_certificates\{status="active",expires_within="later"[^}]*\} 3$/m);
    const seconds = new RegExp(`^malha_vault_active_certificate_seconds_to_expiry\\{ibge="${ibge}"[^}]*\\} (\\d+)$`, "m").exec(text)?.[1];
    // The test certificate is valid for a year from its creation.
    expect(Number(seconds) / 86_400).toBeGreaterThan(364);
    expect(Number(seconds) / 86_400).toBeLessThan(366);
    expect(promtoolCheckMetrics(text)).toEqual({ status: 0, problems: "" });
    expect(text).toMatch(/^malha_vault_certificates_expiring_soon\{[^}]*\} 0$/m);
  });

  it("never logs a secret, even at debug (password, PEM, PFX base64, master key, gateway secret)", async () => {
    const out = svc.lines.join("\n");
    expect(out).toContain('"msg":"certificate imported"');
    expect(out).toContain('"msg":"client credentials handed out"');
    const pfxB64 = pfx.toString("base64");
    for (const needle of [
      PASSWORD,
      "PRIVATE KEY",
      "BEGIN CERTIFICATE",
      pemBody(leaf.keyPem).slice(0, 40),
      pfxB64.slice(0, 40),
      pfxB64.slice(-60, -20),
      masterKey,
      SECRET,
      ADMIN_SECRET,
    ]) {
      expect(out.includes(needle), `logs contain ${needle.slice(0, 12)}…`).toBe(false);
    }
  });
});

describe("vault with mesh mTLS", () => {
  let pki: MeshTlsFiles;
  let svc: ServiceProcess;
  beforeAll(async () => {
    await useFreshDatabase();
    pki = createMeshTls();
    // Trust the mesh CA (gateway) and the ICP test root (a service with another identity).
    const bundle = join(pki.dir, "client-cas.pem");
    writeFileSync(bundle, readFileSync(pki.caCert, "utf8") + root.certPem);
    svc = await start({
      NFSE_MASTER_KEY: keyB64(),
      TLS_CERT_FILE: pki.serverCert,
      TLS_KEY_FILE: pki.serverKey,
      TLS_CLIENT_CA_FILE: bundle,
      VAULT_CREDENTIALS_SECRET: SECRET,
      // Operators identify by certificate here, not by secret.
      VAULT_ADMIN_SECRET: "",
      VAULT_ADMIN_IDENTITIES: "malha-admin",
    });
  });

  it("lets only an admin identity import, never the gateway's", async () => {
    const read = (p: string) => readFileSync(p);
    const as = (cert: Buffer, key: Buffer) =>
      createServiceClient(VaultService, { baseUrl: svc.baseUrl, tls: { ca: read(pki.caCert), cert, key } });
    const operator = issueCustom(root, { commonName: "malha-admin" });
    const admin = as(Buffer.from(operator.certPem), Buffer.from(operator.keyPem));
    const gateway = as(read(pki.clientCert), read(pki.clientKey));
    try {
      const leaf = issueEcnpj(root, { cnpj: "11222333000181" });
      const refused = await failure(gateway.client.importCertificate({ ibge: "3550308", pfx: toPfx(leaf, [root], "x"), password: "x" }));
      expect([Code[refused.code], refused.rawMessage]).toEqual([
        "PermissionDenied",
        "ImportCertificate is an administrative call and needs a client certificate named 'malha-admin'; the caller is 'adn-gateway'",
      ]);
      const imported = await admin.client.importCertificate({
        ibge: "3550308",
        pfx: toPfx(leaf, [root], "x"),
        password: "x",
        requestedBy: "operador",
      });
      expect(imported.activated).toBe(true);
    } finally {
      admin.close();
      gateway.close();
    }
  });

  it("gives credentials to the adn-gateway identity and PERMISSION_DENIED to another trusted identity, secret or not", async () => {
    const read = (p: string) => readFileSync(p);
    const gateway = createServiceClient(VaultService, {
      baseUrl: svc.baseUrl,
      tls: { ca: read(pki.caCert), cert: read(pki.clientCert), key: read(pki.clientKey) },
    });
    const billing = issueCustom(root, { commonName: "billing" });
    const other = createServiceClient(VaultService, {
      baseUrl: svc.baseUrl,
      tls: { ca: read(pki.caCert), cert: Buffer.from(billing.certPem), key: Buffer.from(billing.keyPem) },
    });
    const operator = issueCustom(root, { commonName: "malha-admin" });
    const admin = createServiceClient(VaultService, {
      baseUrl: svc.baseUrl,
      tls: { ca: read(pki.caCert), cert: Buffer.from(operator.certPem), key: Buffer.from(operator.keyPem) },
    });
    try {
      const leaf = issueEcnpj(root, { cnpj: "11222333000181" });
      await admin.client.importCertificate({ ibge: "4106902", pfx: toPfx(leaf, [root], "x"), password: "x" });
      const creds = await gateway.client.getClientCredentials({ ibge: "4106902" });
      expect(creds.fingerprintSha256).toBe(leaf.fingerprint256);
      const denied = await failure(other.client.getClientCredentials({ ibge: "4106902" }, secretHeader()));
      expect(Code[denied.code]).toBe("PermissionDenied");
      expect(denied.rawMessage).toMatch(/certificate named 'adn-gateway'; the caller is 'billing'$/);
    } finally {
      gateway.close();
      other.close();
      admin.close();
    }
  });
});

describe("master keys across restarts", () => {
  const k1 = keyB64();
  const k2 = keyB64();
  beforeAll(useFreshDatabase);

  it("refuses to start without a valid key, in one line naming the variable and never echoing the value", async () => {
    const bad = `${"A".repeat(20)}secret-ish`;
    for (const [env, variable] of [
      [{}, "NFSE_MASTER_KEY is required"],
      [{ NFSE_MASTER_KEY: bad }, "NFSE_MASTER_KEY is invalid"],
      [{ NFSE_MASTER_KEYS: `k1:${k1},k2:${bad}`, NFSE_MASTER_KEY_ID: "k2" }, "NFSE_MASTER_KEYS key 'k2' is invalid"],
    ] as const) {
      const proc = spawnService("vault", { ...EPHEMERAL_ENV, MYSQL_URL: db.url, ...env });
      expect((await proc.exited).code).toBe(78);
      expect(proc.lines).toEqual([expect.stringContaining(`vault: config error: ${variable}`)]);
      expect(proc.lines.join("")).not.toContain(bad);
      expect(proc.lines.join("")).not.toContain(k1);
    }
  });

  it("reports undecryptable rows at start, refuses changed key bytes, and rotation survives being killed midway", async () => {
    // Three certificates under k1; this vault has no gateway secret nor mTLS: credentials fail closed.
    const a = await start({ NFSE_MASTER_KEY: k1, NFSE_MASTER_KEY_ID: "k1" });
    expect(a.lines.some((l) => l.includes('"level":"warn"') && l.includes("GetClientCredentials will refuse every caller"))).toBe(true);
    const ibges = ["2304400", "2611606", "5300108"];
    const ids: string[] = [];
    for (const ibge of ibges) {
      const c = issueEcnpj(root, { cnpj: "11222333000181" });
      ids.push((await clientOf(a).importCertificate({ ibge, pfx: toPfx(c, [], "x"), password: "x" })).certificate!.id);
    }
    const closed = await failure(clientOf(a).getClientCredentials({ ibge: ibges[0] }, secretHeader()));
    expect([Code[closed.code], closed.rawMessage]).toEqual(["PermissionDenied", expect.stringMatching(/disabled/)]);
    await stop(a);

    // Only k2: starts, names every row it cannot decrypt and why. No administrators configured either:
    // it says so at start and refuses every change.
    const b = await start({ NFSE_MASTER_KEY: k2, NFSE_MASTER_KEY_ID: "k2", VAULT_ADMIN_SECRET: "" });
    const report = b.lines.find((l) => l.includes("certificates that the configured master keys cannot decrypt"));
    expect(report).toBeDefined();
    expect(b.lines.some((l) => l.includes('"level":"warn"') && l.includes("RotateMasterKey will refuse every caller"))).toBe(true);
    const noAdmin = await failure(clientOf(b).rotateMasterKey({}));
    expect([Code[noAdmin.code], noAdmin.rawMessage]).toEqual([
      "PermissionDenied",
      "RotateMasterKey is disabled: the vault has neither VAULT_ADMIN_SECRET nor VAULT_ADMIN_IDENTITIES configured, so nobody may change its certificates or keys",
    ]);
    expect(JSON.parse(report!)).toMatchObject({
      count: ids.length,
      certificates: ids.map((id) =>
        expect.objectContaining({ id, keyId: "k1", problem: expect.stringMatching(/'k1', which is not configured/) }),
      ),
    });
    await stop(b);

    // k1's id with other bytes: refused before serving.
    const wrong = spawnService("vault", { ...EPHEMERAL_ENV, MYSQL_URL: db.url, NFSE_MASTER_KEY: keyB64(), NFSE_MASTER_KEY_ID: "k1" });
    expect((await wrong.exited).code).toBe(1);
    expect(wrong.lines.join("\n")).toMatch(/master key 'k1' is not the key this database recorded/);

    // Both keys, k2 active: one row moves, then the process is killed.
    const both = { NFSE_MASTER_KEYS: `k1:${k1}\nk2:${k2}`, NFSE_MASTER_KEY_ID: "k2" };
    const c = await start(both);
    const step = await clientOf(c).rotateMasterKey({ maxRows: 1 });
    expect(step).toMatchObject({ targetKeyId: "k2", rowsReencrypted: 1n, rowsRemaining: 2n, done: false });
    await stop(c, "SIGKILL");

    const d = await start(both);
    let result = await clientOf(d).rotateMasterKey({ targetKeyId: "k2", maxRows: 1 });
    while (!result.done) {
      expect(result.undecryptableCertificateIds).toEqual([]);
      result = await clientOf(d).rotateMasterKey({ targetKeyId: "k2", maxRows: 1 });
    }
    expect(result.rowsRemaining).toBe(0n);
    expect(await clientOf(d).rotateMasterKey({})).toMatchObject({ rowsReencrypted: 0n, done: true });
    await stop(d);

    // The old key removed: nothing reported, every credential decrypts.
    const e = await start({ NFSE_MASTER_KEY: k2, NFSE_MASTER_KEY_ID: "k2", VAULT_CREDENTIALS_SECRET: SECRET });
    expect(e.lines.some((l) => l.includes("cannot decrypt"))).toBe(false);
    for (const ibge of ibges) {
      const creds = await clientOf(e).getClientCredentials({ ibge }, secretHeader());
      expect(creds.privateKeyPem).toMatch(/BEGIN PRIVATE KEY/);
    }
    const listed = await clientOf(e).listCertificates({});
    expect(listed.certificates.every((cert) => cert.keyId === "k2")).toBe(true);
    await stop(e);
  });
});

/** A local HTTPS server requiring client certificates from the test root; resolves the client CN it saw. */
async function mtlsHandshake(keyPem: string, chainPem: string): Promise<string> {
  const server = issueServer(root);
  const https = createHttpsServer(
    { key: server.keyPem, cert: server.certPem, ca: root.certPem, requestCert: true, rejectUnauthorized: true },
    (req, res) => res.end(String((req.socket as TLSSocket).getPeerCertificate().subject?.CN ?? "")),
  );
  await new Promise<void>((resolve) => https.listen(0, "127.0.0.1", resolve));
  const port = (https.address() as { port: number }).port;
  try {
    return await new Promise<string>((resolve, reject) => {
      const req = httpsRequest(
        { host: "127.0.0.1", port, path: "/", ca: root.certPem, key: keyPem, cert: chainPem, servername: "localhost" },
        (res) => {
          let body = "";
          res.on("data", (chunk: Buffer) => (body += chunk.toString()));
          res.on("end", () => resolve(body));
        },
      );
      req.on("error", reject);
      req.end();
    });
  } finally {
    https.close();
  }
}

function pemBody(pem: string): string {
  return pem.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
}
