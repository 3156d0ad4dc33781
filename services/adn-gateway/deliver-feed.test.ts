// DeliverFeeds of the adn-gateway process from main.ts, over real gRPC, against the ADN simulator and a
// store on a throwaway database: the gateway applies each page to the store itself under the run's fence,
// one ADN call of the feed at a time, and reports heads and the store's answers; the page travels
// undecoded and the store decodes it, so an entry that does not decode is quarantined there without
// failing its page; errors of the ADN, of the page's size and of the store (a stale fence) end the delivery
// with nothing of the failing page written; a caller that stops acknowledging holds the gateway back; many
// deliveries share a stream without one's end, error or cancellation touching another; a gateway shutting
// down says so, refuses new starts and finishes the open delivery (decision 0045).
import type { RowDataPacket } from "mysql2/promise";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AdnGatewayService,
  BatchStatus,
  type DeliverFeedReport,
  type DeliverFeedsRequestSchema,
  type DeliverFeedsResponse,
  type DeliveryEnd,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { errorOfEntryStatus } from "../../libs/rpc/entry-errors.js";
import { isServerClosing } from "../../libs/rpc/errors.js";
import { MessageQueue } from "../../libs/rpc/message-queue.js";
import { RateLimitedSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunTrigger, StaleFenceSchema, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { storedNsusIn } from "../../test/support/sync-checks.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { scrape } from "../../test/support/prom-text.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { registerMunicipalities } from "../store/testing/fixtures.js";
import { PAGES_AHEAD_OF_STORE, PAGES_IN_APPLY, UNACKNOWLEDGED_PAGES } from "./deliver-feed.js";

const WHOLE = { ibge: "3550308", cnpj: "11222333000181", uf: "SP" };
const LIMITED = { ibge: "3304557", cnpj: "22333444000181", uf: "RJ" };
const CAPPED = { ibge: "3106200", cnpj: "33444555000181", uf: "MG" };
const FENCED = { ibge: "4106902", cnpj: "44555666000181", uf: "PR" };
const HELD = { ibge: "4314902", cnpj: "55666777000181", uf: "RS" };
const BAD = { ibge: "5300108", cnpj: "66777888000181", uf: "DF" };
const POISONED = { ibge: "2304400", cnpj: "77888999000181", uf: "CE" };
const SHARED = { ibge: "1501402", cnpj: "88999000000198", uf: "PA" };
const SHARED_STALE = { ibge: "2611606", cnpj: "99000111000165", uf: "PE" };
const SHARED_CANCELLED = { ibge: "2927408", cnpj: "10111222000135", uf: "BA" };
const CLOSING = { ibge: "3304904", cnpj: "12345678000195", uf: "RJ" };
const REFUSED = { ibge: "3170206", cnpj: "23456789000195", uf: "MG" };
const SHORT = { ibge: "2211001", cnpj: "34567890000130", uf: "PI" };
const ALL = [WHOLE, LIMITED, CAPPED, FENCED, HELD, BAD, POISONED, SHARED, SHARED_STALE, SHARED_CANCELLED, CLOSING, REFUSED, SHORT];

let adn: TestAdn;
let db: ThrowawayDatabase;
let store: ServiceProcess;
let gateway: ServiceProcess;
let capped: ServiceProcess;
let client: Client<typeof AdnGatewayService>;
let cappedClient: Client<typeof AdnGatewayService>;
let storeClient: Client<typeof StoreService>;
let gatewayEnv: Record<string, string>;

beforeAll(async () => {
  adn = await startTestAdn(ALL, { seed: 7, feedSize: 400 });
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  const env = { ...adn.gatewayEnv, STORE_URL: store.baseUrl, NFSE_MAX_RETRIES: "0", NFSE_REQUEST_TIMEOUT_SECONDS: "5" };
  gatewayEnv = env;
  gateway = await startService("adn-gateway", env);
  // So small that the first entry of any page passes it.
  capped = await startService("adn-gateway", { ...env, ADN_MAX_BATCH_BYTES: "1024" });
  client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: gateway.baseUrl }));
  cappedClient = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: capped.baseUrl }));
  storeClient = createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
  await registerMunicipalities(storeClient, ALL, Ambiente.PRODUCAO_RESTRITA);
});

