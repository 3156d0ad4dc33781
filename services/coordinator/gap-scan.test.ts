// The scheduler's gap scan over a real store (throwaway database): it asks the store only about the NSUs
// above what an earlier scan found complete, so a feed whose cursor has not moved costs no call, and the
// store raises that mark only when the scan finds nothing missing (decision 0046).
import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome, RunTrigger } from "../../libs/gen/malha/store/v1/types_pb.js";
import { EnvReader } from "../../libs/config/env.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { createLogger } from "../../libs/log/logger.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { docItem } from "../store/testing/fixtures.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { scrape } from "../../test/support/prom-text.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { readCoordinatorConfig } from "./config.js";
import { FeedDeliveries } from "./feed-delivery.js";
import { FeedRunner } from "./runner.js";
import { Scheduler } from "./scheduler.js";

const WITH_GAP = "3550308";
const COMPLETE = "3304557";
const NEVER_SYNCED = "3106200";
const bucket = `leases_gaps_${randomBytes(4).toString("hex")}`;

let db: ThrowawayDatabase;
let store: ServiceProcess;
let nc: NatsConnection;
let leases: KvLeaseManager;
const closers: (() => void)[] = [];

const feed = (ibge: string) => ({ ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });
let fence = 0n;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:14222" });
  leases = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "gap-scan-test" });
});

afterAll(async () => {
  for (const close of closers) close();
  await leases?.close();
  await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined);
  await nc?.close();
  store?.kill("SIGKILL");
  await db?.drop();
});

describe("Scheduler.scanGaps", () => {
  it("asks the store only above each feed's gaps_checked_nsu, which rises once nothing below the cursor is missing", async () => {
    const { client, close } = createServiceClient(StoreService, { baseUrl: store.baseUrl });
    const gateway = createServiceClient(AdnGatewayService, { baseUrl: "http://127.0.0.1:9" });
    closers.push(close, gateway.close);
    for (const [i, ibge] of [WITH_GAP, COMPLETE, NEVER_SYNCED].entries()) {
      await client.registerMunicipality({
        ibge,
        name: `Município ${ibge}`,
        uf: ["SP", "RJ", "MG"][i]!,
        active: true,
        feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
      });
    }
    /**
     * A finished run that stores these NSUs (a back-fill below the cursor leaves the cursor alone). YIELDED,
     * as a bootstrap slice ends: it counts as a success without the one-hour wait, so the next one may begin.
     */
    const sync = async (ibge: string, nsus: number[]) => {
      const fenceToken = ++fence;
      const run = await client.beginRun({ feed: feed(ibge), holder: "test", fenceToken, trigger: RunTrigger.SYNC_NOW });
      const items = nsus.map((nsu) => docItem(nsu, Number(fenceToken) * 100 + nsu));
      await client.applyBatch({ feed: feed(ibge), runId: run.runId, fenceToken, items, newCursor: BigInt(Math.max(...nsus)) });
      await client.finishRun({ feed: feed(ibge), runId: run.runId, fenceToken, outcome: RunOutcome.YIELDED });
    };
    await sync(WITH_GAP, [1, 2, 4]);
    await sync(COMPLETE, [1, 2, 3]);

    const config = readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://127.0.0.1:4222" }));
    const log = createLogger({ service: "gap-scan-test", level: "silent" });
    const deps = { store: client, gateway: gateway.client, deliveries: new FeedDeliveries(gateway.client), now: () => Date.now() };
    const runner = new FeedRunner(leases, deps, config, log);
    const scheduler = new Scheduler({ ...deps, leases, runner, config, log });
    const calls = async () =>
      (await scrape(store.metricsPort)).find((m) => m.name === "malha_rpc_handled_total" && m.labels.method === "FindNsuGaps")?.value ?? 0;
    const checked = async (ibge: string) => (await client.getSyncState({ feed: feed(ibge) })).state?.gapsCheckedNsu;

    let before = await calls();
    expect(await scheduler.scanGaps()).toBe(1);
    // Both synced feeds were asked (the never-synced one is skipped); only the complete one was marked.
    expect((await calls()) - before).toBe(2);
    expect([await checked(WITH_GAP), await checked(COMPLETE), await checked(NEVER_SYNCED)]).toEqual([0n, 3n, 0n]);

    before = await calls();
    expect(await scheduler.scanGaps()).toBe(1);
    expect((await calls()) - before).toBe(1);

    await sync(WITH_GAP, [3]);
    before = await calls();
    expect(await scheduler.scanGaps()).toBe(0);
    expect((await calls()) - before).toBe(1);
    expect(await checked(WITH_GAP)).toBe(4n);

    // New NSUs above the mark: only they are scanned, and the mark follows the cursor.
    await sync(COMPLETE, [4, 6]);
    before = await calls();
    expect(await scheduler.scanGaps()).toBe(1);
    expect((await calls()) - before).toBe(1);
    expect(await checked(COMPLETE)).toBe(3n);

    before = await calls();
    await scheduler.scanGaps();
    await scheduler.scanGaps();
    expect((await calls()) - before).toBe(2);
    await scheduler.stop();
  });
});
