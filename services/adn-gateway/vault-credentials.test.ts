// The gateway with its production credential source: the real vault process (real MariaDB, shared-secret
// authorisation), real gRPC between them, the simulator over HTTPS + mTLS with the vault's PEM.
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdnGatewayService, BatchStatus } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { CredentialsProblem, CredentialsUnavailableSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { createSimPki } from "../../tools/adn-sim/pki.js";
import { startAdnSimulator, type AdnSimulator } from "../../tools/adn-sim/server.js";
import { toPfx } from "../../tools/adn-sim/icp-brasil.js";
import { createMeshTls } from "../../test/support/mesh-tls.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { clientWithHeaders } from "../../test/support/header-client.js";

const MAIN = { ibge: "3550308", cnpj: "11222333000181" };
const SECRET = `gw-${randomBytes(16).toString("hex")}`;
const ADMIN_SECRET = "vault-admin-secret-for-this-test";
const MASTER_KEY = randomBytes(32).toString("base64");
const feed = { ibge: MAIN.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO };

let db: ThrowawayDatabase;
let sim: AdnSimulator;
let vault: ServiceProcess;
let vaultClient: Client<typeof VaultService>;
const gateways: ServiceProcess[] = [];
let dir: string;

async function startGateway(env: Record<string, string>) {
  const gw = await startService("adn-gateway", {
    ADN_CA_FILE: join(dir, "ca.pem"),
    ADN_BASE_URL_PRODUCAO_RESTRITA: sim.url,
    NFSE_MAX_RETRIES: "0",
    ...env,
  });
  gateways.push(gw);
  return { gw, client: createClient(AdnGatewayService, createGrpcTransport({ baseUrl: gw.baseUrl, readMaxBytes: 64 * 1024 * 1024 })) };
}

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "malha-gw-vault-"));
  db = await createThrowawayDatabase();
  const pki = createSimPki([MAIN]);
  writeFileSync(join(dir, "ca.pem"), pki.root.certPem);
  sim = await startAdnSimulator({
    serverCertPem: pki.server.certPem,
    serverKeyPem: pki.server.keyPem,
    clientCaPem: pki.root.certPem,
    municipalities: [MAIN],
    feedSize: 120,
  });
  vault = await startService("vault", {
    MYSQL_URL: db.url,
    NFSE_MASTER_KEY: MASTER_KEY,
    VAULT_CREDENTIALS_SECRET: SECRET,
    VAULT_ADMIN_SECRET: ADMIN_SECRET,
  });
  // The operator's client: imports and (de)activations are administrative calls.
  vaultClient = clientWithHeaders(VaultService, vault.baseUrl, { "x-malha-vault-admin-secret": ADMIN_SECRET });
  const pfx = toPfx(pki.clients.get(MAIN.ibge)!, [pki.root], "senha-do-pfx");
  await vaultClient.importCertificate({ ibge: MAIN.ibge, pfx, password: "senha-do-pfx", requestedBy: "teste" });
});

afterAll(async () => {
  for (const gw of gateways) gw.kill("SIGKILL");
  vault?.kill("SIGKILL");
  await sim?.close();
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("credentials from the vault", () => {
  it("fetches the municipality's PEM with the shared secret, calls the ADN with it, and follows a deactivation", async () => {
    const { gw, client } = await startGateway({
      VAULT_URL: vault.baseUrl,
      VAULT_CREDENTIALS_SECRET: SECRET,
      ADN_CREDENTIALS_REFRESH_SECONDS: "0",
    });
    const res = await client.fetchBatch({ feed, afterNsu: 0n });
    expect(res.status).toBe(BatchStatus.DOCUMENTS_FOUND);
    expect(res.items).toHaveLength(50);
    expect(sim.counters().byCnpj[MAIN.cnpj]).toBe(1);
    // Nothing secret in the gateway's logs.
    expect(gw.lines.join("\n")).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE/);
    expect(gw.lines.join("\n")).not.toContain(SECRET);

    const active = (await vaultClient.listCertificates({ ibge: MAIN.ibge })).certificates[0]!;
    await vaultClient.deactivateCertificate({ id: active.id, reason: "teste de revogação", requestedBy: "teste" });
    const err = await failure(client.fetchBatch({ feed, afterNsu: 50n }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(CredentialsUnavailableSchema)[0]?.problem).toBe(CredentialsProblem.NO_ACTIVE_CERTIFICATE);
    expect(sim.counters().byCnpj[MAIN.cnpj]).toBe(1);
    await vaultClient.activateCertificate({ id: active.id, requestedBy: "teste" });
    expect((await client.fetchBatch({ feed, afterNsu: 50n })).status).toBe(BatchStatus.DOCUMENTS_FOUND);
  });

  it("authenticates to a vault on mesh mTLS with its client certificate (identity adn-gateway)", async () => {
    const tls = createMeshTls();
    const meshVault = await startService("vault", {
      MYSQL_URL: db.url,
      NFSE_MASTER_KEY: MASTER_KEY,
      TLS_CERT_FILE: tls.serverCert,
      TLS_KEY_FILE: tls.serverKey,
      TLS_CLIENT_CA_FILE: tls.caCert,
    });
    gateways.push(meshVault);
    const mesh = { VAULT_URL: meshVault.baseUrl, MESH_TLS_CA_FILE: tls.caCert };
    const { client } = await startGateway({ ...mesh, MESH_TLS_CERT_FILE: tls.clientCert, MESH_TLS_KEY_FILE: tls.clientKey });
    expect((await client.fetchBatch({ feed, afterNsu: 0n })).status).toBe(BatchStatus.DOCUMENTS_FOUND);
    const { client: stranger } = await startGateway({ ...mesh, MESH_TLS_CERT_FILE: tls.strangerCert, MESH_TLS_KEY_FILE: tls.strangerKey });
    // The vault's TLS refuses a client certificate from another CA at the handshake: unreachable for it.
    const before = sim.counters().total;
    expect((await failure(stranger.fetchBatch({ feed, afterNsu: 0n }))).code).toBe(Code.Unavailable);
    expect(sim.counters().total).toBe(before);
    rmSync(tls.dir, { recursive: true, force: true });
  });

  it("is refused by the vault with a wrong secret, and reports an unreachable vault as UNAVAILABLE", async () => {
    const { client } = await startGateway({ VAULT_URL: vault.baseUrl, VAULT_CREDENTIALS_SECRET: "not-the-right-secret-value" });
    const refused = await failure(client.fetchBatch({ feed, afterNsu: 0n }));
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.rawMessage).toContain("vault refused");
    expect(refused.rawMessage).not.toContain("not-the-right-secret-value");
    const before = sim.counters().total;
    vault.kill("SIGKILL");
    await vault.exited;
    const { client: orphan } = await startGateway({ VAULT_URL: vault.baseUrl, VAULT_CREDENTIALS_SECRET: SECRET });
    expect((await failure(orphan.fetchBatch({ feed, afterNsu: 0n }))).code).toBe(Code.Unavailable);
    expect(sim.counters().total).toBe(before);
  });
});
