// ListFeedStatus's UF and state filters against a real store and coordinator: the store selects the rows
// in SQL (ListSyncStates `uf`, `condition`, `last_run_failed`), and each page token is bound to them.
import { randomBytes } from "node:crypto";
import { Code, ConnectError, createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoordinatorService, FeedState } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { SyncCondition } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createSyncView } from "../console/sync-view.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";

// ibge → uf; one feed each. What the test makes of each feed's durable state:
const ELIGIBLE = "3550308"; // SP, may start now (store part only: made waiting before the coordinator starts)
const WAITING_SP = "3509502"; // SP, caught up, waiting
const COOLING = "3304557"; // RJ, 429 cool-down
const FAILED = "2927408"; // BA, waiting after a failed run
const WAITING_MG = "3106200"; // MG, caught up, waiting
const INACTIVE = "5300108"; // DF, municipality inactive
const PLACES: [string, string][] = [
  [ELIGIBLE, "SP"],
  [WAITING_SP, "SP"],
  [COOLING, "RJ"],
  [FAILED, "BA"],
  [WAITING_MG, "MG"],
  [INACTIVE, "DF"],
];

let db: ThrowawayDatabase;
const procs: ServiceProcess[] = [];
let store: ReturnType<typeof createClient<typeof StoreService>>;
let coordinator: ReturnType<typeof createClient<typeof CoordinatorService>>;

const refusal = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => ConnectError.from(e),
  );

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
      active: ibge !== INACTIVE,
      feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
  const later = "NOW(3) + INTERVAL 1 HOUR";
  await db.pool.query(`UPDATE nfse_sync_state SET next_eligible_at = ${later}, last_outcome = 'caught_up' WHERE ibge IN (?)`, [
    [WAITING_SP, WAITING_MG, INACTIVE],
  ]);
  await db.pool.query(`UPDATE nfse_sync_state SET cooldown_until = ${later}, last_outcome = 'rate_limited' WHERE ibge = ?`, [COOLING]);
  await db.pool.query(`UPDATE nfse_sync_state SET next_eligible_at = ${later}, last_outcome = 'failed' WHERE ibge = ?`, [FAILED]);
}, 60_000);

afterAll(async () => {
  for (const p of procs.reverse()) p.kill("SIGKILL");
  await db?.drop();
});

const ibgesOf = (list: { feed?: { ibge: string } }[]) => list.map((s) => s.feed!.ibge);

describe("ListSyncStates filters in SQL", () => {
  it("selects by condition, UF and last run, and binds the page token to them", async () => {
    const by = async (req: Parameters<typeof store.listSyncStates>[0]) => ibgesOf((await store.listSyncStates(req)).states);
    expect(await by({ condition: SyncCondition.ELIGIBLE })).toEqual([ELIGIBLE]);
    expect(await by({ condition: SyncCondition.WAITING })).toEqual([FAILED, WAITING_MG, WAITING_SP]);
    expect(await by({ condition: SyncCondition.WAITING, lastRunFailed: true })).toEqual([FAILED]);
    expect(await by({ condition: SyncCondition.WAITING, lastRunFailed: false })).toEqual([WAITING_MG, WAITING_SP]);
    expect(await by({ condition: SyncCondition.COOLING_DOWN })).toEqual([COOLING]);
    expect(await by({ condition: SyncCondition.DISABLED })).toEqual([INACTIVE]);
    expect(await by({ condition: SyncCondition.RUNNING })).toEqual([]);
    expect(await by({ condition: SyncCondition.NOT_RUNNING })).toEqual([FAILED, WAITING_MG, COOLING, WAITING_SP, ELIGIBLE]);
    expect(await by({ uf: "SP" })).toEqual([WAITING_SP, ELIGIBLE]);
    expect(await by({ uf: "sp" })).toEqual([WAITING_SP, ELIGIBLE]);
    expect(await by({ uf: "AC" })).toEqual([]);

    const first = await store.listSyncStates({ uf: "SP", pageSize: 1 });
    expect(ibgesOf(first.states)).toEqual([WAITING_SP]);
    expect(ibgesOf((await store.listSyncStates({ uf: "SP", pageSize: 1, pageToken: first.nextPageToken })).states)).toEqual([ELIGIBLE]);
    for (const req of [
      { uf: "RJ", pageToken: first.nextPageToken },
      { uf: "SP", condition: SyncCondition.WAITING, pageToken: first.nextPageToken },
      { uf: "SP", lastRunFailed: false, pageToken: first.nextPageToken },
    ]) {
      const err = await refusal(store.listSyncStates(req));
      expect([err?.code, err?.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining("other filters")]);
    }
    const bad = await refusal(store.listSyncStates({ uf: "S1" }));
    expect([bad?.code, bad?.rawMessage]).toEqual([Code.InvalidArgument, "uf must be a two-letter state code"]);
  });
});

