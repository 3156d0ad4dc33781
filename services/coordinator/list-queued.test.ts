// ListFeedStatus's QUEUED filter against a real store and coordinator: the queue lives in the replica's
// memory, so the page is read from it (queued-page.ts), not from every feed the store has. The ADN
// gateway is a socket that accepts and never answers: the one worker of each pool stays busy with the
// first feed, and the others stay queued for as long as the test looks.
import { randomBytes } from "node:crypto";
import { createServer, type Server, type Socket } from "node:net";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoordinatorService, FeedState } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { createSyncView } from "../console/sync-view.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";

// Waiting feeds that sort before every queued one: a page read from the store's rows would hold none.
const WAITING = ["1100015", "1100023", "1100031", "1100049", "1100056", "1100064"];
const RUNS = "3106200"; // MG, the first eligible feed: taken by the only worker
const RJ = "3304557"; // queued
const FAILED_SP = "3509502"; // queued, its last run failed
const SP = "3550308"; // queued
const PLACES: [string, string][] = [
  ...WAITING.map((ibge): [string, string] => [ibge, "RO"]),
  [RUNS, "MG"],
  [RJ, "RJ"],
  [FAILED_SP, "SP"],
  [SP, "SP"],
];

let db: ThrowawayDatabase;
let blackHole: Server;
const held: Socket[] = [];
const procs: ServiceProcess[] = [];
let store: ReturnType<typeof createClient<typeof StoreService>>;
let coordinator: ReturnType<typeof createClient<typeof CoordinatorService>>;

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );
const ibgesOf = (list: { feed?: { ibge: string } }[]) => list.map((s) => s.feed!.ibge);

