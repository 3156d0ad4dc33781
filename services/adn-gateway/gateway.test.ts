// The adn-gateway process from main.ts, over real gRPC, against the ADN simulator over real HTTPS + mTLS.
import { toJson } from "@bufbuild/protobuf";
import { Code, ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { mod11CheckDigit } from "../../libs/tax-id/index.js";
import { sha256Hex } from "../../libs/adn/payload.js";
import { AdnGatewayService, BatchStatus } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import {
  AdnRejectionSchema,
  AmbienteMismatchSchema,
  CredentialsProblem,
  CredentialsUnavailableSchema,
  RateLimitedSchema,
  TransientFailureSchema,
} from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { FaultReason, type DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { EventSchema } from "../../libs/gen/malha/nfse/v1/event_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { compact, expectedDocumentJson, expectedEventJson } from "../../tools/adn-sim/expected.js";
import type { FeedEntry } from "../../tools/adn-sim/model.js";
import { startTestAdn, type AdnSimulator, type TestAdn } from "../../tools/adn-sim/index.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";

const MAIN = { ibge: "3550308", cnpj: "11222333000181" };
const LIMITED = { ibge: "3304557", cnpj: "22333444000181" };
const FLAKY = { ibge: "3106200", cnpj: "33444555000181" };
const FAULTY = { ibge: "4106902", cnpj: "44555666000181" };
const STRANGER = { ibge: "1302603", cnpj: "55666777000181", outsideConvenio: true };
const EXPIRED = { ibge: "2927408", cnpj: "66777888000181", expired: true };
// A 2026 alphanumeric CNPJ (IN RFB 2.229/2024) in the e-CNPJ's otherName and CN.
const ALNUM = { ibge: "5300108", cnpj: "12ABC34501DE35" };
const MAX_DECOMPRESSED = 1024 * 1024;

let adn: TestAdn;
let sim: AdnSimulator;
let gateway: ServiceProcess;
let client: Client<typeof AdnGatewayService>;

beforeAll(async () => {
  adn = await startTestAdn([MAIN, LIMITED, FLAKY, FAULTY, STRANGER, EXPIRED, ALNUM], {
    seed: 42,
    feedSize: 2100,
    switches: { hangMs: 10_000, bombBytes: 4 * MAX_DECOMPRESSED },
  });
  sim = adn.sim;
  gateway = await startService("adn-gateway", {
    ...adn.gatewayEnv,
    // Long enough for a 100-item page on a busy machine, short enough for the timeout tests.
    NFSE_REQUEST_TIMEOUT_SECONDS: "2.5",
    NFSE_MAX_RETRIES: "2",
    NFSE_RETRY_BACKOFF_BASE_SECONDS: "0.01",
    NFSE_RETRY_BACKOFF_MAX_SECONDS: "0.05",
    ADN_MAX_DECOMPRESSED_BYTES: String(MAX_DECOMPRESSED),
  });
  client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: gateway.baseUrl, readMaxBytes: 64 * 1024 * 1024 }));
});

afterAll(async () => {
  gateway?.kill("SIGKILL");
  await adn?.close();
});

beforeEach(() => sim.reset());

const feed = (ibge: string, tipoNsu = TipoNsu.DISTRIBUICAO, ambiente = Ambiente.PRODUCAO_RESTRITA) => ({ ibge, ambiente, tipoNsu });

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

/** Reads a feed to its end the way the coordinator will: after_nsu = highest NSU received. */
async function readAll(ibge: string, tipoNsu: TipoNsu) {
  const items: DistributionItem[] = [];
  const calls: { pageSizeSeen: number; dropped: number; status: BatchStatus; httpStatus: number }[] = [];
  let after = 0n;
  for (let i = 0; i < 200; i++) {
    const res = await client.fetchBatch({ feed: feed(ibge, tipoNsu), afterNsu: after });
    calls.push({ pageSizeSeen: res.pageSizeSeen, dropped: res.droppedCount, status: res.status, httpStatus: res.call?.httpStatus ?? 0 });
    if (res.status === BatchStatus.END_OF_STREAM) return { items, calls };
    expect(res.items.length).toBeGreaterThan(0);
    expect(res.highestNsu).toBe(res.items.at(-1)!.nsu);
    items.push(...res.items);
    after = res.highestNsu;
  }
  throw new Error("feed did not end");
}