afterAll(async () => {
  gateway?.kill("SIGKILL");
  capped?.kill("SIGKILL");
  store?.kill("SIGKILL");
  await db?.drop();
  await adn?.close();
});

beforeEach(() => adn.sim.reset());

const feed = (ibge: string) => ({ ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });
const batchCalls = (ibge: string) => adn.sim.counters().byFeed[`${ibge}/DISTRIBUICAO`]?.batch ?? 0;
const visible = (ibge: string) =>
  adn.sim
    .feed(ibge)
    .entries.filter((e) => !e.hidden)
    .map((e) => e.nsu);

async function beginRun(ibge: string, fenceToken: bigint) {
  return storeClient.beginRun({
    feed: feed(ibge),
    holder: `test-${fenceToken}`,
    fenceToken,
    trigger: RunTrigger.SCHEDULED,
    pool: SyncPool.BOOTSTRAP,
  });
}

const storedNsus = (ibge: string) => storedNsusIn(db.pool, ibge);

type Message = MessageInitShape<typeof DeliverFeedsRequestSchema>;

/** The caller's side as a queue: what the test pushes is sent, in order, until it closes. */
function callerSide(...first: Message[]): MessageQueue<Message> {
  const side = new MessageQueue<Message>();
  for (const m of first) side.push(m);
  return side;
}

/**
 * Runs one delivery (number 1) on a stream of its own to its end, acknowledging every report as it arrives
 * (as the coordinator does); `error` is the delivery's end when not OK, or the stream's own failure.
 */
async function deliver(c: Client<typeof AdnGatewayService>, start: Message) {
  const side = callerSide(start);
  const reports: DeliverFeedReport[] = [];
  try {
    for await (const m of c.deliverFeeds(side)) {
      if (m.part.case === "report") {
        reports.push(m.part.value);
        side.push({ delivery: m.delivery, part: { case: "ackedPages", value: m.part.value.page } });
      } else if (m.part.case === "end") {
        side.close();
        if (m.part.value.code !== 0) return { reports, error: errorOfEntryStatus(m.part.value) };
      }
    }
  } catch (err) {
    return { reports, error: ConnectError.from(err) };
  } finally {
    side.close();
  }
  return { reports };
}

const startOf = (
  ibge: string,
  run: { runId: string; cursor: bigint },
  fenceToken: bigint,
  delivery = 1,
  extra: { endBelowPageSize?: number } = {},
): Message => ({
  delivery,
  part: { case: "start", value: { feed: feed(ibge), afterNsu: run.cursor, runId: run.runId, fenceToken, ...extra } },
});