beforeAll(async () => {
  db = await createThrowawayDatabase();
  const storeProc = await startService("store", { MYSQL_URL: db.url });
  procs.push(storeProc);
  store = createClient(StoreService, createGrpcTransport({ baseUrl: storeProc.baseUrl }));
  for (const [ibge, uf] of PLACES) {
    await store.registerMunicipality({
      ibge,
      name: `Município ${ibge}`,
      uf,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
  await db.pool.query(
    "UPDATE nfse_sync_state SET next_eligible_at = NOW(3) + INTERVAL 1 HOUR, last_outcome = 'caught_up' WHERE ibge IN (?)",
    [WAITING],
  );
  await db.pool.query("UPDATE nfse_sync_state SET last_outcome = 'failed' WHERE ibge = ?", [FAILED_SP]);

  blackHole = createServer((socket) => void held.push(socket));
  await new Promise<void>((resolve) => blackHole.listen(0, "127.0.0.1", resolve));
  const port = (blackHole.address() as { port: number }).port;
  const coord = await startService("coordinator", {
    NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:14222",
    STORE_URL: storeProc.baseUrl,
    ADN_GATEWAY_URL: `http://127.0.0.1:${port}`,
    COORDINATOR_LEASE_BUCKET: `leases_queued_${randomBytes(4).toString("hex")}`,
    NFSE_SYNC_INTERVAL_SECONDS: "3600",
    NFSE_WORKER_CONCURRENCY: "1",
    NFSE_BOOTSTRAP_CONCURRENCY: "1",
    NFSE_RECONCILIATION_BUDGET_PER_HOUR: "0",
  });
  procs.push(coord);
  coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: coord.baseUrl }));
  // The start-up sweep queues the four eligible feeds; the first one's run then waits on the gateway.
  for (let tries = 0; ; tries++) {
    const states = (await coordinator.listFeedStatus({ pageSize: 100 })).statuses.map((s) => [s.feed!.ibge, s.state]);
    const running = states.filter(([, s]) => s === FeedState.RUNNING).map(([ibge]) => ibge);
    if (running.length === 1 && states.filter(([, s]) => s === FeedState.QUEUED).length === 3) break;
    if (tries > 300) throw new Error(`the sweep did not queue the eligible feeds: ${JSON.stringify(states)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}, 90_000);

afterAll(async () => {
  for (const p of procs.reverse()) p.kill("SIGKILL");
  for (const s of held) s.destroy();
  blackHole?.close();
  await db?.drop();
});

describe("ListFeedStatus QUEUED", () => {
  it("reads the replica's queue: a page of three holds the three queued feeds, past every waiting one", async () => {
    const page = await coordinator.listFeedStatus({ state: FeedState.QUEUED, pageSize: 3 });
    expect(page.statuses.map((s) => [s.feed!.ibge, FeedState[s.state]])).toEqual([
      [RJ, "QUEUED"],
      [FAILED_SP, "QUEUED"],
      [SP, "QUEUED"],
    ]);
    expect(page.nextPageToken).toBe("");
    expect(
      (await coordinator.getFeedStatus({ feed: { ibge: RUNS, ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO } })).status?.state,
    ).toBe(FeedState.RUNNING);
  });

  it("applies UF, last run and ibge in the store, for the queued feeds only", async () => {
    const by = async (req: Parameters<typeof coordinator.listFeedStatus>[0]) =>
      ibgesOf((await coordinator.listFeedStatus({ ...req, state: FeedState.QUEUED })).statuses);
    expect(await by({ uf: "SP" })).toEqual([FAILED_SP, SP]);
    expect(await by({ uf: "RO" })).toEqual([]);
    expect(await by({ uf: "MG" })).toEqual([]);
    expect(await by({ lastRunFailed: true })).toEqual([FAILED_SP]);
    expect(await by({ lastRunFailed: false })).toEqual([RJ, SP]);
    expect(await by({ ibge: SP })).toEqual([SP]);
    expect(await by({ ibge: SP, ambiente: Ambiente.PRODUCAO_RESTRITA })).toEqual([]);
  });

  it("pages the queue with a token bound to its filters, refused by the other states' listing and vice versa", async () => {
    const first = await coordinator.listFeedStatus({ state: FeedState.QUEUED, pageSize: 2 });
    expect(ibgesOf(first.statuses)).toEqual([RJ, FAILED_SP]);
    const rest = await coordinator.listFeedStatus({ state: FeedState.QUEUED, pageSize: 2, pageToken: first.nextPageToken });
    expect(ibgesOf(rest.statuses)).toEqual([SP]);
    expect(rest.nextPageToken).toBe("");

    for (const req of [
      { state: FeedState.QUEUED, uf: "SP" },
      { state: FeedState.QUEUED, lastRunFailed: true },
      { state: FeedState.WAITING },
      {},
    ]) {
      const err = await refusal(coordinator.listFeedStatus({ ...req, pageSize: 2, pageToken: first.nextPageToken }));
      expect(err?.code).toBe(Code.InvalidArgument);
      expect(err?.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_PAGE_TOKEN");
    }
    const waiting = await coordinator.listFeedStatus({ state: FeedState.WAITING, pageSize: 1 });
    const misuse = await refusal(coordinator.listFeedStatus({ state: FeedState.QUEUED, pageToken: waiting.nextPageToken }));
    expect([misuse?.code, misuse?.findDetails(ErrorInfoSchema)[0]?.reason]).toEqual([Code.InvalidArgument, "INVALID_PAGE_TOKEN"]);
    const negative = await refusal(coordinator.listFeedStatus({ state: FeedState.QUEUED, pageSize: -1 }));
    expect([negative?.code, negative?.rawMessage]).toEqual([Code.InvalidArgument, "page_size must not be negative (got -1)"]);
  });

  it("gives the console's Sincronização list the queued feeds in one call", async () => {
    const view = createSyncView({ coordinator, store });
    const queued = await view.listFeeds({ state: "queued" });
    expect(queued.feeds.map((f) => [f.ibge, f.uf, f.state])).toEqual([
      [RJ, "RJ", "queued"],
      [FAILED_SP, "SP", "queued"],
      [SP, "SP", "queued"],
    ]);
    expect(queued.nextPageToken).toBeUndefined();
    expect((await view.listFeeds({ state: "queued", uf: "SP", pageSize: 1 })).feeds.map((f) => f.ibge)).toEqual([FAILED_SP]);
  });
});
