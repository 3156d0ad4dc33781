// reconcileFeed over real processes: the ADN simulator, an adn-gateway and a store on a throwaway
// database, a real NATS KV lease. Each case starts from a feed synced to the end (so it has the
// simulator's hidden NSUs and true holes below its cursor) and checks, in the store's own tables, that
// the reconciliation run it began was finished whatever happened, and what it persisted.
import { randomBytes } from "node:crypto";
import type { RowDataPacket } from "mysql2/promise";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome, RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import type { Lease } from "../../libs/leases/types.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { feedKey, leaseKeyOf } from "./feed-key.js";
import { reconcileFeed, type ReconcileResult } from "./reconcile.js";
import { FeedDeliveries } from "./feed-delivery.js";
import { syncFeed } from "./sync-feed.js";

const M = [
  { ibge: "3550308", cnpj: "11222333000181", uf: "SP" },
  { ibge: "3304557", cnpj: "22333444000181", uf: "RJ" },
  { ibge: "3106200", cnpj: "33444555000181", uf: "MG" },
  { ibge: "4106902", cnpj: "44555666000181", uf: "PR" },
  { ibge: "4314902", cnpj: "55666777000181", uf: "RS" },
] as const;
const [FILL, LIMITED, BROKEN, ABORTED, SICK] = M;
const COOLDOWN_S = 120;
const FAILURE_BACKOFF_MS = 60_000;

let adn: TestAdn;
let db: ThrowawayDatabase;
let store: ServiceProcess;
let gateway: ServiceProcess;
let nc: NatsConnection;
let leases: KvLeaseManager;
const bucket = `leases_reconcile_${randomBytes(4).toString("hex")}`;
const feedOf = (ibge: string) => feedKey(ibge, Ambiente.PRODUCAO_RESTRITA, TipoNsu.DISTRIBUICAO);

beforeAll(async () => {
  adn = await startTestAdn([...M], { seed: 5, feedSize: 400 });
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  gateway = await startService("adn-gateway", {
    ...adn.gatewayEnv,
    // The first syncs below go through DeliverFeeds, which applies the pages to this store.
    STORE_URL: store.baseUrl,
    NFSE_MAX_RETRIES: "0",
    ADN_RATE_LIMIT_COOLDOWN_SECONDS: String(COOLDOWN_S),
  });
  nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:14222" });
  leases = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "reconcile-test" });
  const { client, close } = createServiceClient(StoreService, { baseUrl: store.baseUrl });
  const gw = createServiceClient(AdnGatewayService, { baseUrl: gateway.baseUrl });
  for (const m of M) {
    await client.registerMunicipality({
      ibge: m.ibge,
      name: `Município ${m.ibge}`,
      uf: m.uf,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
    const lease = (await leases.tryAcquire(leaseKeyOf(feedOf(m.ibge))))!;
    const synced = await syncFeed({ store: client, deliveries: new FeedDeliveries(gw.client), now: Date.now }, lease, feedOf(m.ibge), {
      trigger: RunTrigger.SCHEDULED,
      pool: SyncPool.BOOTSTRAP,
      emptyResultBackoffMs: 3_600_000,
      failureBackoffMs: 60_000,
    });
    expect(synced).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP });
    await lease.release();
  }
  close();
  gw.close();
}, 120_000);

afterAll(async () => {
  await leases?.close();
  await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined);
  await nc?.close();
  gateway?.kill("SIGKILL");
  store?.kill("SIGKILL");
  await db?.drop();
  await adn?.close();
});

beforeEach(() => adn.sim.reset());

const adnCalls = (ibge: string) => adn.sim.counters().byMunicipio[ibge] ?? 0;

/** One reconciliation step under a fresh lease, with optional interceptors on the coordinator's clients. */
async function step(
  ibge: string,
  hooks: { store?: (lease: Lease) => Interceptor; gateway?: (lease: Lease) => Interceptor } = {},
): Promise<ReconcileResult> {
  const lease = await leases.tryAcquire(leaseKeyOf(feedOf(ibge)));
  if (!lease) throw new Error("lease not acquired");
  const s = createServiceClient(StoreService, { baseUrl: store.baseUrl, interceptors: hooks.store ? [hooks.store(lease)] : [] });
  const g = createServiceClient(AdnGatewayService, { baseUrl: gateway.baseUrl, interceptors: hooks.gateway ? [hooks.gateway(lease)] : [] });
  try {
    return await reconcileFeed({ store: s.client, gateway: g.client, now: Date.now }, lease, feedOf(ibge), {
      failureBackoffMs: FAILURE_BACKOFF_MS,
    });
  } finally {
    s.close();
    g.close();
    await lease.release().catch(() => false);
  }
}