describe("ListFeedStatus filters", () => {
  beforeAll(async () => {
    // Nothing eligible once the coordinator runs: its first sweep must not start (and fail) a run.
    await db.pool.query("UPDATE nfse_sync_state SET next_eligible_at = NOW(3) + INTERVAL 1 HOUR WHERE ibge = ?", [ELIGIBLE]);
    const coord = await startService("coordinator", {
      NATS_URL: process.env.NATS_URL ?? "nats://127.0.0.1:14222",
      STORE_URL: procs[0]!.baseUrl,
      ADN_GATEWAY_URL: "http://127.0.0.1:1",
      COORDINATOR_LEASE_BUCKET: `leases_filters_${randomBytes(4).toString("hex")}`,
      NFSE_SYNC_INTERVAL_SECONDS: "3600",
    });
    procs.push(coord);
    coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: coord.baseUrl }));
  }, 60_000);

  it("answers a rare state or UF with exactly its feeds", async () => {
    const by = async (req: Parameters<typeof coordinator.listFeedStatus>[0]) =>
      (await coordinator.listFeedStatus(req)).statuses.map((s) => [s.feed!.ibge, FeedState[s.state]]);
    expect(await by({ state: FeedState.COOLING_DOWN })).toEqual([[COOLING, "COOLING_DOWN"]]);
    expect(await by({ state: FeedState.DISABLED })).toEqual([[INACTIVE, "DISABLED"]]);
    expect(await by({ state: FeedState.WAITING, lastRunFailed: true })).toEqual([[FAILED, "WAITING"]]);
    expect(await by({ state: FeedState.IDLE })).toEqual([]);
    expect(await by({ uf: "SP" })).toEqual([
      [WAITING_SP, "WAITING"],
      [ELIGIBLE, "WAITING"],
    ]);
    expect(await by({ uf: "MG", state: FeedState.WAITING, lastRunFailed: false })).toEqual([[WAITING_MG, "WAITING"]]);
    const bad = await refusal(coordinator.listFeedStatus({ uf: "sp" }));
    expect([bad?.code, bad?.rawMessage]).toEqual([Code.InvalidArgument, 'uf must be two capital letters, got "sp"']);
  });

  it("binds its page token to the state, the UF and the last-run filter", async () => {
    const first = await coordinator.listFeedStatus({ state: FeedState.WAITING, pageSize: 1 });
    expect(ibgesOf(first.statuses)).toEqual([FAILED]);
    const next = await coordinator.listFeedStatus({ state: FeedState.WAITING, pageSize: 10, pageToken: first.nextPageToken });
    expect(ibgesOf(next.statuses)).toEqual([WAITING_MG, WAITING_SP, ELIGIBLE]);
    for (const req of [
      { state: FeedState.IDLE },
      {},
      { state: FeedState.WAITING, uf: "SP" },
      { state: FeedState.WAITING, lastRunFailed: false },
    ]) {
      const err = await refusal(coordinator.listFeedStatus({ ...req, pageSize: 1, pageToken: first.nextPageToken }));
      expect([err?.code, err?.rawMessage]).toEqual([Code.InvalidArgument, expect.stringContaining("other filters")]);
    }
  });

  it("gives the console's Sincronização list exactly the rows of a rare filter, in one call", async () => {
    const view = createSyncView({ coordinator, store });
    const error = await view.listFeeds({ state: "error" });
    expect(error.feeds.map((f) => [f.ibge, f.uf, f.state])).toEqual([[FAILED, "BA", "error"]]);
    expect(error.nextPageToken).toBeUndefined();
    const sp = await view.listFeeds({ uf: "SP", pageSize: 1 });
    expect(sp.feeds.map((f) => f.ibge)).toEqual([WAITING_SP]);
    const rest = await view.listFeeds({ uf: "SP", pageSize: 1, pageToken: sp.nextPageToken! });
    expect(rest.feeds.map((f) => [f.ibge, f.name])).toEqual([[ELIGIBLE, `Município ${ELIGIBLE}`]]);
    expect((await view.listFeeds({ uf: "AC" })).feeds).toEqual([]);
    expect((await view.listFeeds({ state: "cooling_down" })).feeds.map((f) => f.ibge)).toEqual([COOLING]);
  });
});
