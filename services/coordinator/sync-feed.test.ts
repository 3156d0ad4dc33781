// syncFeed over real processes: the ADN simulator, an adn-gateway and a store on a throwaway database,
// a real NATS KV lease. Interceptors on the coordinator's own clients only watch and hold back messages;
// what happened is read from the simulator's counters and the store's tables, never from the clock.
import { randomBytes } from "node:crypto";
import type { RowDataPacket } from "mysql2/promise";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import type { Interceptor } from "@connectrpc/connect";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AdnGatewayService, type StreamFeedResponse } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService, type ApplyBatchRequest } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome, RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { feedKey, leaseKeyOf } from "./feed-key.js";
import { PAGES_AHEAD } from "./feed-stream.js";
import { syncFeed, type SyncFeedResult } from "./sync-feed.js";

const CALM = { ibge: "3550308", cnpj: "11222333000181", uf: "SP" };
const BOMBED = { ibge: "3304557", cnpj: "22333444000181", uf: "RJ" };
const CANCELLED = { ibge: "3106200", cnpj: "33444555000181", uf: "MG" };
const LIMITED = { ibge: "4106902", cnpj: "44555666000181", uf: "PR" };
const ALL = [CALM, BOMBED, CANCELLED, LIMITED];
const MIB = 1024 * 1024;

