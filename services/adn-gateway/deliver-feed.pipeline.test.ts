// A delivery's next page goes to the store before the answer for the one before it (decision 0052), here
// in this process against the ADN simulator over mTLS and a real store process: the two pages are in the
// store's hands at once, and each is written once, in NSU order. Between the two a reordering store
// client stands for what two store replicas or an overtaking call can do — the page sent ahead arrives
// first: the store refuses it (ABORTED PREDECESSOR_NOT_APPLIED, nothing written) and the delivery sends
// it again once the page it follows is answered.
import { ConnectError, createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AdnHttpClient } from "../../libs/adn/http.js";
import { EnvReader } from "../../libs/config/env.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { BatchStatus, type DeliverFeedReport } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createLogger } from "../../libs/log/logger.js";
import { storedNsusIn } from "../../test/support/sync-checks.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { startTestAdn, type TestAdn } from "../../tools/adn-sim/index.js";
import { registerMunicipalities } from "../store/testing/fixtures.js";
import { readGatewayConfig } from "./config.js";
import { Cooldowns } from "./cooldown.js";
import { DirectoryCredentialSource } from "./credentials-dir.js";
import { DeliveryControl, deliverFeed } from "./deliver-feed.js";
import { AdnGateway } from "./gateway.js";
import { noMetrics } from "./metrics.js";
import type { PageApply } from "./page-apply.js";

const IN_ORDER = { ibge: "3550308", cnpj: "11222333000181", uf: "SP" };
const REORDERED = { ibge: "3304557", cnpj: "22333444000181", uf: "RJ" };
const ALL = [IN_ORDER, REORDERED];

let adn: TestAdn;
let db: ThrowawayDatabase;
let store: ServiceProcess;
let storeClient: Client<typeof StoreService>;
let gateway: AdnGateway;
let credentials: DirectoryCredentialSource;
let http: AdnHttpClient;

beforeAll(async () => {
  adn = await startTestAdn(ALL, { seed: 11, feedSize: 400 });
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  storeClient = createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
  await registerMunicipalities(storeClient, ALL, Ambiente.PRODUCAO_RESTRITA);
  const config = readGatewayConfig(new EnvReader({ ...adn.gatewayEnv, NFSE_MAX_RETRIES: "0" }));
  credentials = new DirectoryCredentialSource(adn.credentialsDir, { refreshMs: 0 });
  http = new AdnHttpClient({
    ...(config.trustedCa ? { trustedCa: config.trustedCa } : {}),
    maxResponseBytes: config.maxResponseBytes,
    idlePoolMs: config.idlePoolMs,
    maxTlsContexts: config.maxTlsContexts,
  });
  const log = createLogger({ service: "adn-gateway", level: "silent" });
  gateway = new AdnGateway({ config, credentials, http, cooldowns: new Cooldowns(config.rateLimitCooldownMs), metrics: noMetrics, log });
});

afterAll(async () => {
  credentials?.close();
  await http?.close();
  store?.kill("SIGKILL");
  await db?.drop();
  await adn?.close();
});

const feed = (ibge: string) => ({ ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });
const visible = (ibge: string) =>
  adn.sim
    .feed(ibge)
    .entries.filter((e) => !e.hidden)
    .map((e) => e.nsu);

const storedNsus = (ibge: string) => storedNsusIn(db.pool, ibge);

interface Call {
  n: number;
  newCursor: bigint;
  followsCursor: bigint | undefined;
  /** "applied", or the refusal's ErrorInfo reason (its message when it has none). */
  outcome?: string;
}

/**
 * The store's ApplyBatch, one call per page, recording each call. `hold(k)` returns a promise page k's
 * call waits for before it leaves (none: it leaves at once).
 */