describe("DeliverFeeds", () => {
  it("applies the feed page after page to the store under the run's fence, one ADN call at a time, reporting heads and the store's answers", async () => {
    const run = await beginRun(WHOLE.ibge, 1n);
    const { reports, error } = await deliver(client, startOf(WHOLE.ibge, run, 1n));
    expect(error).toBeUndefined();
    const expected = visible(WHOLE.ibge);
    expect(await storedNsus(WHOLE.ibge)).toEqual(expected);

    const pages = Math.ceil(expected.length / 50);
    expect(reports.map((r) => r.page)).toEqual(Array.from({ length: pages + 1 }, (_, k) => BigInt(k + 1)));
    expect(reports.at(-1)).toMatchObject({ head: { status: BatchStatus.END_OF_STREAM, itemCount: 0 }, cursor: expected.at(-1) });
    expect(reports.at(-1)!.counts).toBeUndefined();
    for (const [k, r] of reports.slice(0, -1).entries()) {
      const page = expected.slice(50 * k, 50 * (k + 1));
      expect(r.head).toMatchObject({ status: BatchStatus.DOCUMENTS_FOUND, highestNsu: page.at(-1), itemCount: page.length });
      expect(r.cursor).toBe(page.at(-1));
      const c = r.counts!;
      expect(c.documentsInserted + c.eventsInserted + c.faults).toBe(page.length);
      expect(r.cancelRequested).toBe(false);
    }
    expect(batchCalls(WHOLE.ibge)).toBe(pages + 1);
    expect(adn.sim.counters().maxConcurrentByFeed[`${WHOLE.ibge}/DISTRIBUICAO`]).toBe(1);
    // The store kept the cursor with the pages: the next run starts after the last one.
    expect((await storeClient.getSyncState({ feed: feed(WHOLE.ibge) })).state!.lastNsu).toBe(expected.at(-1));
    // Each page went in an ApplyBatches call (0040), which the gateway counts by size.
    const sizes = (await scrape(gateway.metricsPort)).filter((m) => m.labels.call === "ApplyBatches");
    const count = sizes.find((m) => m.name === "malha_batched_call_entries_count")?.value ?? 0;
    expect(count).toBeGreaterThanOrEqual(1);
    expect(sizes.find((m) => m.name === "malha_batched_call_entries_sum")?.value).toBeGreaterThanOrEqual(pages);
  });

  it("ends with the 429 of the page that meets it, keeping the pages reported before it", async () => {
    // The third call of the feed meets a 429 (a certificate whose window no other test opens).
    adn.sim.configure({ rateLimit: { maxCalls: 2, windowMs: 60_000 } });
    const run = await beginRun(LIMITED.ibge, 1n);
    const { reports, error } = await deliver(client, startOf(LIMITED.ibge, run, 1n));
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.findDetails(RateLimitedSchema)).toHaveLength(1);
    expect(reports).toHaveLength(2);
    expect(await storedNsus(LIMITED.ibge)).toEqual(visible(LIMITED.ibge).slice(0, 100));
  });

  it("quarantines, in the store, the entries that do not decode or do not fit their columns, and goes on with the feed", async () => {
    const expected = visible(POISONED.ibge);
    const faults = { 3: "truncated-gzip", 7: "bad-base64", 11: "malformed-xml", 60: "poison-long-name" } as const;
    adn.sim.configure({ faultsByNsu: Object.fromEntries(Object.entries(faults).map(([k, f]) => [String(expected[Number(k)]), f])) });
    const run = await beginRun(POISONED.ibge, 1n);
    const { reports, error } = await deliver(client, startOf(POISONED.ibge, run, 1n));
    expect(error).toBeUndefined();
    expect(await storedNsus(POISONED.ibge)).toEqual(expected);
    expect(reports[0]!.counts!.faults).toBe(3);
    expect(reports[1]!.counts!.faults).toBe(1);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT nsu, reason FROM nfse_quarantine WHERE ibge = ? ORDER BY nsu", [
      POISONED.ibge,
    ]);
    expect(rows.map((r) => [BigInt(r.nsu as string), r.reason])).toEqual([
      [expected[3], "BAD_GZIP"],
      [expected[7], "BAD_BASE64"],
      [expected[11], "BAD_XML"],
      [expected[60], "INVALID_VALUE"],
    ]);
  });

  it("fails a page whose entries exceed ADN_MAX_BATCH_BYTES: nothing of it is written", async () => {
    const run = await beginRun(CAPPED.ibge, 1n);
    const { reports, error } = await deliver(cappedClient, startOf(CAPPED.ibge, run, 1n));
    expect(reports).toHaveLength(0);
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toContain("ADN_MAX_BATCH_BYTES (1024 bytes)");
    expect(await storedNsus(CAPPED.ibge)).toEqual([]);
  });

  it("passes the store's refusal of a stale fence on unchanged (FAILED_PRECONDITION + StaleFence) and writes nothing", async () => {
    const stale = await beginRun(FENCED.ibge, 5n);
    // A newer holder begins its run: the older run is closed and its fence is stale from now on.
    await beginRun(FENCED.ibge, 6n);
    const { reports, error } = await deliver(client, startOf(FENCED.ibge, stale, 5n));
    expect(reports).toHaveLength(0);
    expect(error?.code).toBe(Code.FailedPrecondition);
    expect(error?.findDetails(StaleFenceSchema)).toHaveLength(1);
    expect(await storedNsus(FENCED.ibge)).toEqual([]);
    // The refused page, the page sent before its answer (decision 0052), the pages read behind them, and the call ahead.
    expect(batchCalls(FENCED.ibge)).toBeLessThanOrEqual(1 + (PAGES_IN_APPLY - 1) + PAGES_AHEAD_OF_STORE + 1);
  });

  it("holds back while the caller does not acknowledge, and ends with OK after a stop", async () => {
    const run = await beginRun(HELD.ibge, 1n);
    const side = callerSide(startOf(HELD.ibge, run, 1n));
    const reports: DeliverFeedReport[] = [];
    const ends: DeliverFeedsResponse[] = [];
    const done = (async () => {
      for await (const m of client.deliverFeeds(side)) {
        if (m.part.case === "report") reports.push(m.part.value);
        else ends.push(m);
      }
    })();
    // No acknowledgement: the gateway applies UNACKNOWLEDGED_PAGES pages and waits, with at most
    // PAGES_AHEAD_OF_STORE read pages and one ADN call more behind them.
    for (let i = 0; i < 400 && reports.length < UNACKNOWLEDGED_PAGES; i++) await new Promise((r) => setTimeout(r, 10));
    let calls = -1;
    while (calls !== batchCalls(HELD.ibge)) {
      calls = batchCalls(HELD.ibge);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(reports).toHaveLength(UNACKNOWLEDGED_PAGES);
    expect(calls).toBeLessThanOrEqual(UNACKNOWLEDGED_PAGES + PAGES_AHEAD_OF_STORE + 1);
    expect(visible(HELD.ibge).length).toBeGreaterThan(50 * (UNACKNOWLEDGED_PAGES + PAGES_AHEAD_OF_STORE + 2));
    expect(await storedNsus(HELD.ibge)).toEqual(visible(HELD.ibge).slice(0, 50 * UNACKNOWLEDGED_PAGES));

    side.push({ delivery: 1, part: { case: "stop", value: {} } });
    // The delivery ends with code 0; the stream, once the caller closes its side.
    for (let i = 0; i < 400 && ends.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(ends.map((m) => [m.delivery, m.part.case === "end" ? m.part.value.code : -1])).toEqual([[1, 0]]);
    side.close();
    await done;
    expect(reports).toHaveLength(UNACKNOWLEDGED_PAGES);
    expect(batchCalls(HELD.ibge)).toBe(calls);
    expect(await storedNsus(HELD.ibge)).toEqual(visible(HELD.ibge).slice(0, 50 * UNACKNOWLEDGED_PAGES));
  });

  it("ends a delivery with an empty run_id, a zero fence_token or a bad feed with INVALID_ARGUMENT before any ADN call", async () => {
    const run = await beginRun(BAD.ibge, 1n);
    const noRun = await deliver(client, startOf(BAD.ibge, { ...run, runId: "" }, 1n));
    expect(noRun.error?.code).toBe(Code.InvalidArgument);
    expect(noRun.error?.rawMessage).toContain("start.run_id");
    const noFence = await deliver(client, startOf(BAD.ibge, run, 0n));
    expect(noFence.error?.code).toBe(Code.InvalidArgument);
    expect(noFence.error?.rawMessage).toContain("start.fence_token");
    const badFeed = await deliver(client, startOf("355030", run, 1n));
    expect(badFeed.error?.code).toBe(Code.InvalidArgument);
    const pageSize = await deliver(client, startOf(BAD.ibge, run, 1n, 1, { endBelowPageSize: 1001 }));
    expect(pageSize.error?.code).toBe(Code.InvalidArgument);
    // adn_gateway.proto's bound, checked by the validation interceptor.
    expect(pageSize.error?.rawMessage).toContain("start.end_below_page_size: must be less than or equal to 1000");
    expect(batchCalls(BAD.ibge)).toBe(0);
  });

  it("ends at a page shorter than end_below_page_size without asking the ADN again, and without it asks until the ADN's end", async () => {
    const expected = visible(SHORT.ibge);
    // The feed's last page is short (the test means nothing if the seeded feed fills its last page).
    expect(expected.length % 50).not.toBe(0);
    const pages = Math.ceil(expected.length / 50);
    const run = await beginRun(SHORT.ibge, 1n);
    const short = await deliver(client, startOf(SHORT.ibge, run, 1n, 1, { endBelowPageSize: 50 }));
    expect(short.error).toBeUndefined();
    expect(await storedNsus(SHORT.ibge)).toEqual(expected);
    // One call per page: the short last page ends the delivery, no call hears "nothing newer".
    expect(batchCalls(SHORT.ibge)).toBe(pages);
    expect(short.reports).toHaveLength(pages);
    expect(short.reports.slice(0, -1).every((r) => !r.head!.endsAtShortPage)).toBe(true);
    expect(short.reports.at(-1)!.head).toMatchObject({
      status: BatchStatus.DOCUMENTS_FOUND,
      itemCount: expected.length % 50,
      endsAtShortPage: true,
    });
    expect(short.reports.at(-1)!.cursor).toBe(expected.at(-1));

    // Three new notes, a new run without the limit: their page, then the ADN's "nothing newer".
    adn.sim.feed(SHORT.ibge).append(3);
    const again = await beginRun(SHORT.ibge, 2n);
    expect(again.cursor).toBe(expected.at(-1));
    const calls = batchCalls(SHORT.ibge);
    const full = await deliver(client, startOf(SHORT.ibge, again, 2n));
    expect(full.error).toBeUndefined();
    expect(batchCalls(SHORT.ibge) - calls).toBe(2);
    expect(full.reports.map((r) => [r.head!.status, r.head!.itemCount, r.head!.endsAtShortPage])).toEqual([
      [BatchStatus.DOCUMENTS_FOUND, 3, false],
      [BatchStatus.END_OF_STREAM, 0, false],
    ]);
    expect(await storedNsus(SHORT.ibge)).toEqual(visible(SHORT.ibge));
  });

  it("fails the stream with INVALID_ARGUMENT for a delivery 0, a start under a number still open and a message without a part", async () => {
    const run = await beginRun(BAD.ibge, 2n);
    const zero = await deliver(client, startOf(BAD.ibge, run, 2n, 0));
    expect(zero.error?.code).toBe(Code.InvalidArgument);
    expect(zero.error?.rawMessage).toContain("delivery must be at least 1");
    const empty = await deliver(client, { delivery: 1, part: { case: undefined } });
    expect(empty.error?.code).toBe(Code.InvalidArgument);
    expect(empty.error?.rawMessage).toContain("without a part");
    // The same number twice while the first is open (held: never acknowledged, on a feed of many pages).
    const side = callerSide(startOf(HELD.ibge, await beginRun(HELD.ibge, 9n), 9n), startOf(BAD.ibge, run, 2n));
    const again = await (async () => {
      try {
        for await (const _ of client.deliverFeeds(side));
      } catch (err) {
        return ConnectError.from(err);
      } finally {
        side.close();
      }
    })();
    expect(again?.code).toBe(Code.InvalidArgument);
    expect(again?.rawMessage).toContain("delivery 1 is open");
    expect(batchCalls(BAD.ibge)).toBe(0);
  });

  it("carries several deliveries on one stream: each gets its own reports and end, and one's error or cancellation leaves the others alone", async () => {
    const cancelledBefore =
      (await scrape(gateway.metricsPort)).find((m) => m.name === "malha_adn_deliveries_total" && m.labels.code === "Canceled")?.value ?? 0;
    const whole = await beginRun(SHARED.ibge, 1n);
    const stale = await beginRun(SHARED_STALE.ibge, 3n);
    await beginRun(SHARED_STALE.ibge, 4n);
    const cancelled = await beginRun(SHARED_CANCELLED.ibge, 1n);
    const side = callerSide(
      startOf(SHARED.ibge, whole, 1n, 7),
      startOf(SHARED_STALE.ibge, stale, 3n, 8),
      startOf(SHARED_CANCELLED.ibge, cancelled, 1n, 9),
    );
    const seen = new Map<number, DeliverFeedsResponse[]>([
      [7, []],
      [8, []],
      [9, []],
    ]);
    for await (const m of client.deliverFeeds(side)) {
      seen.get(m.delivery)!.push(m);
      if (m.part.case === "report" && m.delivery === 9) {
        // Cancelled at its first report: nothing more comes for it once the cancel is in, not even an end.
        side.push({ delivery: 9, part: { case: "cancel", value: {} } });
      } else if (m.part.case === "report") side.push({ delivery: m.delivery, part: { case: "ackedPages", value: m.part.value.page } });
      const ended = [7, 8].every((d) => seen.get(d)!.some((x) => x.part.case === "end"));
      if (ended && seen.get(9)!.length > 0) side.close();
    }
    const reportsOf = (d: number) => seen.get(d)!.flatMap((m) => (m.part.case === "report" ? [m.part.value] : []));
    const endOf = (d: number) => seen.get(d)!.find((m) => m.part.case === "end")?.part.value as { code: number } | undefined;

    expect(endOf(7)?.code).toBe(0);
    expect(reportsOf(7).at(-1)?.head?.status).toBe(BatchStatus.END_OF_STREAM);
    expect(await storedNsus(SHARED.ibge)).toEqual(visible(SHARED.ibge));

    const staleEnd = seen.get(8)!.find((m) => m.part.case === "end")!;
    if (staleEnd.part.case !== "end") throw new Error("unreachable");
    const refusal = errorOfEntryStatus(staleEnd.part.value);
    expect(refusal.code).toBe(Code.FailedPrecondition);
    expect(refusal.findDetails(StaleFenceSchema)).toHaveLength(1);
    expect(await storedNsus(SHARED_STALE.ibge)).toEqual([]);

    // The page sent before the first answer (decision 0052) may be reported before the cancel arrives.
    expect(reportsOf(9).length).toBeGreaterThanOrEqual(1);
    expect(reportsOf(9).length).toBeLessThanOrEqual(PAGES_IN_APPLY);
    expect(endOf(9)).toBeUndefined();
    const calls = batchCalls(SHARED_CANCELLED.ibge);
    // What the window let the gateway apply and read ahead before the cancel arrived, and the call ahead.
    expect(calls).toBeLessThanOrEqual(UNACKNOWLEDGED_PAGES + PAGES_AHEAD_OF_STORE + 1);
    await new Promise((r) => setTimeout(r, 200));
    expect(batchCalls(SHARED_CANCELLED.ibge)).toBe(calls);
    const cancelledAfter = (await scrape(gateway.metricsPort)).find(
      (m) => m.name === "malha_adn_deliveries_total" && m.labels.code === "Canceled",
    )?.value;
    expect(cancelledAfter).toBe(cancelledBefore + 1);
  });

  it("once it shuts down, says `closing` on the stream, refuses new starts with SERVER_CLOSING before any ADN call, runs the open delivery to its end and exits when the caller has closed its side", async () => {
    const own = await startService("adn-gateway", { ...gatewayEnv, SHUTDOWN_TIMEOUT_SECONDS: "60" });
    try {
      const ownClient = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: own.baseUrl }));
      const run = await beginRun(CLOSING.ibge, 1n);
      const side = callerSide(startOf(CLOSING.ibge, run, 1n));
      const messages: DeliverFeedsResponse[] = [];
      const done = (async () => {
        for await (const m of ownClient.deliverFeeds(side)) messages.push(m);
      })();
      const until = async (what: () => boolean) => {
        for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
      };
      // Held open across the shutdown: no acknowledgement yet.
      await until(() => messages.length >= UNACKNOWLEDGED_PAGES);

      own.kill("SIGTERM");
      await until(() => messages.some((m) => m.part.case === "closing"));
      expect(messages.filter((m) => m.part.case === "closing").map((m) => m.delivery)).toEqual([0]);
      const refusedRun = await beginRun(REFUSED.ibge, 1n);
      side.push(startOf(REFUSED.ibge, refusedRun, 1n, 2));
      await until(() => messages.some((m) => m.delivery === 2));
      const refusal = messages.find((m) => m.delivery === 2);
      expect(refusal?.part.case).toBe("end");
      const error = errorOfEntryStatus(refusal?.part.value as DeliveryEnd);
      expect(isServerClosing(error)).toBe(true);
      expect(batchCalls(REFUSED.ibge)).toBe(0);

      // The open delivery goes on as the caller acknowledges, to its last page.
      const pages = Math.ceil(visible(CLOSING.ibge).length / 50) + 1;
      for (let page = 1; page <= pages; page++) {
        await until(() => messages.some((m) => m.delivery === 1 && m.part.case === "report" && m.part.value.page === BigInt(page)));
        side.push({ delivery: 1, part: { case: "ackedPages", value: BigInt(page) } });
      }
      await until(() => messages.some((m) => m.delivery === 1 && m.part.case === "end"));
      expect(messages.find((m) => m.delivery === 1 && m.part.case === "end")?.part.value).toMatchObject({ code: 0 });
      expect(await storedNsus(CLOSING.ibge)).toEqual(visible(CLOSING.ibge));

      side.close();
      await done;
      expect((await own.exited).code).toBe(0);
      expect(own.lines.filter((l) => l.includes("shutdown timeout"))).toEqual([]);
    } finally {
      own.kill("SIGKILL");
    }
  });
});
