// syncFeed, and the runner's choice of the runs that may end at a short page, over real processes: the
// ADN simulator, an adn-gateway and a store on a throwaway database, a real NATS KV lease. The gateway
// applies the pages to the store itself (DeliverFeeds); interceptors on the coordinator's own clients only
// watch and hold back messages; what happened is read from the simulator's counters and the store's
// tables, never from the clock.
import { randomBytes } from "node:crypto";
import type { RowDataPacket } from "mysql2/promise";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AdnGatewayService, type DeliverFeedReport, type DeliverFeedsResponse } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome, RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { storedNsusIn } from "../../test/support/sync-checks.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { feedKey, leaseKeyOf } from "./feed-key.js";
import { PAGES_AHEAD_OF_STORE, PAGES_IN_APPLY, UNACKNOWLEDGED_PAGES } from "../adn-gateway/deliver-feed.js";
import { FeedDeliveries } from "./feed-delivery.js";
import { batchedRunCalls } from "./run-calls.js";
import { EnvReader } from "../../libs/config/env.js";
import { createLogger } from "../../libs/log/logger.js";
import { readCoordinatorConfig } from "./config.js";
import { FeedRunner } from "./runner.js";
import { syncFeed, type SyncFeedOptions, type SyncFeedResult } from "./sync-feed.js";

const CALM = { ibge: "3550308", cnpj: "11222333000181", uf: "SP" };
const BOMBED = { ibge: "3304557", cnpj: "22333444000181", uf: "RJ" };
const CANCELLED = { ibge: "3106200", cnpj: "33444555000181", uf: "MG" };
const LIMITED = { ibge: "4106902", cnpj: "44555666000181", uf: "PR" };
const SLICED = { ibge: "4314902", cnpj: "55666777000181", uf: "RS" };
const SHORT = { ibge: "2211001", cnpj: "34567890000130", uf: "PI" };
const GATED = { ibge: "2408102", cnpj: "45678901000175", uf: "RN" };
const ALL = [CALM, BOMBED, CANCELLED, LIMITED, SLICED, SHORT, GATED];
const MIB = 1024 * 1024;