const visible = (entries: FeedEntry[]) => entries.filter((e) => !e.hidden).map((e) => e.nsu);

describe("FetchBatch reading whole feeds", () => {
  it("reads a feed of > 2,000 items in pages of 100; every generated field and the raw XML round-trip", async () => {
    sim.configure({ pageSize: 100, startInclusive: false });
    const log = sim.feed(MAIN.ibge);
    const { items, calls } = await readAll(MAIN.ibge, TipoNsu.DISTRIBUICAO);
    expect(items.map((i) => i.nsu)).toEqual(visible(log.entries));
    expect(items.length).toBeGreaterThanOrEqual(2000);
    expect(calls.slice(0, -2).every((c) => c.pageSizeSeen === 100 && c.dropped === 0)).toBe(true);
    expect(calls.at(-2)!.pageSizeSeen).toBeLessThanOrEqual(100);
    expect(calls.at(-1)).toMatchObject({ status: BatchStatus.END_OF_STREAM, httpStatus: 404 });
    const seenCodes = new Set<string>();
    const versions = new Set<string>();
    for (const item of items) {
      const entry = log.at(item.nsu)!;
      expect(Buffer.from(item.xml).toString("utf8")).toBe(entry.xml);
      expect(item.xmlSha256).toBe(sha256Hex(Buffer.from(entry.xml, "utf8")));
      expect(item.chave).toBe(entry.chave);
      if (entry.facts.kind === "NFSE") {
        expect(item.content.case).toBe("document");
        expect(compact(toJson(DocumentSchema, item.content.value as never, { enumAsInteger: true }))).toEqual(
          expectedDocumentJson(entry.facts.note),
        );
        expect(item.tipoEvento).toBe("");
        versions.add(entry.facts.note.versao);
      } else {
        expect(item.content.case).toBe("event");
        expect(compact(toJson(EventSchema, item.content.value as never, { enumAsInteger: true }))).toEqual(
          expectedEventJson(entry.facts.event),
        );
        expect(item.tipoEvento).toBe(entry.facts.tipoEvento);
        seenCodes.add(entry.facts.event.codigo);
      }
    }
    expect(versions).toEqual(new Set(["1.00", "1.01"]));
    expect(seenCodes.size).toBe(18);
    // 21 full pages + the 404: one ADN call per FetchBatch, no retries.
    expect(sim.counters().byFeed[`${MAIN.ibge}/DISTRIBUICAO`]!.batch).toBe(calls.length);
  });

  it.each([
    { pageSize: 50, startInclusive: false },
    { pageSize: 50, startInclusive: true },
    { pageSize: 100, startInclusive: true },
  ])("loses and repeats nothing with page size $pageSize, inclusive start $startInclusive", async (switches) => {
    sim.configure(switches);
    const log = sim.feed(MAIN.ibge, "RECEPCAO");
    const { items, calls } = await readAll(MAIN.ibge, TipoNsu.RECEPCAO);
    expect(items.map((i) => i.nsu)).toEqual(visible(log.entries));
    expect(calls[0]!.pageSizeSeen).toBe(switches.pageSize);
    const last = calls.at(-1)!;
    if (switches.startInclusive) {
      // Caught up under inclusive semantics: HTTP 200 with only the item already held.
      expect(last).toMatchObject({ status: BatchStatus.END_OF_STREAM, httpStatus: 200, dropped: 1, pageSizeSeen: 1 });
      expect(calls.slice(1, -1).every((c) => c.dropped === 1)).toBe(true);
    } else {
      expect(last).toMatchObject({ status: BatchStatus.END_OF_STREAM, httpStatus: 404, dropped: 0 });
    }
  });

  it("sees documents appended while it reads, and drops duplicate NSUs within a batch", async () => {
    sim.configure({ pageSize: 50, appendEvery: { calls: 2, count: 30 }, duplicateRate: 0.2 });
    const log = sim.feed(MAIN.ibge, "MEI");
    const before = log.entries.length;
    const { items } = await readAll(MAIN.ibge, TipoNsu.MEI);
    expect(log.entries.length).toBeGreaterThan(before);
    const nsus = items.map((i) => i.nsu);
    expect(new Set(nsus).size).toBe(nsus.length);
    expect(nsus).toEqual(visible(log.entries));
  });
});

