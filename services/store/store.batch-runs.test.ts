// BeginRuns / FinishRuns (decision 0036) against a real store process on a throwaway MariaDB database:
// each entry is checked and answered on its own, with the error BeginRun/FinishRun would have thrown.
import type { RowDataPacket } from "mysql2/promise";
import { Code, type ConnectError } from "@connectrpc/connect";
import { timestampDate, timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { BeginRunsResponse, FinishRunsResponse } from "../../libs/gen/malha/store/v1/store_pb.js";
import { NotEligibleSchema, RunOutcome, RunTrigger, StaleFenceSchema, SyncStatus } from "../../libs/gen/malha/store/v1/types_pb.js";
import { errorOfEntryStatus } from "../../libs/rpc/entry-errors.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { feedOf, rejection, storeClient } from "./testing/fixtures.js";

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url, STORE_PAGE_TOKEN_SECRET: "test-secret-0123456789" });
  ({ client, close } = storeClient(store.baseUrl));
  for (const ibge of ["3550308", "3304557", "3106200", "4106902", "4314902", "2927408"]) {
    await client.registerMunicipality({
      ibge,
      name: `Município ${ibge}`,
      uf: { "35": "SP", "33": "RJ", "31": "MG", "41": "PR", "43": "RS", "29": "BA" }[ibge.slice(0, 2)]!,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
});
afterAll(async () => {
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

const entry = (ibge: string, fence: bigint, holder = "coord-a/w1", trigger = RunTrigger.SCHEDULED) => ({
  feed: feedOf(ibge),
  holder,
  fenceToken: fence,
  trigger,
});

function begun(res: BeginRunsResponse, i: number) {
  const r = res.results[i]!.result;
  if (r.case !== "begun") throw new Error(`entry ${i} was not begun: ${r.case === "refused" ? r.value.message : "empty"}`);
  return r.value;
}
function refusal(res: BeginRunsResponse | FinishRunsResponse, i: number): ConnectError {
  const r = res.results[i]!.result;
  if (r.case !== "refused") throw new Error(`entry ${i} was not refused`);
  return errorOfEntryStatus(r.value);
}
const reason = (e: ConnectError) => e.findDetails(ErrorInfoSchema)[0]?.reason;

async function stateRow(ibge: string): Promise<RowDataPacket> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT * FROM nfse_sync_state WHERE ibge = ?", [ibge]);
  return rows[0]!;
}

describe("BeginRuns", () => {
  it("begins the eligible feeds and refuses the others one by one, writing nothing for them", async () => {
    // 3304557 is held with a newer fence; 3106200 must wait; 4106902 is disabled.
    await client.beginRun(entry("3304557", 5n, "coord-b/w1"));
    const waiting = await client.beginRun(entry("3106200", 1n));
    const later = new Date(Date.now() + 3_600_000);
    await client.finishRun({
      feed: feedOf("3106200"),
      runId: waiting.runId,
      fenceToken: 1n,
      outcome: RunOutcome.CAUGHT_UP,
      nextEligibleAt: timestampFromDate(later),
    });
    await client.updateMunicipality({ ibge: "4106902", disableFeeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }] });
    const heldBefore = await stateRow("3304557");
    const waitingBefore = await stateRow("3106200");

    const res = await client.beginRuns({
      runs: [
        entry("3550308", 1n),
        entry("3304557", 3n),
        entry("3106200", 2n),
        entry("4106902", 1n),
        entry("5300108", 1n),
        entry("4314902", 7n),
      ],
    });
    expect(res.results).toHaveLength(6);

    const a = begun(res, 0);
    const f = begun(res, 5);
    expect(a.runId).not.toBe(f.runId);
    expect(a.run?.fenceToken).toBe(1n);
    expect(f.run?.fenceToken).toBe(7n);
    expect((await stateRow("3550308")).current_run_id.toString()).toBe(a.runId);
    expect((await stateRow("4314902")).current_run_id.toString()).toBe(f.runId);

    const stale = refusal(res, 1);
    expect(stale.code).toBe(Code.FailedPrecondition);
    expect(stale.findDetails(StaleFenceSchema)[0]).toMatchObject({
      presentedFenceToken: 3n,
      currentFenceToken: 5n,
      currentHolder: "coord-b/w1",
    });
    const notYet = refusal(res, 2);
    expect(reason(notYet)).toBe("NOT_ELIGIBLE");
    expect(timestampDate(notYet.findDetails(NotEligibleSchema)[0]!.nextEligibleAt!).getTime()).toBe(later.getTime());
    expect(reason(refusal(res, 3))).toBe("FEED_DISABLED");
    const unknown = refusal(res, 4);
    expect(unknown.code).toBe(Code.NotFound);
    expect(reason(unknown)).toBe("MUNICIPALITY_NOT_FOUND");

    // The refused feeds' rows are as they were: nothing was written for them.
    expect(await stateRow("3304557")).toEqual(heldBefore);
    expect(await stateRow("3106200")).toEqual(waitingBefore);
  });

  it("is idempotent: the same holder and fence get the same runs back", async () => {
    const first = await client.beginRuns({ runs: [entry("2927408", 1n), entry("3550308", 1n)] });
    const again = await client.beginRuns({ runs: [entry("3550308", 1n), entry("2927408", 1n)] });
    expect(begun(again, 0).runId).toBe(begun(first, 1).runId);
    expect(begun(again, 1).runId).toBe(begun(first, 0).runId);
    const [runs] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_sync_runs WHERE ibge IN ('2927408', '3550308')");
    expect(Number(runs[0]!.n)).toBe(2);
  });

  it("closes the runs of older fences as ABANDONED, each with its own newer fence", async () => {
    const old = await client.beginRuns({ runs: [entry("2927408", 1n), entry("3550308", 1n)] });
    const res = await client.beginRuns({ runs: [entry("2927408", 4n, "coord-c/w2"), entry("3550308", 9n, "coord-c/w3")] });
    for (const [i, fence, holder] of [
      [0, 4n, "coord-c/w2"],
      [1, 9n, "coord-c/w3"],
    ] as const) {
      const previous = await client.getRun({ runId: begun(old, i).runId });
      expect(previous.run?.outcome).toBe(RunOutcome.ABANDONED);
      expect(previous.run?.errorMessage).toBe(`superseded by fence token ${fence} (${holder})`);
      expect(begun(res, i).run?.fenceToken).toBe(fence);
    }
    expect((await stateRow("3550308")).fence_holder).toBe("coord-c/w3");
  });

  it("refuses a malformed entry, a feed listed twice and more than 500 entries with INVALID_ARGUMENT naming the entry", async () => {
    const bad = await rejection(client.beginRuns({ runs: [entry("3550308", 9n, "coord-c/w3"), { ...entry("2927408", 4n), holder: "" }] }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toMatch(/^runs\[1\]: holder/);
    const zero = await rejection(client.beginRuns({ runs: [entry("3550308", 0n)] }));
    expect(zero.rawMessage).toMatch(/^runs\[0\]: fence_token/);
    const ibge = await rejection(client.beginRuns({ runs: [entry("3550308", 9n), entry("12", 1n)] }));
    expect(ibge.rawMessage).toMatch(/^runs\[1\]: invalid ibge/);
    expect(reason(ibge)).toBe("INVALID_IBGE");
    const twice = await rejection(client.beginRuns({ runs: [entry("3550308", 9n), entry("2927408", 4n), entry("3550308", 10n)] }));
    expect(twice.code).toBe(Code.InvalidArgument);
    expect(twice.rawMessage).toBe("runs[2].feed repeats runs[0].feed");
    const many = await rejection(client.beginRuns({ runs: Array.from({ length: 501 }, () => entry("3550308", 9n)) }));
    expect(many.code).toBe(Code.InvalidArgument);
    expect((await client.beginRuns({ runs: [] })).results).toEqual([]);
  });
});

describe("FinishRuns", () => {
  it("finishes each run on its own: next_eligible_at only moves forward, a repeat is a no-op, a stale fence or another outcome is refused", async () => {
    const res = await client.beginRuns({ runs: [entry("2927408", 11n), entry("3550308", 11n), entry("4314902", 11n)] });
    const [r0, r1, r2] = [0, 1, 2].map((i) => begun(res, i).runId);
    // A takeover of 4314902 after the begin: only that feed's finish is refused.
    await client.beginRun(entry("4314902", 12n, "coord-d/w1"));
    const far = new Date(Date.now() + 7_200_000);
    await db.pool.query("UPDATE nfse_sync_state SET next_eligible_at = ? WHERE ibge = '3550308'", [far]);
    const soon = new Date(Date.now() + 60_000);
    const finish = [
      { feed: feedOf("2927408"), runId: r0!, fenceToken: 11n, outcome: RunOutcome.CAUGHT_UP, nextEligibleAt: timestampFromDate(soon) },
      { feed: feedOf("3550308"), runId: r1!, fenceToken: 11n, outcome: RunOutcome.CAUGHT_UP, nextEligibleAt: timestampFromDate(soon) },
      { feed: feedOf("4314902"), runId: r2!, fenceToken: 11n, outcome: RunOutcome.CAUGHT_UP, nextEligibleAt: timestampFromDate(soon) },
    ];
    const done = await client.finishRuns({ runs: finish });
    const ok = (i: number) => {
      const r = done.results[i]!.result;
      if (r.case !== "finished") throw new Error(`entry ${i} not finished`);
      return r.value;
    };
    expect(ok(0).run?.outcome).toBe(RunOutcome.CAUGHT_UP);
    expect(ok(0).state).toMatchObject({ status: SyncStatus.IDLE });
    expect(timestampDate(ok(0).state!.nextEligibleAt!).getTime()).toBe(soon.getTime());
    expect(timestampDate(ok(1).state!.nextEligibleAt!).getTime()).toBe(far.getTime());
    const stale = refusal(done, 2);
    expect(stale.findDetails(StaleFenceSchema)[0]).toMatchObject({ presentedFenceToken: 11n, currentFenceToken: 12n });
    expect((await stateRow("4314902")).status).toBe("running");

    // The same FinishRun again is a no-op; another outcome for a finished run is RUN_NOT_RUNNING.
    const again = await client.finishRuns({
      runs: [finish[1]!, { ...finish[0]!, outcome: RunOutcome.YIELDED, nextEligibleAt: undefined }],
    });
    const repeat = again.results[0]!.result;
    expect(repeat.case).toBe("finished");
    expect(repeat.case === "finished" && repeat.value.run?.finishedAt).toEqual(ok(1).run?.finishedAt);
    expect(reason(refusal(again, 1))).toBe("RUN_NOT_RUNNING");
  });

  it("answers an unknown run NOT_FOUND and a run of another feed INVALID_ARGUMENT, per entry; malformed entries fail the call", async () => {
    const res = await client.beginRuns({ runs: [entry("3304557", 13n)] });
    const runId = begun(res, 0).runId;
    const done = await client.finishRuns({
      runs: [
        { feed: feedOf("3304557"), runId: "999999999", fenceToken: 13n, outcome: RunOutcome.YIELDED },
        { feed: feedOf("2927408"), runId, fenceToken: 13n, outcome: RunOutcome.YIELDED },
      ],
    });
    expect(reason(refusal(done, 0))).toBe("RUN_NOT_FOUND");
    expect(refusal(done, 1).code).toBe(Code.InvalidArgument);
    expect((await stateRow("3304557")).status).toBe("running");
    const right = await client.finishRuns({ runs: [{ feed: feedOf("3304557"), runId, fenceToken: 13n, outcome: RunOutcome.YIELDED }] });
    expect(right.results[0]!.result.case).toBe("finished");

    const caughtUp = await rejection(
      client.finishRuns({ runs: [{ feed: feedOf("3304557"), runId, fenceToken: 13n, outcome: RunOutcome.CAUGHT_UP }] }),
    );
    expect(caughtUp.rawMessage).toBe("runs[0]: next_eligible_at is required for CAUGHT_UP");
    const shortYield = await rejection(
      client.finishRuns({
        runs: [{ feed: feedOf("3304557"), runId, fenceToken: 13n, outcome: RunOutcome.YIELDED, endedAtShortPage: true }],
      }),
    );
    expect(shortYield.code).toBe(Code.InvalidArgument);
    expect(shortYield.rawMessage).toBe("runs[0]: ended_at_short_page is only for CAUGHT_UP, not YIELDED");
    const twice = await rejection(
      client.finishRuns({
        runs: [
          { feed: feedOf("3304557"), runId, fenceToken: 13n, outcome: RunOutcome.YIELDED },
          { feed: feedOf("3304557"), runId, fenceToken: 13n, outcome: RunOutcome.YIELDED },
        ],
      }),
    );
    expect(twice.rawMessage).toBe("runs[1].run_id repeats runs[0].run_id");
  });
});

describe("BeginRuns and FinishRuns, brief (decision 0064)", () => {
  it("leave the run records and the state out of their answers, write exactly what the full calls write, and still refuse per entry", async () => {
    const ibge = "5300108";
    await client.registerMunicipality({
      ibge,
      name: "Brasília",
      uf: "DF",
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
    const begin = await client.beginRuns({ runs: [entry(ibge, 21n)], brief: true });
    const b = begun(begin, 0);
    expect(b.run).toBeUndefined();
    expect(b.runId).toMatch(/^\d+$/);
    expect(b.cursor).toBe(0n);
    // The full answer of the same (idempotent) begin names the same run.
    expect(begun(await client.beginRuns({ runs: [entry(ibge, 21n)] }), 0).run?.runId).toBe(b.runId);

    const soon = new Date(Date.now() + 60_000);
    const finish = {
      feed: feedOf(ibge),
      runId: b.runId,
      fenceToken: 21n,
      outcome: RunOutcome.CAUGHT_UP,
      nextEligibleAt: timestampFromDate(soon),
    };
    const stale = { ...finish, fenceToken: 20n };
    const refused = await client.finishRuns({ runs: [stale], brief: true });
    expect(refusal(refused, 0).findDetails(StaleFenceSchema)[0]).toMatchObject({ presentedFenceToken: 20n, currentFenceToken: 21n });
    expect((await stateRow(ibge)).status).toBe("running");

    const done = await client.finishRuns({ runs: [finish], brief: true });
    const r = done.results[0]!.result;
    expect(r.case).toBe("finished");
    expect(r.case === "finished" && r.value.run).toBeUndefined();
    expect(r.case === "finished" && r.value.state).toBeUndefined();
    const state = (await client.getSyncState({ feed: feedOf(ibge) })).state!;
    expect(state.status).toBe(SyncStatus.IDLE);
    expect(timestampDate(state.nextEligibleAt!).getTime()).toBe(soon.getTime());
    const [[run]] = await db.pool.query<RowDataPacket[]>("SELECT outcome, finished_at FROM nfse_sync_runs WHERE id = ?", [b.runId]);
    expect(run).toMatchObject({ outcome: "caught_up" });
    expect(run!.finished_at).not.toBeNull();
  });
});
