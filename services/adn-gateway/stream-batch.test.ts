// StreamBatch and StreamFeed of the adn-gateway process from main.ts, over real gRPC, against the ADN
// simulator: the head first, then item chunks that are exactly FetchBatch's items, and errors before or
// after the head; StreamFeed's pages in sequence, one ADN call at a time.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  AdnGatewayService,
  BatchStatus,
  type BatchHead,
  type StreamBatchResponse,
  type StreamFeedResponse,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { RateLimitedSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { DistributionBatchSchema } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";

const MAIN = { ibge: "3550308", cnpj: "11222333000181" };
const LIMITED = { ibge: "3304557", cnpj: "22333444000181" };

let adn: TestAdn;
let gateway: ServiceProcess;
let capped: ServiceProcess;
let client: Client<typeof AdnGatewayService>;
let cappedClient: Client<typeof AdnGatewayService>;

const connect = (svc: ServiceProcess) =>
  createClient(AdnGatewayService, createGrpcTransport({ baseUrl: svc.baseUrl, readMaxBytes: 64 * 1024 * 1024 }));

beforeAll(async () => {
  adn = await startTestAdn([MAIN, LIMITED], { seed: 7, feedSize: 300 });
  const env = { ...adn.gatewayEnv, NFSE_MAX_RETRIES: "0", NFSE_REQUEST_TIMEOUT_SECONDS: "5" };
  gateway = await startService("adn-gateway", env);
  // So small that the first decoded item of any batch passes it.
  capped = await startService("adn-gateway", { ...env, ADN_MAX_BATCH_BYTES: "1024" });
  client = connect(gateway);
  cappedClient = connect(capped);
});

afterAll(async () => {
  gateway?.kill("SIGKILL");
  capped?.kill("SIGKILL");
  await adn?.close();
});

beforeEach(() => adn.sim.reset());

const feed = (ibge: string) => ({ ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });

async function readStream(c: Client<typeof AdnGatewayService>, ibge: string, afterNsu: bigint) {
  const messages: StreamBatchResponse[] = [];
  try {
    for await (const m of c.streamBatch({ feed: feed(ibge), afterNsu })) messages.push(m);
  } catch (err) {
    return { messages, error: ConnectError.from(err) };
  }
  return { messages };
}

describe("StreamBatch", () => {
  it("sends the head first, then chunks that concatenate to exactly the items FetchBatch returns", async () => {
    // Inclusive start, duplicates and an NSU-less item: the head's counts must match FetchBatch's.
    const entries = adn.sim.feed(MAIN.ibge).entries.filter((e) => !e.hidden);
    adn.sim.configure({
      startInclusive: true,
      duplicateRate: 0.1,
      faultsByNsu: { [String(entries[60]!.nsu)]: "missing-nsu", [String(entries[61]!.nsu)]: "malformed-xml" },
    });
    const after = entries[49]!.nsu;
    const fetched = await client.fetchBatch({ feed: feed(MAIN.ibge), afterNsu: after });
    const { messages, error } = await readStream(client, MAIN.ibge, after);
    expect(error).toBeUndefined();

    const [first, ...rest] = messages;
    expect(first?.part.case).toBe("head");
    const head = first!.part.value as Exclude<StreamBatchResponse["part"]["value"], Uint8Array | undefined>;
    expect(head).toMatchObject({
      status: BatchStatus.DOCUMENTS_FOUND,
      highestNsu: fetched.highestNsu,
      itemCount: fetched.items.length,
      pageSizeSeen: fetched.pageSizeSeen,
      droppedCount: fetched.droppedCount,
      call: { httpStatus: 200, attempts: 1 },
    });
    expect(head.droppedCount).toBe(1);
    expect(rest.length).toBeGreaterThan(0);
    expect(rest.every((m) => m.part.case === "itemsChunk")).toBe(true);
    const bytes = Buffer.concat(rest.map((m) => m.part.value as Uint8Array));
    expect(bytes.equals(Buffer.from(toBinary(DistributionBatchSchema, create(DistributionBatchSchema, { items: fetched.items }))))).toBe(
      true,
    );
    const streamed = fromBinary(DistributionBatchSchema, bytes).items;
    expect(streamed[0]).toMatchObject({ nsu: 0n, content: { case: "fault" } });
    expect(streamed.map((i) => i.nsu)).toEqual(fetched.items.map((i) => i.nsu));
    expect(adn.sim.counters().byFeed[`${MAIN.ibge}/DISTRIBUICAO`]!.batch).toBe(2);
  });

  it("answers only a head at the end of the feed", async () => {
    const last = adn.sim.feed(MAIN.ibge).entries.at(-1)!.nsu;
    const { messages, error } = await readStream(client, MAIN.ibge, last);
    expect(error).toBeUndefined();
    expect(messages).toHaveLength(1);
    expect(messages[0]!.part).toMatchObject({
      case: "head",
      value: { status: BatchStatus.END_OF_STREAM, highestNsu: 0n, itemCount: 0, call: { httpStatus: 404 } },
    });
  });

  it("fails before the head like FetchBatch: a 429 is RESOURCE_EXHAUSTED + RateLimited and nothing is sent", async () => {
    adn.sim.configure({ rateLimit: { maxCalls: 1, windowMs: 60_000 } });
    await client.fetchBatch({ feed: feed(LIMITED.ibge), afterNsu: 0n });
    const { messages, error } = await readStream(client, LIMITED.ibge, 0n);
    expect(messages).toHaveLength(0);
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.findDetails(RateLimitedSchema)).toHaveLength(1);
    const invalid = await readStream(client, "123", 0n);
    expect(invalid.error?.code).toBe(Code.InvalidArgument);
  });

  it("sends the head before decoding: a batch that fails to decode ends the stream with an error after its head", async () => {
    const { messages, error } = await readStream(cappedClient, MAIN.ibge, 0n);
    expect(messages.map((m) => m.part.case)).toEqual(["head"]);
    expect(messages[0]!.part.value).toMatchObject({ status: BatchStatus.DOCUMENTS_FOUND, itemCount: 50 });
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toContain("ADN_MAX_BATCH_BYTES (1024 bytes)");
    expect(error?.findDetails(RateLimitedSchema)).toHaveLength(0);
  });
});

