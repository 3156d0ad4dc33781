// The scheduler's sweep over a real store (throwaway database) and real NATS KV leases shared with a
// second "replica": which feeds it queues, which it leaves to the lease's holder. The queue is a pool of
// the test's own (enqueueFeeds' target) whose jobs wait, so no run starts and the decisions stay visible.
import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SkipReason } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunTrigger } from "../../libs/gen/malha/store/v1/types_pb.js";
import { EnvReader } from "../../libs/config/env.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { createLogger } from "../../libs/log/logger.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { readCoordinatorConfig } from "./config.js";
import { feedId, feedKey, leaseKeyOf } from "./feed-key.js";
import { WorkerPool } from "./pool.js";
import { FeedDeliveries } from "./feed-delivery.js";
import { FeedRunner, type FeedJob } from "./runner.js";
import { decisionCounts, Scheduler } from "./scheduler.js";

const UF = { "3550308": "SP", "3304557": "RJ", "3106200": "MG" } as const;
const IBGES = ["3550308", "3304557", "3106200"] as const;
const feedOf = (ibge: string) => feedKey(ibge, Ambiente.PRODUCAO_RESTRITA, TipoNsu.DISTRIBUICAO);
const bucket = `leases_scheduler_${randomBytes(4).toString("hex")}`;

let db: ThrowawayDatabase;
let store: ServiceProcess;
let nc: NatsConnection;
let here: KvLeaseManager;
let elsewhere: KvLeaseManager;
const closers: (() => void)[] = [];

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:14222" });
  here = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "this-replica" });
  elsewhere = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "other-replica" });
  const { client, close } = createServiceClient(StoreService, { baseUrl: store.baseUrl });
  closers.push(close);
  for (const ibge of IBGES) {
    await client.registerMunicipality({
      ibge,
      name: `Município ${ibge}`,
      uf: UF[ibge],
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
}, 60_000);

afterAll(async () => {
  for (const close of closers) close();
  await here?.close();
  await elsewhere?.close();
  await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined);
  await nc?.close();
  store?.kill("SIGKILL");
  await db?.drop();
});

describe("Scheduler.enqueueFeeds", () => {
  it("queues every feed nobody holds, leaves a held one to its holder, and takes it once released", async () => {
    const storeClient = createServiceClient(StoreService, { baseUrl: store.baseUrl });
    // Never called: the jobs go to the test's pool, which runs no feed.
    const gateway = createServiceClient(AdnGatewayService, { baseUrl: "http://127.0.0.1:9" });
    closers.push(storeClient.close, gateway.close);
    const config = readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://127.0.0.1:4222" }));
    const log = createLogger({ service: "scheduler-test", level: "silent" });
    const deps = { store: storeClient.client, gateway: gateway.client, deliveries: new FeedDeliveries(gateway.client), now: Date.now };
    const scheduler = new Scheduler({
      ...deps,
      leases: here,
      runner: new FeedRunner(here, deps, config, log),
      config,
      log,
    });
    let release!: () => void;
    const waiting = new Promise<void>((r) => (release = r));
    const target = new WorkerPool<FeedJob>("test", 1, () => waiting);

    const held = (await elsewhere.tryAcquire(leaseKeyOf(feedOf(IBGES[1]))))!;
    const first = await scheduler.enqueueFeeds({}, RunTrigger.SYNC_ALL, target);
    const byIbge = new Map(first.map((d) => [d.feed!.ibge, d]));
    expect(byIbge.get(IBGES[0])).toMatchObject({ accepted: true });
    expect(byIbge.get(IBGES[1])).toMatchObject({ accepted: false, reason: SkipReason.LEASE_HELD, leaseHolder: "other-replica" });
    expect(byIbge.get(IBGES[2])).toMatchObject({ accepted: true });
    expect(target.has(feedId(feedOf(IBGES[1])))).toBe(false);
    // What the periodic sweep logs ("sweep decided"): counts by reason name.
    expect(decisionCounts(first)).toEqual({ feeds: 3, accepted: 2, skipped: { LEASE_HELD: 1 } });

    await held.release();
    const second = await scheduler.enqueueFeeds({}, RunTrigger.SYNC_ALL, target);
    const again = new Map(second.map((d) => [d.feed!.ibge, d]));
    expect(again.get(IBGES[1])).toMatchObject({ accepted: true });
    expect(target.has(feedId(feedOf(IBGES[1])))).toBe(true);
    release();
    await target.idle();
    await scheduler.stop();
  });
});