describe("mTLS identity", () => {
  it("calls with a certificate whose CNPJ is alphanumeric: the ADN identifies the municipality by it and serves its feed", async () => {
    const res = await client.fetchBatch({ feed: feed(ALNUM.ibge), afterNsu: 0n });
    expect(res.status).toBe(BatchStatus.DOCUMENTS_FOUND);
    expect(res.items.length).toBeGreaterThan(0);
    expect(res.items[0]!.nsu).toBe(sim.feed(ALNUM.ibge).entries[0]!.nsu);
    expect(sim.counters().byCnpj).toEqual({ [ALNUM.cnpj]: 1 });
    expect(sim.counters().byMunicipio).toEqual({ [ALNUM.ibge]: 1 });
  });
});

describe("FetchSingle and GetDocumentByChave", () => {
  it("back-fills a hidden NSU with lote=false and confirms a true hole", async () => {
    const log = sim.feed(MAIN.ibge);
    const hidden = log.entries.find((e) => e.hidden)!;
    const res = await client.fetchSingle({ feed: feed(MAIN.ibge), nsu: hidden.nsu });
    expect(res.result.case).toBe("item");
    const item = res.result.value as DistributionItem;
    expect(item.nsu).toBe(hidden.nsu);
    expect(Buffer.from(item.xml).toString()).toBe(hidden.xml);
    const holeNsu = [...log.holes][0]!;
    const hole = await client.fetchSingle({ feed: feed(MAIN.ibge), nsu: holeNsu });
    expect(hole.result).toMatchObject({ case: "hole", value: { nsu: holeNsu, codigo: "E2040" } });
    expect(hole.call?.httpStatus).toBe(404);
    expect(sim.counters().byFeed[`${MAIN.ibge}/DISTRIBUICAO`]!.single).toBe(2);
  });

  it("returns a note with its events by chave; NOT_FOUND, E2061 and a bad check digit otherwise", async () => {
    const log = sim.feed(MAIN.ibge);
    const withEvents = log.entries.find(
      (e) => e.facts.kind === "NFSE" && log.entries.filter((x) => x.chave === e.chave && x.facts.kind === "EVENTO").length >= 2,
    )!;
    const res = await client.getDocumentByChave({ ibge: MAIN.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, chave: withEvents.chave });
    expect(res.document?.content.case).toBe("document");
    expect(res.document?.nsu).toBe(withEvents.nsu);
    const expectedEvents = log.entries.filter((x) => x.chave === withEvents.chave && x.facts.kind === "EVENTO").map((x) => x.nsu);
    expect(res.events.map((e) => e.nsu)).toEqual(expectedEvents);
    expect(res.faults).toEqual([]);

    const body = "3550308221122233300018100000000000422603123456789";
    const unknown = body + String(mod11CheckDigit(body));
    expect((await failure(client.getDocumentByChave({ ibge: MAIN.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, chave: unknown }))).code).toBe(
      Code.NotFound,
    );
    const badDv = unknown.slice(0, 49) + String((Number(unknown[49]) + 1) % 10);
    expect((await failure(client.getDocumentByChave({ ibge: MAIN.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, chave: badDv }))).code).toBe(
      Code.InvalidArgument,
    );

    const othersChave = sim.feed(LIMITED.ibge).entries[0]!.chave;
    const notMine = await failure(client.getDocumentByChave({ ibge: MAIN.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, chave: othersChave }));
    expect(notMine.code).toBe(Code.FailedPrecondition);
    expect(notMine.findDetails(AdnRejectionSchema)[0]?.codigo).toBe("E2061");
  });
});