let adn: TestAdn;
let db: ThrowawayDatabase;
let store: ServiceProcess;
let gateway: ServiceProcess;
let nc: NatsConnection;
let leases: KvLeaseManager;
const bucket = `leases_syncfeed_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  // The bomb item decompresses to 2 MiB of (unparseable) XML: kept as a BAD_XML fault, it makes its batch
  // larger than the gateway's ADN_MAX_BATCH_BYTES, which fails that StreamFeed page after its head.
  adn = await startTestAdn(ALL, { seed: 11, feedSize: 260, switches: { bombBytes: 2 * MIB } });
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  gateway = await startService("adn-gateway", {
    ...adn.gatewayEnv,
    NFSE_MAX_RETRIES: "0",
    ADN_MAX_DECOMPRESSED_BYTES: String(4 * MIB),
    ADN_MAX_BATCH_BYTES: String(1.5 * MIB),
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

async function eventually(cond: () => boolean, what: string, signal: AbortSignal): Promise<void> {
  // A bound on waiting, not an assertion on time: a broken pipeline never gets there.
  for (let i = 0; i < 2000 && !cond(); i++) {
    signal.throwIfAborted();
    await new Promise((r) => setTimeout(r, 5));
  }
  if (!cond()) throw new Error(`never happened: ${what}`);
}

interface Observed {
  applies: { typedItems: number; encodedBytes: number; adnCallsWhenSent: number }[];
  /** Item chunks of each page that reached the coordinator. */
  chunks: number[];
  /** StreamFeed calls the coordinator made. */
  feedStreams: number;
}

/**
 * Clients as the coordinator builds them, plus: the item chunks of each StreamFeed page are held back
 * until the ADN has received the NEXT call of the feed, which only a gateway that asks for page k+1
 * before delivering page k can satisfy; each ApplyBatch records what it carries and how many ADN calls
 * had been made when it was sent.
 */
function observedClients(ibge: string, onApply?: (k: number) => Promise<void>) {
  const observed: Observed = { applies: [], chunks: [], feedStreams: 0 };
  const holdItems: Interceptor = (next) => async (req) => {
    const res = await next(req);
    if (!res.stream || req.method.name !== "StreamFeed") return res;
    observed.feedStreams++;
    const messages = res.message;
    return {
      ...res,
      message: (async function* () {
        let page = -1;
        for await (const m of messages) {
          const part = (m as StreamFeedResponse).part;
          if (part.case === "head") observed.chunks[++page] = 0;
          if (part.case === "itemsChunk") {
            const index = page;
            await eventually(
              () => adnCalls(ibge) >= index + 2,
              `ADN call ${index + 2} before the items of page ${index + 1} arrive`,
              req.signal,
            );
            observed.chunks[index]!++;
          }
          yield m;
        }
      })(),
    };
  };
  const watchApplies: Interceptor = (next) => async (req) => {
    if (req.method.name === "ApplyBatch" && !req.stream) {
      const msg = req.message as ApplyBatchRequest;
      observed.applies.push({
        typedItems: msg.items.length,
        encodedBytes: msg.encodedItems?.length ?? -1,
        adnCallsWhenSent: adnCalls(ibge),
      });
      await onApply?.(observed.applies.length);
    }
    return next(req);
  };
  const storeClient = createServiceClient(StoreService, { baseUrl: store.baseUrl, interceptors: [watchApplies] });
  const gatewayClient = createServiceClient(AdnGatewayService, { baseUrl: gateway.baseUrl, interceptors: [holdItems] });
  return {
    observed,
    deps: { store: storeClient.client, gateway: gatewayClient.client, now: () => Date.now() },
    close: () => {
      storeClient.close();
      gatewayClient.close();
    },
  };
}

const feedOf = (ibge: string) => feedKey(ibge, Ambiente.PRODUCAO_RESTRITA, TipoNsu.DISTRIBUICAO);

async function run(ibge: string, onApply?: (k: number) => Promise<void>): Promise<{ result: SyncFeedResult; observed: Observed }> {
  const feed = feedOf(ibge);
  const lease = await leases.tryAcquire(leaseKeyOf(feed));
  if (!lease) throw new Error("lease not acquired");
  const { observed, deps, close } = observedClients(ibge, onApply);
  try {
    const result = await syncFeed(deps, lease, feed, {
      trigger: RunTrigger.SCHEDULED,
      pool: SyncPool.BOOTSTRAP,
      emptyResultBackoffMs: 3_600_000,
      failureBackoffMs: 60_000,
    });
    return { result, observed };
  } finally {
    close();
    await lease.release();
  }
}

async function storedNsus(ibge: string): Promise<bigint[]> {
  const nsus: bigint[] = [];
  const queries: [string, string[]][] = [
    [`SELECT nsu FROM nfse_documentos_${ibge}`, []],
    [`SELECT nsu FROM nfse_eventos_${ibge}`, []],
    ["SELECT nsu FROM nfse_quarantine WHERE ibge = ?", [ibge]],
  ];
  for (const [sql, params] of queries) {
    const [rows] = await db.pool.query<RowDataPacket[]>(sql, params);
    nsus.push(...rows.map((r) => BigInt(r.nsu as string)));
  }
  return nsus.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** StreamFeed calls the gateway ended as CANCELED, from its Prometheus metrics. */
async function cancelledFeedStreams(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith("malha_rpc_handled_total{") && l.includes('method="StreamFeed"') && l.includes('code="Canceled"'));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

const visible = (ibge: string) =>
  adn.sim
    .feed(ibge)
    .entries.filter((e) => !e.hidden)
    .map((e) => e.nsu);

describe("syncFeed over StreamFeed", () => {
  it("has the ADN asked for page k+1 before page k's items arrive, passes the gateway's bytes to ApplyBatch, and stores every NSU once", async () => {
    const expected = visible(CALM.ibge);
    const { result, observed } = await run(CALM.ibge);

    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.CAUGHT_UP, items: expected.length, cursor: expected.at(-1) });
    expect(await storedNsus(CALM.ibge)).toEqual(expected);
    const batches = Math.ceil(expected.length / 50);
    expect(observed.applies).toHaveLength(batches);
    observed.applies.forEach((apply, k) => {
      // Undecoded bytes, never typed items; and the call for the next batch was already made.
      expect(apply).toMatchObject({ typedItems: 0 });
      expect(apply.encodedBytes).toBeGreaterThan(0);
      expect(apply.adnCallsWhenSent).toBeGreaterThanOrEqual(k + 2);
    });
    // One more call said "nothing newer"; never two calls of the feed at once; one stream for the run.
    expect(adnCalls(CALM.ibge)).toBe(batches + 1);
    expect(observed.feedStreams).toBe(1);
    expect(adn.sim.counters().maxConcurrentByFeed[`${CALM.ibge}/DISTRIBUICAO`]).toBe(1);
  });

  it("fails the run on a gateway error inside a page: that page is not applied, not even in part, and no two ADN calls overlap", async () => {
    const expected = visible(BOMBED.ibge);
    const bomb = expected[60]!;
    adn.sim.configure({ faultsByNsu: { [String(bomb)]: "bomb" } });
    const { result, observed } = await run(BOMBED.ibge);

    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.FAILED, cursor: expected[49] });
    if (result.kind !== "finished") throw new Error("unreachable");
    expect(result.error).toMatch(/^ResourceExhausted: .*ADN_MAX_BATCH_BYTES/);
    // Page 1 only: nothing of page 2, although a chunk of its items had reached the coordinator.
    expect(observed.chunks[1]).toBeGreaterThan(0);
    expect(observed.applies).toHaveLength(1);
    expect(await storedNsus(BOMBED.ibge)).toEqual(expected.slice(0, 50));
    expect(adnCalls(BOMBED.ibge)).toBeLessThanOrEqual(3);
    expect(adn.sim.counters().maxConcurrentByFeed[`${BOMBED.ibge}/DISTRIBUICAO`]).toBe(1);
  });

  it("stops after the page whose ApplyBatch reports a cancellation, and cancels the stream with the pages read ahead", async () => {
    const cancelledBefore = await cancelledFeedStreams();
    // Long enough that a gateway without back-pressure would have fetched well past the bound below.
    if (visible(CANCELLED.ibge).length < 600) adn.sim.feed(CANCELLED.ibge).append(400);
    const expected = visible(CANCELLED.ibge);
    const operator = createServiceClient(StoreService, { baseUrl: store.baseUrl });
    const { result, observed } = await run(CANCELLED.ibge, async (k) => {
      if (k !== 1) return;
      // A slow store: were there no back-pressure, the gateway would fetch the whole feed meanwhile.
      await new Promise((r) => setTimeout(r, 1000));
      await operator.client.requestRunCancellation({ target: { case: "feed", value: feedOf(CANCELLED.ibge) }, requestedBy: "test" });
    });
    operator.close();
    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.CANCELLED, items: 50, cursor: expected[49] });
    expect(observed.applies).toHaveLength(1);
    expect(await storedNsus(CANCELLED.ibge)).toEqual(expected.slice(0, 50));
    // While page 1 was being applied the coordinator read PAGES_AHEAD pages ahead; one more page filled
    // the stream's flow-control window and the gateway was fetching the next: then it waited.
    expect(adnCalls(CANCELLED.ibge)).toBeGreaterThanOrEqual(2);
    expect(adnCalls(CANCELLED.ibge)).toBeLessThanOrEqual(1 + PAGES_AHEAD + 2);
    expect(visible(CANCELLED.ibge).length).toBeGreaterThan(50 * (1 + PAGES_AHEAD + 3));
    const before = adnCalls(CANCELLED.ibge);
    await new Promise((r) => setTimeout(r, 200));
    expect(adnCalls(CANCELLED.ibge)).toBe(before);
    // And the gateway's handler ended as CANCELED, rather than staying suspended on a write that the reset
    // stream would never complete.
    let cancelled = 0;
    for (let i = 0; i < 200 && cancelled <= cancelledBefore; i++) {
      cancelled = await cancelledFeedStreams();
      if (cancelled <= cancelledBefore) await new Promise((r) => setTimeout(r, 10));
    }
    expect(cancelled).toBe(cancelledBefore + 1);
  });

  it("finishes RATE_LIMITED with the gateway's cool-down when a page ahead meets a 429, keeping what was applied", async () => {
    const expected = visible(LIMITED.ibge);
    adn.sim.configure({ rateLimit: { maxCalls: 2, windowMs: 600_000 } });
    const { result, observed } = await run(LIMITED.ibge);
    expect(result).toMatchObject({ kind: "finished", outcome: RunOutcome.RATE_LIMITED, items: 100, cursor: expected[99] });
    expect(observed.applies).toHaveLength(2);
    expect(await storedNsus(LIMITED.ibge)).toEqual(expected.slice(0, 100));
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT cooldown_until FROM nfse_sync_state WHERE ibge = ?", [LIMITED.ibge]);
    expect(rows[0]!.cooldown_until).toBeInstanceOf(Date);
    expect(adnCalls(LIMITED.ibge)).toBe(3);
  });
});