let adn: TestAdn;
let db: ThrowawayDatabase;
let store: ServiceProcess;
let gateway: ServiceProcess;
let nc: NatsConnection;
let leases: KvLeaseManager;
const bucket = `leases_syncfeed_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  // The bomb item decompresses to 2 MiB of (unparseable) XML: kept as a BAD_XML fault, it makes its page
  // inflate past the store's STORE_MAX_PAGE_XML_BYTES, which refuses that page before anything of it is
  // written and so fails the DeliverFeeds.
  adn = await startTestAdn(ALL, { seed: 11, feedSize: 260, switches: { bombBytes: 2 * MIB } });
  db = await createThrowawayDatabase();
  store = await startService("store", {
    MYSQL_URL: db.url,
    ADN_MAX_DECOMPRESSED_BYTES: String(4 * MIB),
    STORE_MAX_PAGE_XML_BYTES: String(1.5 * MIB),
  });
  gateway = await startService("adn-gateway", {
    ...adn.gatewayEnv,
    STORE_URL: store.baseUrl,
    NFSE_MAX_RETRIES: "0",
  });
  nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:14222" });
  leases = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "sync-feed-test" });
  const registrar = createServiceClient(StoreService, { baseUrl: store.baseUrl });
  for (const m of ALL) {
    await registrar.client.registerMunicipality({
      ibge: m.ibge,
      name: `Município ${m.ibge}`,
      uf: m.uf,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
  registrar.close();
});

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

/** ADN calls the municipality's certificate made, counted when they arrive (a 429 included). */
const adnCalls = (ibge: string) => adn.sim.counters().byMunicipio[ibge] ?? 0;

interface Observed {
  /** Per DeliverFeeds report, in order: the report and the ADN calls made when it reached the coordinator. */
  reports: { report: DeliverFeedReport; adnCallsWhenReported: number }[];
  /** ApplyBatch calls the coordinator made itself (the gateway makes them now). */
  applies: number;
  /** DeliverFeeds calls the coordinator made. */
  deliveries: number;
}

/**
 * Clients as the coordinator builds them, plus: each DeliverFeeds report is recorded with the ADN calls
 * made by then, and `onReport(k)` may hold the coordinator's reading of report k back; the coordinator's
 * own ApplyBatch calls are counted.
 */
function observedClients(ibge: string, onReport?: (k: number) => Promise<void>) {
  const observed: Observed = { reports: [], applies: 0, deliveries: 0 };
  const watchReports: Interceptor = (next) => async (req) => {
    const res = await next(req);
    if (!res.stream || req.method.name !== "DeliverFeeds") return res;
    const messages = res.message;
    const deliveries = new Set<number>();
    return {
      ...res,
      message: (async function* () {
        for await (const m of messages) {
          const { delivery, part } = m as DeliverFeedsResponse;
          if (!deliveries.has(delivery)) observed.deliveries++;
          deliveries.add(delivery);
          if (part.case === "report") {
            observed.reports.push({ report: part.value, adnCallsWhenReported: adnCalls(ibge) });
            await onReport?.(observed.reports.length);
          }
          yield m;
        }
      })(),
    };
  };
  const watchApplies: Interceptor = (next) => async (req) => {
    if (req.method.name === "ApplyBatch") observed.applies++;
    return next(req);
  };
  const storeClient = createServiceClient(StoreService, { baseUrl: store.baseUrl, interceptors: [watchApplies] });
  const gatewayClient = createServiceClient(AdnGatewayService, { baseUrl: gateway.baseUrl, interceptors: [watchReports] });
  // BeginRun/FinishRun go as the coordinator sends them: batched (BeginRuns/FinishRuns).
  const runs = batchedRunCalls(storeClient.client);
  const deliveries = new FeedDeliveries(gatewayClient.client);
  return {
    observed,
    deps: { store: runs, deliveries, now: () => Date.now() },
    close: async () => {
      deliveries.close();
      await runs.close();
      storeClient.close();
      gatewayClient.close();
    },
  };
}

const feedOf = (ibge: string) => feedKey(ibge, Ambiente.PRODUCAO_RESTRITA, TipoNsu.DISTRIBUICAO);

async function run(
  ibge: string,
  onReport?: (k: number) => Promise<void>,
  sliceMs?: number,
  options: Partial<SyncFeedOptions> = {},
): Promise<{ result: SyncFeedResult; observed: Observed }> {
  const feed = feedOf(ibge);
  const lease = await leases.tryAcquire(leaseKeyOf(feed));
  if (!lease) throw new Error("lease not acquired");
  const { observed, deps, close } = observedClients(ibge, onReport);
  try {
    const result = await syncFeed(deps, lease, feed, {
      trigger: RunTrigger.SCHEDULED,
      pool: SyncPool.BOOTSTRAP,
      emptyResultBackoffMs: 3_600_000,
      failureBackoffMs: 60_000,
      ...(sliceMs !== undefined ? { sliceMs } : {}),
      ...options,
    });
    return { result, observed };
  } finally {
    await close();
    await lease.release();
  }
}

const storedNsus = (ibge: string) => storedNsusIn(db.pool, ibge);

/** Deliveries the gateway ended with `code`, from its Prometheus metrics. */
async function deliveriesEnded(code: string): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith("malha_adn_deliveries_total{") && l.includes(`code="${code}"`));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

async function storedCount(ibge: string): Promise<number> {
  return (await storedNsus(ibge)).length;
}

/** The feed's `lote=true` calls to the ADN so far. */
const batchCalls = (ibge: string) => adn.sim.counters().byFeed[`${ibge}/DISTRIBUICAO`]?.batch ?? 0;

/** What the hour's wait would bring: new notes, and the feed eligible again. */
async function anHourLater(ibge: string, notes: number): Promise<void> {
  adn.sim.feed(ibge).append(notes);
  await db.pool.query("UPDATE nfse_sync_state SET next_eligible_at = NOW(3) - INTERVAL 1 SECOND WHERE ibge = ?", [ibge]);
}

const visible = (ibge: string) =>
  adn.sim
    .feed(ibge)
    .entries.filter((e) => !e.hidden)
    .map((e) => e.nsu);

describe("syncFeed over DeliverFeeds", () => {
  it("ends a caught-up feed's run at its short page, without the ADN's 'nothing newer', while fewer than maxRuns runs in a row did; the next asks until the ADN's end", async () => {
    const expected = visible(SHORT.ibge);
    const state = async () => {
      const [rows] = await db.pool.query<RowDataPacket[]>(
        "SELECT short_page_ends, TIMESTAMPDIFF(SECOND, NOW(3), next_eligible_at) AS wait_s FROM nfse_sync_state WHERE ibge = ?",
        [SHORT.ibge],
      );
      return { shortPageEnds: Number(rows[0]!.short_page_ends), waitS: Number(rows[0]!.wait_s) };
    };
    const incremental = { pool: SyncPool.INCREMENTAL, shortPageEnd: { pageSize: 50, maxRuns: 2 } };

    // The first sync may not end at a short page: it reads until the ADN's end, and learns its page size.
    const first = await run(SHORT.ibge);
    expect(first.result).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP, cursor: expected.at(-1), fullPageSize: 50 });
    expect(first.result).not.toHaveProperty("endedAtShortPage");
    expect(await state()).toMatchObject({ shortPageEnds: 0 });

    for (const [k, notes] of [3, 2].entries()) {
      await anHourLater(SHORT.ibge, notes);
      const calls = batchCalls(SHORT.ibge);
      const { result } = await run(SHORT.ibge, undefined, undefined, incremental);
      expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP, items: notes, endedAtShortPage: true });
      expect(batchCalls(SHORT.ibge) - calls).toBe(1);
      const after = await state();
      expect(after.shortPageEnds).toBe(k + 1);
      // The ADN's one-hour wait holds as after its "nothing newer".
      expect(after.waitS).toBeGreaterThan(3500);
    }
    // Two runs in a row ended at a short page: this one hears the ADN's end, and the count starts over.
    await anHourLater(SHORT.ibge, 4);
    const calls = batchCalls(SHORT.ibge);
    const { result } = await run(SHORT.ibge, undefined, undefined, incremental);
    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP, items: 4 });
    expect(result).not.toHaveProperty("endedAtShortPage");
    expect(batchCalls(SHORT.ibge) - calls).toBe(2);
    expect(await state()).toMatchObject({ shortPageEnds: 0 });
    expect(await storedNsus(SHORT.ibge)).toEqual(visible(SHORT.ibge));
  });

  it("lets only the sweep's runs of the incremental pool end at a short page, and none with NFSE_SHORT_PAGE_END_RUNS=0", async () => {
    const feed = feedOf(GATED.ibge);
    const log = createLogger({ service: "runner-test", level: "silent" });
    const runnerWith = (env: Record<string, string>) => {
      const clients = observedClients(GATED.ibge);
      const config = readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://127.0.0.1:4222", ...env }));
      return { runner: new FeedRunner(leases, clients.deps, config, log), close: clients.close };
    };
    const calls = async (env: Record<string, string>, trigger: RunTrigger, pool: SyncPool, notes: number) => {
      if (notes > 0) await anHourLater(GATED.ibge, notes);
      const { runner, close } = runnerWith(env);
      try {
        const before = batchCalls(GATED.ibge);
        const result = await runner.run({ key: leaseKeyOf(feed), feed, trigger, pool });
        expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP });
        return batchCalls(GATED.ibge) - before;
      } finally {
        await close();
      }
    };
    const pages = Math.ceil(visible(GATED.ibge).length / 50);
    // The first sync reads to the ADN's end, whatever started it.
    expect(await calls({}, RunTrigger.SCHEDULED, SyncPool.BOOTSTRAP, 0)).toBe(pages + 1);
    // An operator's SyncNow of a caught-up feed, and a resumed slice: to the ADN's end.
    expect(await calls({}, RunTrigger.SYNC_NOW, SyncPool.INCREMENTAL, 3)).toBe(2);
    expect(await calls({}, RunTrigger.RESUME, SyncPool.INCREMENTAL, 3)).toBe(2);
    // Turned off: the sweep's run too.
    expect(await calls({ NFSE_SHORT_PAGE_END_RUNS: "0" }, RunTrigger.SCHEDULED, SyncPool.INCREMENTAL, 3)).toBe(2);
    // The sweep's run of the incremental pool: its page only.
    expect(await calls({}, RunTrigger.SCHEDULED, SyncPool.INCREMENTAL, 3)).toBe(1);
    expect(await storedNsus(GATED.ibge)).toEqual(visible(GATED.ibge));
  });

  it("has the ADN asked for page k+1 before page k is applied, leaves the page bytes to the gateway and the store, and stores every NSU once", async () => {
    const expected = visible(CALM.ibge);
    const { result, observed } = await run(CALM.ibge);

    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP, items: expected.length, cursor: expected.at(-1) });
    expect(await storedNsus(CALM.ibge)).toEqual(expected);
    const batches = Math.ceil(expected.length / 50);
    // One report per page and the final "nothing newer"; each page's report (sent after its commit) found
    // the call for the next page already made.
    expect(observed.reports).toHaveLength(batches + 1);
    observed.reports.slice(0, -1).forEach(({ report, adnCallsWhenReported }, k) => {
      expect(report.page).toBe(BigInt(k + 1));
      expect(report.counts).toBeDefined();
      expect(adnCallsWhenReported).toBeGreaterThanOrEqual(k + 2);
    });
    // The coordinator itself applied nothing; one delivery for the run; never two calls of the feed at once.
    expect(observed.applies).toBe(0);
    expect(observed.deliveries).toBe(1);
    expect(adnCalls(CALM.ibge)).toBe(batches + 1);
    expect(adn.sim.counters().maxConcurrentByFeed[`${CALM.ibge}/DISTRIBUICAO`]).toBe(1);
  });

  it("fails the run on an error inside a page (the store refuses it: too large once decoded): that page is not applied, not even in part, and no two ADN calls overlap", async () => {
    const expected = visible(BOMBED.ibge);
    const bomb = expected[60]!;
    adn.sim.configure({ faultsByNsu: { [String(bomb)]: "bomb" } });
    const { result, observed } = await run(BOMBED.ibge);

    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.FAILED, items: 50, cursor: expected[49] });
    if (result.kind !== "finished") throw new Error("unreachable");
    expect(result.error).toMatch(/^ResourceExhausted: .*STORE_MAX_PAGE_XML_BYTES/);
    expect(observed.reports).toHaveLength(1);
    expect(await storedNsus(BOMBED.ibge)).toEqual(expected.slice(0, 50));
    // The page applied, the page refused, the page sent ahead of its answer (decision 0052), the pages read
    // behind them, and the call ahead.
    expect(adnCalls(BOMBED.ibge)).toBeLessThanOrEqual(2 + (PAGES_IN_APPLY - 1) + PAGES_AHEAD_OF_STORE + 1);
    expect(adn.sim.counters().maxConcurrentByFeed[`${BOMBED.ibge}/DISTRIBUICAO`]).toBe(1);
  });

  it("stops after the page whose ApplyBatch reports a cancellation; a coordinator that does not take reports holds the gateway back", async () => {
    const endedBefore = await deliveriesEnded("OK");
    if (visible(CANCELLED.ibge).length < 600) adn.sim.feed(CANCELLED.ibge).append(400);
    const expected = visible(CANCELLED.ibge);
    const operator = createServiceClient(StoreService, { baseUrl: store.baseUrl });
    const { result, observed } = await run(CANCELLED.ibge, async (k) => {
      if (k !== 1) return;
      // Report 1 is held: the gateway applies the pages the window allows, then waits for it.
      for (let i = 0; i < 3000 && (await storedCount(CANCELLED.ibge)) < 50 * UNACKNOWLEDGED_PAGES; i++)
        await new Promise((r) => setTimeout(r, 10));
      await operator.client.requestRunCancellation({ target: { case: "feed", value: feedOf(CANCELLED.ibge) }, requestedBy: "test" });
    });
    operator.close();
    // The page after the window is the first whose ApplyBatch sees the request; a page sent before its
    // answer (decision 0052) is still written, and reported.
    const first = UNACKNOWLEDGED_PAGES + 1;
    if (result.kind !== "finished") throw new Error("unreachable");
    const pages = result.items / 50;
    expect([first, first + PAGES_IN_APPLY - 1]).toContain(pages);
    expect(result).toMatchObject({ outcome: RunOutcome.CANCELLED, cursor: expected[50 * pages - 1] });
    expect(observed.reports).toHaveLength(pages);
    expect(observed.reports[first - 1]!.report.cancelRequested).toBe(true);
    expect(observed.reports.at(-1)!.report.cancelRequested).toBe(true);
    expect(await storedNsus(CANCELLED.ibge)).toEqual(expected.slice(0, 50 * pages));
    expect(adnCalls(CANCELLED.ibge)).toBeLessThanOrEqual(pages + PAGES_AHEAD_OF_STORE + 1);
    expect(expected.length).toBeGreaterThan(50 * (pages + PAGES_AHEAD_OF_STORE + 2));
    const before = adnCalls(CANCELLED.ibge);
    await new Promise((r) => setTimeout(r, 200));
    expect(adnCalls(CANCELLED.ibge)).toBe(before);
    // The gateway ended the delivery itself, with OK.
    expect(await deliveriesEnded("OK")).toBe(endedBefore + 1);
  });

  it("finishes RATE_LIMITED with the gateway's cool-down when a page ahead meets a 429, keeping what was applied", async () => {
    const expected = visible(LIMITED.ibge);
    adn.sim.configure({ rateLimit: { maxCalls: 2, windowMs: 600_000 } });
    const { result, observed } = await run(LIMITED.ibge);
    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.RATE_LIMITED, items: 100, cursor: expected[99] });
    expect(observed.reports).toHaveLength(2);
    expect(await storedNsus(LIMITED.ibge)).toEqual(expected.slice(0, 100));
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT cooldown_until FROM nfse_sync_state WHERE ibge = ?", [LIMITED.ibge]);
    expect(rows[0]!.cooldown_until).toBeInstanceOf(Date);
    expect(adnCalls(LIMITED.ibge)).toBe(3);
  });

  it("yields at the end of its slice: the gateway stops after the page it is applying, and the run's cursor is the store's", async () => {
    const expected = visible(SLICED.ibge);
    const { result, observed } = await run(SLICED.ibge, undefined, 0);
    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.YIELDED });
    if (result.kind !== "finished") throw new Error("unreachable");
    // The reports that were under way when the stop left still count: the window after the first report
    // was acknowledged, the pages in it sent before the answers for the ones before them (decision 0052).
    expect(result.items).toBeGreaterThanOrEqual(50);
    expect(result.items).toBeLessThanOrEqual(50 * (1 + UNACKNOWLEDGED_PAGES));
    expect(observed.reports).toHaveLength(result.items / 50);
    expect(await storedNsus(SLICED.ibge)).toEqual(expected.slice(0, result.items));
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT last_nsu, status FROM nfse_sync_state WHERE ibge = ?", [SLICED.ibge]);
    expect(BigInt(rows[0]!.last_nsu as string)).toBe(result.cursor);
    expect(result.cursor).toBe(expected[result.items - 1]);
  });
});