describe("ADN faults", () => {
  it("answers 429 with RESOURCE_EXHAUSTED + RateLimited and does not call the ADN during the cool-down", async () => {
    sim.configure({ rateLimit: { maxCalls: 1, windowMs: 60_000 } });
    await client.fetchBatch({ feed: feed(LIMITED.ibge), afterNsu: 0n });
    const limited = await failure(client.fetchBatch({ feed: feed(LIMITED.ibge), afterNsu: 50n }));
    expect(limited.code).toBe(Code.ResourceExhausted);
    const detail = limited.findDetails(RateLimitedSchema)[0]!;
    expect(detail.fromCache).toBe(false);
    const cooldownSeconds = Number(detail.cooldownUntil!.seconds - detail.observedAt!.seconds);
    expect(cooldownSeconds).toBeGreaterThanOrEqual(299);
    expect(cooldownSeconds).toBeLessThanOrEqual(300);
    // Every feed of that certificate is cooling down now; none of these reaches the ADN.
    for (const tipoNsu of [TipoNsu.DISTRIBUICAO, TipoNsu.RECEPCAO]) {
      const cached = await failure(client.fetchBatch({ feed: feed(LIMITED.ibge, tipoNsu), afterNsu: 50n }));
      expect(cached.code).toBe(Code.ResourceExhausted);
      expect(cached.findDetails(RateLimitedSchema)[0]).toMatchObject({ fromCache: true, cooldownUntil: detail.cooldownUntil });
    }
    expect(sim.counters().byMunicipio[LIMITED.ibge]).toBe(2);
    expect(sim.counters().byStatus["429"]).toBe(1);
  });

  it("retries HTML 503 with backoff, then succeeds; gives UNAVAILABLE + TransientFailure when it persists", async () => {
    sim.configure({ fail503Next: 2 });
    const ok = await client.fetchBatch({ feed: feed(FLAKY.ibge), afterNsu: 0n });
    expect(ok.status).toBe(BatchStatus.DOCUMENTS_FOUND);
    expect(ok.call?.attempts).toBe(3);
    sim.configure({ fail503Next: 100 });
    const err = await failure(client.fetchBatch({ feed: feed(FLAKY.ibge), afterNsu: 0n }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.findDetails(TransientFailureSchema)[0]).toMatchObject({ attempts: 3, lastHttpStatus: 503, lastError: "HTTP 503" });
    expect(sim.counters().byMunicipio[FLAKY.ibge]).toBe(6);
  });

  it("retries a connection cut in the middle of the body", async () => {
    sim.configure({ cutNext: 2 });
    const ok = await client.fetchBatch({ feed: feed(FLAKY.ibge), afterNsu: 0n });
    expect(ok.status).toBe(BatchStatus.DOCUMENTS_FOUND);
    expect(ok.items).toHaveLength(50);
    expect(ok.call?.attempts).toBe(3);
    expect(sim.counters().byMunicipio[FLAKY.ibge]).toBe(3);
  });

  it("retries a timeout, and gives UNAVAILABLE after NFSE_MAX_RETRIES timeouts", async () => {
    sim.configure({ hangNext: 1 });
    const ok = await client.fetchBatch({ feed: feed(FLAKY.ibge), afterNsu: 0n });
    expect(ok.call?.attempts).toBe(2);
    sim.configure({ hangNext: 3 });
    const err = await failure(client.fetchBatch({ feed: feed(FLAKY.ibge), afterNsu: 0n }));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.findDetails(TransientFailureSchema)[0]).toMatchObject({ attempts: 3, lastHttpStatus: 0, lastError: "timeout after 2.5s" });
    expect(sim.counters().byMunicipio[FLAKY.ibge]).toBe(5);
  });

  it("turns undecodable items into faults with the raw payload and still returns the batch", async () => {
    const log = sim.feed(FAULTY.ibge);
    const firstPage = log.entries.filter((e) => !e.hidden).slice(0, 50);
    const plan = {
      truncated: firstPage[1]!,
      base64: firstPage[2]!,
      xml: firstPage[3]!,
      dtd: firstPage[4]!,
      bomb: firstPage[5]!,
      noNsu: firstPage[6]!,
    };
    sim.configure({
      faultsByNsu: {
        [String(plan.truncated.nsu)]: "truncated-gzip",
        [String(plan.base64.nsu)]: "bad-base64",
        [String(plan.xml.nsu)]: "malformed-xml",
        [String(plan.dtd.nsu)]: "dtd",
        [String(plan.bomb.nsu)]: "bomb",
        [String(plan.noNsu.nsu)]: "missing-nsu",
      },
    });
    const res = await client.fetchBatch({ feed: feed(FAULTY.ibge), afterNsu: 0n });
    expect(res.status).toBe(BatchStatus.DOCUMENTS_FOUND);
    expect(res.items).toHaveLength(50);
    const at = (nsu: bigint) => res.items.find((i) => i.nsu === nsu)!;
    const fault = (item: DistributionItem) => (item.content.case === "fault" ? item.content.value : undefined);
    expect(fault(at(plan.truncated.nsu))).toMatchObject({ reason: FaultReason.BAD_GZIP });
    expect(at(plan.truncated.nsu).xml).toHaveLength(0);
    expect(fault(at(plan.base64.nsu))).toMatchObject({ reason: FaultReason.BAD_BASE64 });
    expect(Buffer.from(fault(at(plan.base64.nsu))!.rawPayload).toString()).toContain("*%$#");
    const badXml = at(plan.xml.nsu);
    expect(fault(badXml)).toMatchObject({ reason: FaultReason.BAD_XML });
    expect(badXml.xmlSha256).toBe(sha256Hex(badXml.xml));
    expect(fault(at(plan.dtd.nsu))).toMatchObject({ reason: FaultReason.BAD_XML });
    expect(fault(at(plan.dtd.nsu))!.message).toContain("DTD");
    const bomb = fault(at(plan.bomb.nsu))!;
    expect(bomb.reason).toBe(FaultReason.TOO_LARGE);
    expect(bomb.rawPayload.length).toBeGreaterThan(0);
    // The NSU-less item cannot be placed in the sequence; it comes first, as a fault with NSU 0.
    expect(res.items[0]).toMatchObject({
      nsu: 0n,
      chave: plan.noNsu.chave,
      content: { case: "fault", value: { reason: FaultReason.MISSING_FIELD } },
    });
    const good = res.items.filter((i) => i.content.case === "document" || i.content.case === "event");
    expect(good).toHaveLength(44);
  });
});

