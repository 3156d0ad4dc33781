// Issue #20: nothing in the scheduler may grow per feed per tick. A fleet of feeds over a real store
// (throwaway database) and real NATS KV leases, swept many times by the periodic sweep and by SyncAll,
// with the gap scan and the reconciliation rounds in between: every map the scheduler and its runner keep
// stays within one entry per feed, and is the same size after the last tick as after the second. Every run
// fails (the gateway address answers nothing), the path that leaves the most behind (failure counts);
// the clock moves two hours per tick, past every back-off, so every feed runs on every tick.
import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { EnvReader } from "../../libs/config/env.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { createLogger } from "../../libs/log/logger.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { meshMunicipalities } from "../../test/support/nfse-mesh.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { readCoordinatorConfig } from "./config.js";
import { FeedDeliveries } from "./feed-delivery.js";
import { FeedRunner } from "./runner.js";
import { Scheduler } from "./scheduler.js";

const FEEDS = 40;
const TICKS = 6;
const bucket = `leases_bounded_${randomBytes(4).toString("hex")}`;

let db: ThrowawayDatabase;
let store: ServiceProcess;
let nc: NatsConnection;
let leases: KvLeaseManager;
const closers: (() => void)[] = [];

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:14222" });
  leases = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "bounded-test" });
  const { client, close } = createServiceClient(StoreService, { baseUrl: store.baseUrl });
  closers.push(close);
  for (const m of meshMunicipalities(FEEDS)) {
    await client.registerMunicipality({
      ...m,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
}, 180_000);

afterAll(async () => {
  for (const close of closers) close();
  await leases?.close();
  await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined);
  await nc?.close();
  store?.kill("SIGKILL");
  await db?.drop();
});

/** The sizes of every map the scheduler and its runner keep (private fields, read for this test only). */
function sizes(scheduler: Scheduler, runner: FeedRunner) {
  const s = scheduler as unknown as { sweeps: Map<string, unknown>; gapFeeds: Map<string, unknown>; lastStep: Map<string, unknown> };
  const r = runner as unknown as { failures: Map<string, unknown> };
  const pool = (p: { size: { queued: number; running: number } }) => p.size.queued + p.size.running;
  return {
    incremental: pool(scheduler.incremental),
    bootstrap: pool(scheduler.bootstrap),
    sweeps: s.sweeps.size,
    gapFeeds: s.gapFeeds.size,
    lastStep: s.lastStep.size,
    failures: r.failures.size,
  };
}

describe("Scheduler over many ticks", () => {
  it(`keeps at most one entry per feed in every map after ${TICKS} ticks over ${FEEDS} feeds, the same as after the second`, async () => {
    const storeClient = createServiceClient(StoreService, { baseUrl: store.baseUrl });
    const gateway = createServiceClient(AdnGatewayService, { baseUrl: "http://127.0.0.1:9" });
    closers.push(storeClient.close, gateway.close);
    const config = readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://127.0.0.1:4222", NFSE_WORKER_CONCURRENCY: "8" }));
    const log = createLogger({ service: "scheduler-bounded-test", level: "silent" });
    let clock = Date.now();
    const deps = { store: storeClient.client, gateway: gateway.client, deliveries: new FeedDeliveries(gateway.client), now: () => clock };
    const runner = new FeedRunner(leases, deps, config, log);
    const scheduler = new Scheduler({
      ...deps,
      leases,
      runner,
      config,
      log,
      reconciliationSlots: { take: async () => true },
    });
    const seen: ReturnType<typeof sizes>[] = [];
    for (let tick = 0; tick < TICKS; tick++) {
      clock += 2 * 3_600_000;
      const decisions = await scheduler.sweep();
      expect(decisions).toHaveLength(FEEDS);
      expect(decisions.filter((d) => d.accepted)).toHaveLength(FEEDS);
      await scheduler.incremental.idle();
      await scheduler.bootstrap.idle();
      clock += 2 * 3_600_000;
      const { decisions: all } = await scheduler.sweepAll({}, 8);
      expect(all.filter((d) => d.accepted)).toHaveLength(FEEDS);
      // The SyncAll pool removes itself once idle: wait for that, as a caller's next sweep would.
      while (sizes(scheduler, runner).sweeps > 0) await new Promise((r) => setTimeout(r, 20));
      await scheduler.scanGaps();
      await scheduler.reconcileStep();
      seen.push(sizes(scheduler, runner));
    }
    for (const s of seen) {
      expect(s).toMatchObject({ incremental: 0, bootstrap: 0, sweeps: 0 });
      for (const n of [s.gapFeeds, s.lastStep, s.failures]) expect(n).toBeLessThanOrEqual(FEEDS);
    }
    // Every run failed, so every feed has a failure count, and no more entries than that.
    expect(seen.at(-1)!.failures).toBe(FEEDS);
    expect(seen.at(-1)).toEqual(seen[1]);
    await scheduler.stop();
  });
});