function recordingStore(hold: (k: number, calls: Call[]) => Promise<void> | undefined) {
  const calls: Call[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const apply: PageApply = {
    async apply(request) {
      const call: Call = { n: calls.length + 1, newCursor: request.newCursor ?? 0n, followsCursor: request.followsCursor };
      calls.push(call);
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      try {
        await hold(call.n, calls);
        const answer = await storeClient.applyBatch(request);
        call.outcome = "applied";
        return answer;
      } catch (err) {
        const e = ConnectError.from(err);
        call.outcome = e.findDetails(ErrorInfoSchema)[0]?.reason ?? e.message;
        throw err;
      } finally {
        inFlight--;
      }
    },
    close: async () => undefined,
  };
  return { apply, calls, maxInFlight: () => maxInFlight };
}

async function deliverAll(ibge: string, store: PageApply): Promise<DeliverFeedReport[]> {
  const run = await storeClient.beginRun({
    feed: feed(ibge),
    holder: "test",
    fenceToken: 1n,
    trigger: RunTrigger.SCHEDULED,
    pool: SyncPool.BOOTSTRAP,
  });
  const caller = new DeliveryControl();
  const reports: DeliverFeedReport[] = [];
  const start = { feed: feed(ibge), runId: run.runId, fenceToken: 1n, afterNsu: run.cursor } as never;
  for await (const report of deliverFeed(
    { gateway, store, log: createLogger({ service: "test", level: "silent" }), maxBatchBytes: 15 * 1024 * 1024 },
    start,
    caller,
    new AbortController().signal,
  )) {
    reports.push(report as DeliverFeedReport);
    caller.ack(BigInt(reports.length));
  }
  return reports;
}

describe("deliverFeed with a page sent ahead", () => {
  it("has the next page in the store's hands before the answer for the one before it, and writes every page once, in order", async () => {
    const expected = visible(IN_ORDER.ibge);
    // Page 1's call waits (at most 5 s) until page 2's has left: the gateway does not wait for answer 1.
    let secondLeft: () => void = () => undefined;
    const second = new Promise<void>((resolve) => (secondLeft = resolve));
    const recorded = recordingStore((k) => {
      if (k === 2) secondLeft();
      return k === 1 ? Promise.race([second, new Promise<void>((r) => setTimeout(r, 5000))]) : undefined;
    });
    const reports = await deliverAll(IN_ORDER.ibge, recorded.apply);

    expect(recorded.maxInFlight()).toBe(2);
    expect(recorded.calls[0]!.followsCursor).toBeUndefined();
    expect(recorded.calls[1]!.followsCursor).toBe(expected[49]);
    expect(await storedNsus(IN_ORDER.ibge)).toEqual(expected);
    const pages = Math.ceil(expected.length / 50);
    expect(reports.map((r) => r.page)).toEqual(Array.from({ length: pages + 1 }, (_, i) => BigInt(i + 1)));
    expect(reports.at(-1)!.head!.status).toBe(BatchStatus.END_OF_STREAM);
    expect(reports.slice(0, -1).map((r) => r.cursor)).toEqual(
      Array.from({ length: pages }, (_, i) => expected[Math.min(50 * (i + 1), expected.length) - 1]),
    );
  });

  it("sends a page again when it reached the store before the page it follows: refused there, then written after it", async () => {
    const expected = visible(REORDERED.ibge);
    // Page 1's call leaves only after page 2's answer: page 2 arrives first.
    let secondAnswered: () => void = () => undefined;
    const answered = new Promise<void>((resolve) => (secondAnswered = resolve));
    const recorded = recordingStore((k, calls) => {
      if (k === 1) return Promise.race([answered, new Promise<void>((r) => setTimeout(r, 5000))]);
      if (k === 2)
        void (async () => {
          while (calls[1]!.outcome === undefined) await new Promise((r) => setTimeout(r, 5));
          secondAnswered();
        })();
      return undefined;
    });
    const reports = await deliverAll(REORDERED.ibge, recorded.apply);

    expect(recorded.calls[1]!.outcome).toBe("PREDECESSOR_NOT_APPLIED");
    // Each page refused so is sent again, without follows_cursor, and written; no page is written twice.
    const refused = recorded.calls.filter((c) => c.outcome !== "applied");
    expect(refused.every((c) => c.outcome === "PREDECESSOR_NOT_APPLIED")).toBe(true);
    for (const r of refused) {
      expect(
        recorded.calls.find((c) => c.n > r.n && c.newCursor === r.newCursor && c.outcome === "applied")?.followsCursor,
      ).toBeUndefined();
    }
    const applied = recorded.calls.filter((c) => c.outcome === "applied").map((c) => c.newCursor);
    expect(applied).toEqual([...new Set(applied)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
    expect(applied).toHaveLength(Math.ceil(expected.length / 50));
    expect(await storedNsus(REORDERED.ibge)).toEqual(expected);
    expect(reports.at(-1)!.head!.status).toBe(BatchStatus.END_OF_STREAM);
    expect(reports[1]!.cursor).toBe(expected[99]);
  });
});