describe("refusals without a retry storm", () => {
  it("gives FAILED_PRECONDITION + AdnRejection E2001 for a certificate outside the convênio, after one call", async () => {
    const err = await failure(client.fetchBatch({ feed: feed(STRANGER.ibge), afterNsu: 0n }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(AdnRejectionSchema)[0]).toMatchObject({ codigo: "E2001", httpStatus: 400 });
    expect(sim.counters().byCnpj[STRANGER.cnpj]).toBe(1);
  });

  it("refuses an expired certificate before calling the ADN", async () => {
    const err = await failure(client.fetchBatch({ feed: feed(EXPIRED.ibge), afterNsu: 0n }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(CredentialsUnavailableSchema)[0]?.problem).toBe(CredentialsProblem.EXPIRED);
    expect(sim.counters().total).toBe(0);
  });

  it("refuses an envelope from the wrong ambiente, after one call", async () => {
    const err = await failure(client.fetchBatch({ feed: feed(MAIN.ibge, TipoNsu.DISTRIBUICAO, Ambiente.PRODUCAO), afterNsu: 0n }));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(AmbienteMismatchSchema)[0]).toMatchObject({ expected: Ambiente.PRODUCAO, received: "HOMOLOGACAO" });
    expect(sim.counters().total).toBe(1);
  });

  it("answers a municipality without credentials and malformed requests without calling the ADN", async () => {
    const none = await failure(client.fetchBatch({ feed: feed("4314902"), afterNsu: 0n }));
    expect(none.code).toBe(Code.FailedPrecondition);
    expect(none.findDetails(CredentialsUnavailableSchema)[0]?.problem).toBe(CredentialsProblem.NO_ACTIVE_CERTIFICATE);
    expect((await failure(client.fetchBatch({ feed: feed("355030"), afterNsu: 0n }))).code).toBe(Code.InvalidArgument);
    expect((await failure(client.fetchBatch({ feed: feed(MAIN.ibge, TipoNsu.UNSPECIFIED), afterNsu: 0n }))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await failure(client.fetchSingle({ feed: feed(MAIN.ibge), nsu: 0n }))).code).toBe(Code.InvalidArgument);
    expect(sim.counters().total).toBe(0);
  });

  it("exposes ADN call metrics", async () => {
    await client.fetchBatch({ feed: feed(MAIN.ibge), afterNsu: 0n });
    const text = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
    expect(text).toMatch(/malha_adn_http_requests_total\{endpoint="dfe_lote",outcome="200"[^}]*\} \d+/);
    expect(text).toMatch(/malha_adn_items_total\{kind="document"[^}]*\} \d+/);
    expect(text).toContain("malha_adn_response_bytes_total");
  });
});
