// FeedDeliveries against a real adn-gateway process (and the ADN simulator, a store on a throwaway
// database): the runs' deliveries share a DeliverFeeds stream, a stream takes new deliveries only for
// streamOpenMs and then closes once its deliveries ended, a delivery that outlives deliveryTimeoutMs fails
// with DEADLINE_EXCEEDED and is cancelled at the gateway, and a gateway killed under a stream fails its open
// deliveries with UNAVAILABLE while the next delivery, once the gateway is back, opens a new stream. A
// gateway shut down gracefully runs its open deliveries to their end and refuses new ones, which start
// again on a new connection, at the gateway that took its place (decision 0045).
import http2 from "node:http2";
import { type AddressInfo, connect } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { connectNodeAdapter, createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { entryStatusOf } from "../../libs/rpc/entry-errors.js";
import { serverClosing } from "../../libs/rpc/errors.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { scrape } from "../../test/support/prom-text.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { type FeedDelivery, FeedDeliveries } from "./feed-delivery.js";

const ROTATED = { ibge: "3550308", cnpj: "11222333000181", uf: "SP" };
const SLOW = { ibge: "3304557", cnpj: "22333444000181", uf: "RJ" };
const KILLED = { ibge: "3106200", cnpj: "33444555000181", uf: "MG" };
const HELD = { ibge: "4106902", cnpj: "44555666000181", uf: "PR" };
const MOVED = { ibge: "5300108", cnpj: "55666777000181", uf: "DF" };
const ALL = [ROTATED, SLOW, KILLED, HELD, MOVED];

let adn: TestAdn;
let db: ThrowawayDatabase;
let store: ServiceProcess;
let gateway: ServiceProcess;
const storeClient = () => createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
const gatewayEnv = () => ({ ...adn.gatewayEnv, STORE_URL: store.baseUrl, NFSE_MAX_RETRIES: "0" });

beforeAll(async () => {
  adn = await startTestAdn(ALL, { seed: 5, feedSize: 120 });
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  gateway = await startService("adn-gateway", gatewayEnv());
  for (const m of ALL) {
    await storeClient().registerMunicipality({
      ibge: m.ibge,
      name: `Município ${m.ibge}`,
      uf: m.uf,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
});

afterAll(async () => {
  gateway?.kill("SIGKILL");
  store?.kill("SIGKILL");
  await db?.drop();
  await adn?.close();
});

beforeEach(() => adn.sim.reset());

const feed = (ibge: string) => ({ ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });
let fence = 0n;

/** A run begun in the store and its delivery opened (each with a fence newer than the last). */
async function open(deliveries: FeedDeliveries, ibge: string, signal = new AbortController().signal): Promise<FeedDelivery> {
  const fenceToken = ++fence;
  const run = await storeClient().beginRun({
    feed: feed(ibge),
    holder: `test-${fenceToken}`,
    fenceToken,
    trigger: RunTrigger.SCHEDULED,
    pool: SyncPool.BOOTSTRAP,
  });
  return deliveries.open({ feed: feed(ibge), afterNsu: run.cursor, runId: run.runId, fenceToken }, signal);
}

/** Takes a delivery's reports to its end: how many, or its error. */
async function drain(d: FeedDelivery): Promise<{ reports: number; error?: ConnectError }> {
  let reports = 0;
  try {
    while (await d.next()) reports++;
  } catch (err) {
    return { reports, error: ConnectError.from(err) };
  }
  return { reports };
}

const handled = async (service: ServiceProcess, code: string) =>
  (await scrape(service.metricsPort!)).find(
    (m) => m.name === "malha_rpc_handled_total" && m.labels.method === "DeliverFeeds" && m.labels.code === code,
  )?.value ?? 0;
const deliveriesEnded = async (code: string, at = gateway) =>
  (await scrape(at.metricsPort!)).find((m) => m.name === "malha_adn_deliveries_total" && m.labels.code === code)?.value ?? 0;
const pagesOf = (ibge: string) => Math.ceil(adn.sim.feed(ibge).entries.filter((e) => !e.hidden).length / 50) + 1;
const refusesConnections = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => (socket.destroy(), resolve(false)));
    socket.once("error", () => resolve(true));
  });

describe("FeedDeliveries", () => {
  it("shares a stream between deliveries, opens a new one after streamOpenMs, and closes the old one once its deliveries ended", async () => {
    const client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: gateway.baseUrl }));
    const deliveries = new FeedDeliveries(client, { streamOpenMs: 3_000, deliveryTimeoutMs: 60_000 });
    const streamsEnded = await handled(gateway, "OK");
    const pages = pagesOf(ROTATED.ibge);

    const firstDelivery = await open(deliveries, ROTATED.ibge);
    // The stream opened with the first delivery.
    const openedAt = Date.now();
    const first = await drain(firstDelivery);
    expect(first).toEqual({ reports: pages });
    // Caught up: a second run of the feed on the same stream gets only the "nothing newer" page.
    expect(await drain(await open(deliveries, ROTATED.ibge))).toEqual({ reports: 1 });
    expect(deliveries.streamCount).toBe(1);
    expect(await handled(gateway, "OK")).toBe(streamsEnded);

    await new Promise((r) => setTimeout(r, Math.max(0, openedAt + 3_100 - Date.now())));
    expect(await drain(await open(deliveries, ROTATED.ibge))).toEqual({ reports: 1 });
    // The first stream, past its window and empty, was closed by its caller and ended with OK at the gateway.
    for (let i = 0; i < 100 && (await handled(gateway, "OK")) === streamsEnded; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await handled(gateway, "OK")).toBe(streamsEnded + 1);
    expect(deliveries.streamCount).toBe(1);
    deliveries.close();
  });

  it("fails a delivery that outlives deliveryTimeoutMs with DEADLINE_EXCEEDED, and the gateway abandons it", async () => {
    adn.sim.configure({ latencyMs: 3_000 });
    const client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: gateway.baseUrl }));
    const deliveries = new FeedDeliveries(client, { streamOpenMs: 60_000, deliveryTimeoutMs: 300 });
    const cancelled = await deliveriesEnded("Canceled");
    const result = await drain(await open(deliveries, SLOW.ibge));
    expect(result.error?.code).toBe(Code.DeadlineExceeded);
    for (let i = 0; i < 100 && (await deliveriesEnded("Canceled")) === cancelled; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await deliveriesEnded("Canceled")).toBe(cancelled + 1);
    deliveries.close();
  });

  it("fails the open deliveries with UNAVAILABLE when the gateway is killed, and runs the next one on a new stream once it is back", async () => {
    const own = await startService("adn-gateway", gatewayEnv());
    try {
      adn.sim.configure({ latencyMs: 2_000 });
      const client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: own.baseUrl }));
      const deliveries = new FeedDeliveries(client, { streamOpenMs: 60_000, deliveryTimeoutMs: 60_000 });
      const held = drain(await open(deliveries, KILLED.ibge));
      // The delivery is open at the gateway, waiting for the ADN's answer.
      for (let i = 0; i < 200 && (adn.sim.counters().byMunicipio[KILLED.ibge] ?? 0) === 0; i++) await new Promise((r) => setTimeout(r, 10));
      own.kill("SIGKILL");
      await own.exited;
      const failed = await held;
      expect(failed.error?.code).toBe(Code.Unavailable);
      expect(deliveries.streamCount).toBe(0);

      adn.sim.configure({ latencyMs: 0 });
      const back = await startService("adn-gateway", { ...gatewayEnv(), GRPC_PORT: String(own.port) });
      try {
        const next = await drain(await open(deliveries, KILLED.ibge));
        expect(next.error).toBeUndefined();
        expect(next.reports).toBeGreaterThanOrEqual(1);
        deliveries.close();
      } finally {
        back.kill("SIGKILL");
      }
    } finally {
      own.kill("SIGKILL");
    }
  });

  it("moves off a gateway that shuts down: its open delivery runs to the end there, the next goes to the gateway that took its port, and the first exits at once", async () => {
    const own = await startService("adn-gateway", { ...gatewayEnv(), SHUTDOWN_TIMEOUT_SECONDS: "60" });
    let back: ServiceProcess | undefined;
    try {
      const client = createClient(AdnGatewayService, createGrpcTransport({ baseUrl: own.baseUrl }));
      const deliveries = new FeedDeliveries(client, { streamOpenMs: 60_000, deliveryTimeoutMs: 60_000 });
      expect((await drain(await open(deliveries, ROTATED.ibge))).error).toBeUndefined();
      // Not read: the gateway applies two pages and then waits for their acknowledgement, so the delivery
      // stays open across the shutdown.
      const held = await open(deliveries, HELD.ibge);
      for (let i = 0; i < 200 && (adn.sim.counters().byMunicipio[HELD.ibge] ?? 0) === 0; i++) await new Promise((r) => setTimeout(r, 10));

      own.kill("SIGTERM");
      for (let i = 0; i < 300 && !(await refusesConnections(own.port)); i++) await new Promise((r) => setTimeout(r, 10));
      back = await startService("adn-gateway", { ...gatewayEnv(), GRPC_PORT: String(own.port) });

      // The closing gateway said so on the stream still open there: the next delivery opens a new one, on a
      // new connection, which reaches the gateway that took the port.
      expect(await drain(await open(deliveries, MOVED.ibge))).toEqual({ reports: pagesOf(MOVED.ibge) });
      expect(await deliveriesEnded("OK", back)).toBe(1);
      expect(await drain(held)).toEqual({ reports: pagesOf(HELD.ibge) });
      // Its last delivery ended, the coordinator closed the stream, and the gateway exited without waiting out its timeout.
      expect((await own.exited).code).toBe(0);
      expect(own.lines.filter((l) => l.includes("shutdown timeout"))).toEqual([]);
      expect(deliveries.streamCount).toBe(1);
      deliveries.close();
    } finally {
      own.kill("SIGKILL");
      back?.kill("SIGKILL");
    }
  });

  it("starts a delivery again on a new stream when a closing gateway refused its start before it heard anything, and only then", async () => {
    // A gateway's side of the protocol, scripted: the first stream refuses every start as a closing
    // server does (a start that crossed its `closing`), or after one report when `reportFirst` is set; the
    // next streams end each start with OK.
    const starts: { stream: number; runId: string }[] = [];
    let streams = 0;
    let reportFirst = false;
    const server = http2.createServer(
      connectNodeAdapter({
        routes: (router) =>
          router.service(AdnGatewayService, {
            async *deliverFeeds(requests) {
              const stream = ++streams;
              for await (const m of requests) {
                if (m.part.case !== "start") continue;
                starts.push({ stream, runId: m.part.value.runId });
                if (stream > 1) yield { delivery: m.delivery, part: { case: "end", value: { code: 0 } } };
                else {
                  if (reportFirst) yield { delivery: m.delivery, part: { case: "report", value: { page: 1n } } };
                  yield { delivery: m.delivery, part: { case: "end", value: entryStatusOf(serverClosing("closing")) } };
                }
              }
            },
          }),
      }),
    );
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    try {
      const moved = new FeedDeliveries(createClient(AdnGatewayService, createGrpcTransport({ baseUrl })));
      const d = moved.open({ feed: feed(MOVED.ibge), runId: "run-moved", fenceToken: 1n }, new AbortController().signal);
      expect(await drain(d)).toEqual({ reports: 0 });
      expect(starts).toEqual([
        { stream: 1, runId: "run-moved" },
        { stream: 2, runId: "run-moved" },
      ]);
      moved.close();

      // A refusal after a report is the delivery's end like any other error: it is not started again.
      streams = 0;
      starts.length = 0;
      reportFirst = true;
      const failed = new FeedDeliveries(createClient(AdnGatewayService, createGrpcTransport({ baseUrl })));
      const result = await drain(
        failed.open({ feed: feed(MOVED.ibge), runId: "run-failed", fenceToken: 1n }, new AbortController().signal),
      );
      expect(result.reports).toBe(1);
      expect(result.error?.code).toBe(Code.Unavailable);
      expect(starts).toEqual([{ stream: 1, runId: "run-failed" }]);
      failed.close();
    } finally {
      server.close();
    }
  });
});
