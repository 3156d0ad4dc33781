// has_active_certificate as an operator reads it: a real vault, store and coordinator process each.
// GetFeedStatus / ListFeedStatus show what the vault holds, from the coordinator's cached listing.
import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { clientWithHeaders } from "../../test/support/header-client.js";
import { createTestRoot, issueEcnpj, toPfx } from "../../tools/adn-sim/icp-brasil.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { until } from "../../test/support/sync-checks.js";
import { feedKey } from "./feed-key.js";

const ADMIN = `admin-${randomBytes(8).toString("hex")}`;
const WITH = "3550308";
const WITHOUT = "3304557";
let db: ThrowawayDatabase;
const procs: ServiceProcess[] = [];
let coordinator: ReturnType<typeof createClient<typeof CoordinatorService>>;
let vault: ReturnType<typeof clientWithHeaders<typeof VaultService>>;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  const store = await startService("store", { MYSQL_URL: db.url });
  const vaultProc = await startService("vault", {
    MYSQL_URL: db.url,
    NFSE_MASTER_KEY: randomBytes(32).toString("base64"),
    VAULT_ADMIN_SECRET: ADMIN,
  });
  procs.push(store, vaultProc);
  const storeClient = createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
  for (const [ibge, uf] of [
    [WITH, "SP"],
    [WITHOUT, "RJ"],
  ] as const) {
    await storeClient.registerMunicipality({
      ibge,
      name: `Município ${ibge}`,
      uf,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
  vault = clientWithHeaders(VaultService, vaultProc.baseUrl, { "x-malha-vault-admin-secret": ADMIN });
  const root = createTestRoot();
  const pfx = toPfx(issueEcnpj(root, { cnpj: "11222333000181" }), [root], "senha");
  await vault.importCertificate({ ibge: WITH, pfx, password: "senha", requestedBy: "op" });
  const coord = await startService("coordinator", {
    NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:14222",
    STORE_URL: store.baseUrl,
    VAULT_URL: vaultProc.baseUrl,
    // No gateway: runs fail, which does not matter here.
    ADN_GATEWAY_URL: "http://127.0.0.1:1",
    COORDINATOR_LEASE_BUCKET: `leases_certs_${randomBytes(4).toString("hex")}`,
    COORDINATOR_CERTIFICATE_REFRESH_SECONDS: "1",
    NFSE_SYNC_INTERVAL_SECONDS: "3600",
  });
  procs.push(coord);
  coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: coord.baseUrl }));
}, 120_000);

afterAll(async () => {
  for (const p of procs.reverse()) p.kill("SIGKILL");
  await db?.drop();
});

const shown = async (ibge: string) =>
  (await coordinator.getFeedStatus({ feed: feedKey(ibge, Ambiente.PRODUCAO, TipoNsu.DISTRIBUICAO) })).status?.hasActiveCertificate;

describe("has_active_certificate", () => {
  it("is true where the vault holds an ACTIVE certificate, false elsewhere, and follows a deactivation", async () => {
    expect(await shown(WITH)).toBe(true);
    expect(await shown(WITHOUT)).toBe(false);
    const { statuses } = await coordinator.listFeedStatus({ pageSize: 10 });
    expect(Object.fromEntries(statuses.map((s) => [s.feed!.ibge, s.hasActiveCertificate]))).toEqual({ [WITH]: true, [WITHOUT]: false });

    const { certificates } = await vault.listCertificates({ ibge: WITH });
    await vault.deactivateCertificate({ id: certificates[0]!.id, reason: "revogado", requestedBy: "op" });
    // The cached view is refreshed within COORDINATOR_CERTIFICATE_REFRESH_SECONDS.
    await until(async () => (await shown(WITH)) === false, "the deactivation to show", 30_000);
  });
});

describe("ListFeedStatus paging", () => {
  it("pages with the store's signed tokens and refuses a negative page_size, a token of other filters and a forged one", async () => {
    const first = await coordinator.listFeedStatus({ pageSize: 1 });
    expect(first.statuses).toHaveLength(1);
    const second = await coordinator.listFeedStatus({ pageSize: 1, pageToken: first.nextPageToken });
    expect(second.statuses.map((s) => JSON.stringify([s.feed!.ibge, s.feed!.ambiente, s.feed!.tipoNsu]))).not.toEqual(
      first.statuses.map((s) => JSON.stringify([s.feed!.ibge, s.feed!.ambiente, s.feed!.tipoNsu])),
    );
    const refusal = (p: Promise<unknown>) =>
      p.then(
        () => undefined,
        (e: unknown) => ConnectError.from(e),
      );
    for (const [req, why] of [
      [{ pageSize: -1 }, "page_size"],
      [{ pageSize: 1, ibge: WITH, pageToken: first.nextPageToken }, "other filters"],
      [{ pageSize: 1, pageToken: `${first.nextPageToken.split(".")[0]}.AAAAAAAAAAAAAAAAAAAAAA` }, "signature mismatch"],
    ] as const) {
      const err = await refusal(coordinator.listFeedStatus(req));
      expect([err?.code, err?.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining(why)]);
    }
  });
});