async function readFeed(c: Client<typeof AdnGatewayService>, ibge: string, afterNsu: bigint) {
  const messages: StreamFeedResponse[] = [];
  try {
    for await (const m of c.streamFeed({ feed: feed(ibge), afterNsu })) messages.push(m);
  } catch (err) {
    return { messages, error: ConnectError.from(err) };
  }
  return { messages };
}

/** head, chunks…, page_end per page; anything else fails the test. */
function pagesOf(messages: StreamFeedResponse[]) {
  const pages: { head: BatchHead; items: Buffer; ended: boolean }[] = [];
  for (const m of messages) {
    if (m.part.case === "head") pages.push({ head: m.part.value, items: Buffer.alloc(0), ended: false });
    else {
      const page = pages.at(-1)!;
      expect(page.ended).toBe(false);
      if (m.part.case === "itemsChunk") page.items = Buffer.concat([page.items, m.part.value]);
      else if (m.part.case === "pageEnd") page.ended = true;
      else throw new Error(`unexpected part ${String(m.part.case)}`);
    }
  }
  return pages;
}

describe("StreamFeed", () => {
  it("sends the feed page after page, each exactly FetchBatch's, to the end of the feed, one ADN call at a time", async () => {
    const visible = adn.sim.feed(MAIN.ibge).entries.filter((e) => !e.hidden);
    const after = visible[99]!.nsu;
    const { messages, error } = await readFeed(client, MAIN.ibge, after);
    expect(error).toBeUndefined();
    const pages = pagesOf(messages);
    expect(pages.every((p) => p.ended)).toBe(true);
    expect(pages.at(-1)!.head).toMatchObject({ status: BatchStatus.END_OF_STREAM, itemCount: 0 });
    const calls = adn.sim.counters().byFeed[`${MAIN.ibge}/DISTRIBUICAO`]!.batch;
    expect(calls).toBe(pages.length);
    expect(adn.sim.counters().maxConcurrentByFeed[`${MAIN.ibge}/DISTRIBUICAO`]).toBe(1);

    let from = after;
    for (const page of pages.slice(0, -1)) {
      const fetched = await client.fetchBatch({ feed: feed(MAIN.ibge), afterNsu: from });
      expect(page.head).toMatchObject({
        status: BatchStatus.DOCUMENTS_FOUND,
        highestNsu: fetched.highestNsu,
        itemCount: fetched.items.length,
      });
      expect(
        page.items.equals(Buffer.from(toBinary(DistributionBatchSchema, create(DistributionBatchSchema, { items: fetched.items })))),
      ).toBe(true);
      from = page.head.highestNsu;
    }
    expect(from).toBe(visible.at(-1)!.nsu);
  });

  it("ends with the error of the page that fails; the pages before it are complete", async () => {
    // The second call of the feed meets a 429 (a certificate whose window no earlier test has opened).
    adn.sim.configure({ rateLimit: { maxCalls: 1, windowMs: 60_000 } });
    const { messages, error } = await readFeed(client, MAIN.ibge, 0n);
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.findDetails(RateLimitedSchema)).toHaveLength(1);
    const pages = pagesOf(messages);
    expect(pages).toHaveLength(1);
    expect(pages[0]!).toMatchObject({ ended: true, head: { status: BatchStatus.DOCUMENTS_FOUND, itemCount: 50 } });
    expect(fromBinary(DistributionBatchSchema, pages[0]!.items).items).toHaveLength(50);
  });

  it("fails a page that cannot be decoded after its head, without a page_end", async () => {
    const { messages, error } = await readFeed(cappedClient, MAIN.ibge, 0n);
    expect(messages.map((m) => m.part.case)).toEqual(["head"]);
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toContain("ADN_MAX_BATCH_BYTES (1024 bytes)");
  });
});