async function runRow(runId: string): Promise<RowDataPacket> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT * FROM nfse_sync_runs WHERE id = ?", [runId]);
  return rows[0]!;
}

async function stateRow(ibge: string): Promise<RowDataPacket> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT * FROM nfse_sync_state WHERE ibge = ?", [ibge]);
  return rows[0]!;
}

async function runningRuns(ibge: string): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_sync_runs WHERE ibge = ? AND outcome = 'running'", [
    ibge,
  ]);
  return Number(rows[0]!.n);
}

const gapCount = (ibge: string) => {
  const feed = adn.sim.feed(ibge);
  return feed.entries.filter((e) => e.hidden).length + feed.holes.size;
};

describe("reconcileFeed", () => {
  it("makes one look-up per step, fills hidden NSUs and records holes without moving the cursor, and stops when no gap is left", async () => {
    const cursor = (await stateRow(FILL.ibge)).last_nsu;
    const gaps = gapCount(FILL.ibge);
    expect(gaps).toBeGreaterThan(1);
    let filled = 0;
    let holes = 0;
    for (let k = 1; k <= gaps; k++) {
      const before = adnCalls(FILL.ibge);
      const r = await step(FILL.ibge);
      expect(r).toMatchObject({ kind: "done", outcome: RunOutcome.CAUGHT_UP, looked: 1, remainingGaps: k < gaps });
      expect(adnCalls(FILL.ibge) - before).toBe(1);
      if (r.kind === "done") {
        filled += r.filled;
        holes += r.holes;
        expect((await runRow(r.runId)).outcome).toBe("caught_up");
      }
    }
    expect(filled).toBe(adn.sim.feed(FILL.ibge).entries.filter((e) => e.hidden).length);
    expect(holes).toBe(adn.sim.feed(FILL.ibge).holes.size);
    const before = adnCalls(FILL.ibge);
    expect(await step(FILL.ibge)).toEqual({ kind: "no-gaps" });
    expect(adnCalls(FILL.ibge)).toBe(before);
    expect((await stateRow(FILL.ibge)).last_nsu).toBe(cursor);
  });

  it("persists a 429 as RATE_LIMITED with the gateway's cool-down, then makes no call until it ends", async () => {
    // The simulator allows one call per window and answers 429 to the next.
    adn.sim.configure({ rateLimit: { maxCalls: 1, windowMs: 600_000 } });
    expect(await step(LIMITED.ibge)).toMatchObject({ kind: "done", outcome: RunOutcome.CAUGHT_UP });
    const r = await step(LIMITED.ibge);
    expect(r).toMatchObject({ kind: "done", outcome: RunOutcome.RATE_LIMITED, looked: 1 });
    expect(adn.sim.counters().byStatus["429"]).toBe(1);
    if (r.kind !== "done") return;
    const run = await runRow(r.runId);
    const state = await stateRow(LIMITED.ibge);
    expect(run.outcome).toBe("rate_limited");
    expect(run.cooldown_until).toBeInstanceOf(Date);
    expect(state.cooldown_until).toEqual(run.cooldown_until);
    expect(state.last_outcome).toBe("rate_limited");
    // The gateway's cool-down, persisted: about COOLDOWN_S from the 429 (a bound, not a timing).
    expect((state.cooldown_until as Date).getTime()).toBeGreaterThan(Date.now() + (COOLDOWN_S - 60) * 1000);

    const calls = adnCalls(LIMITED.ibge);
    const waiting = await step(LIMITED.ibge);
    expect(waiting).toEqual({ kind: "waiting", until: (state.cooldown_until as Date).getTime() });
    expect(adnCalls(LIMITED.ibge)).toBe(calls);
    expect(await runningRuns(LIMITED.ibge)).toBe(0);
  });

  it("finishes the run FAILED when ApplyBatch (a step before FinishRun) throws, and waits out the failure backoff", async () => {
    const failApply: Interceptor = (next) => async (req) => {
      if (req.method.name === "ApplyBatch" || req.method.name === "RecordConfirmedHoles") {
        throw new ConnectError("injected: the store refused the batch", Code.Unavailable);
      }
      return next(req);
    };
    const r = await step(BROKEN.ibge, { store: () => failApply });
    expect(r).toMatchObject({ kind: "done", outcome: RunOutcome.FAILED, error: "Unavailable: injected: the store refused the batch" });
    if (r.kind !== "done") return;
    expect((await runRow(r.runId)).outcome).toBe("failed");
    expect(await runningRuns(BROKEN.ibge)).toBe(0);
    const state = await stateRow(BROKEN.ibge);
    expect(state.status).toBe("error");
    // The next step does not call the ADN inside the failure backoff.
    const calls = adnCalls(BROKEN.ibge);
    const next = await step(BROKEN.ibge);
    expect(next.kind).toBe("waiting");
    if (next.kind === "waiting") expect(next.until).toBe((state.last_error_at as Date).getTime() + FAILURE_BACKOFF_MS);
    expect(adnCalls(BROKEN.ibge)).toBe(calls);
  });

  it("finishes the run FAILED when the ADN call itself fails", async () => {
    adn.sim.configure({ fail503Next: 1 });
    const r = await step(SICK.ibge);
    expect(r).toMatchObject({ kind: "done", outcome: RunOutcome.FAILED, looked: 1 });
    if (r.kind !== "done") return;
    expect((await runRow(r.runId)).outcome).toBe("failed");
    expect(r.error).toMatch(/^Unavailable: ADN unavailable/);
    expect(await runningRuns(SICK.ibge)).toBe(0);
  });

  it("finishes the run when the lease ends during the look-up (nobody else took the feed)", async () => {
    // The lease is given back while the gateway answers: the run's own calls are aborted with it.
    const loseLease =
      (lease: Lease): Interceptor =>
      (next) =>
      async (req) => {
        const res = await next(req);
        if (req.method.name === "FetchSingle") await lease.release();
        return res;
      };
    const r = await step(ABORTED.ibge, { gateway: loseLease });
    expect(r).toMatchObject({ kind: "done", outcome: RunOutcome.FAILED, filled: 0, holes: 0 });
    if (r.kind !== "done") return;
    expect(r.error).toMatch(/lease ended during the look-up of NSU \d+/);
    const run = await runRow(r.runId);
    expect(run.outcome).toBe("failed");
    expect(run.finished_at).toBeInstanceOf(Date);
    expect(await runningRuns(ABORTED.ibge)).toBe(0);
    expect((await stateRow(ABORTED.ibge)).status).toBe("error");
  });

  it("leaves the run to the newer holder when the lease was taken over: it is ABANDONED, never RUNNING", async () => {
    const takeOver =
      (lease: Lease): Interceptor =>
      (next) =>
      async (req) => {
        const res = await next(req);
        if (req.method.name === "FetchSingle") {
          await lease.release();
          // Another coordinator takes the feed and begins its own run with a newer fence.
          const newer = (await leases.tryAcquire(leaseKeyOf(feedOf(ABORTED.ibge))))!;
          const s = createServiceClient(StoreService, { baseUrl: store.baseUrl });
          const begun = await s.client.beginRun({
            feed: feedOf(ABORTED.ibge),
            holder: "other",
            fenceToken: newer.fenceToken,
            trigger: RunTrigger.RECONCILIATION,
          });
          await s.client.finishRun({
            feed: feedOf(ABORTED.ibge),
            runId: begun.runId,
            fenceToken: newer.fenceToken,
            outcome: RunOutcome.YIELDED,
          });
          s.close();
          await newer.release();
        }
        return res;
      };
    // Past the failure backoff of the previous case: its error is made older.
    await db.pool.query("UPDATE nfse_sync_state SET last_error_at = last_error_at - INTERVAL 1 HOUR WHERE ibge = ?", [ABORTED.ibge]);
    const r = await step(ABORTED.ibge, { gateway: takeOver });
    expect(r).toMatchObject({ kind: "done", outcome: RunOutcome.FAILED });
    if (r.kind !== "done") return;
    expect((await runRow(r.runId)).outcome).toBe("abandoned");
    expect(await runningRuns(ABORTED.ibge)).toBe(0);
  });
});
