// ApplyBatches (docs/decisions/0040-pages-of-many-feeds-in-one-transaction.md) against a real store
// process on a throwaway MariaDB database: each page is parsed, decoded and checked as ApplyBatch does
// it and answered on its own — applied, or refused with the very code, message and details ApplyBatch
// would have returned — and one page's refusal never fails the others.
import type { RowDataPacket } from "mysql2/promise";
import { Code, type ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import type { ApplyBatchesResponse } from "../../libs/gen/malha/store/v1/store_pb.js";
import { StaleFenceSchema } from "../../libs/gen/malha/store/v1/types_pb.js";
import { errorOfEntryStatus } from "../../libs/rpc/entry-errors.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { chaveOf, docItem, feedOf, registerWithRuns, rejection, storeClient } from "./testing/fixtures.js";

const IBGES = ["3550308", "3304557", "3106200", "4106902", "5300108", "4314902", "2304400"];

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;
let runIds: Map<string, string>;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  ({ client, close } = storeClient(store.baseUrl));
  runIds = await registerWithRuns(client, IBGES, "coord-a/w1", 4n);
});
afterAll(async () => {
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

const pageOf = (ibge: string, nsu: number, n: number, fenceToken = 4n) => ({
  feed: feedOf(ibge),
  runId: runIds.get(ibge)!,
  fenceToken,
  items: [docItem(nsu, n)],
  newCursor: BigInt(nsu),
});

function refusal(res: ApplyBatchesResponse, i: number) {
  const r = res.results[i]!.result;
  if (r.case !== "refused") throw new Error(`entry ${i} was not refused`);
  return errorOfEntryStatus(r.value);
}

async function storedChaves(ibge: string): Promise<string[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT chave FROM nfse_documentos_${ibge} ORDER BY nsu`);
  return rows.map((r) => String(r.chave));
}

describe("ApplyBatches", () => {
  it("applies each page and refuses the others one by one with ApplyBatch's code, message and details", async () => {
    const [sp, rj, mg, pr] = IBGES as [string, string, string, string];
    const res = await client.applyBatches({
      batches: [
        pageOf(sp, 10, 1),
        pageOf(rj, 20, 2, 3n), // a stale fence
        { ...pageOf(mg, 30, 3), runId: "x" }, // no such run
        pageOf(pr, 40, 4),
        pageOf(sp, 11, 5), // the same run again
        { ...pageOf(mg, 31, 6), items: [], newCursor: 999n }, // a cursor beyond what the page holds
      ],
    });
    expect(res.results.map((r) => r.result.case)).toEqual(["applied", "refused", "refused", "applied", "refused", "refused"]);
    const applied = res.results[0]!.result.case === "applied" ? res.results[0]!.result.value : undefined;
    expect(applied?.counts?.documentsInserted).toBe(1);
    expect(applied?.cursor).toBe(10n);

    const stale = refusal(res, 1);
    expect(stale.code).toBe(Code.FailedPrecondition);
    expect(stale.findDetails(StaleFenceSchema)[0]).toMatchObject({ currentFenceToken: 4n });
    const unknown = refusal(res, 2);
    expect(unknown.code).toBe(Code.NotFound);
    expect(unknown.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RUN_NOT_FOUND");
    const repeated = refusal(res, 4);
    expect(repeated.code).toBe(Code.InvalidArgument);
    expect(repeated.rawMessage).toContain("batches[4].run_id repeats batches[0].run_id");
    const beyond = refusal(res, 5);
    expect(beyond.code).toBe(Code.InvalidArgument);
    expect(beyond.findDetails(ErrorInfoSchema)[0]?.reason).toBe("CURSOR_OUT_OF_RANGE");

    expect(await storedChaves(sp)).toEqual([chaveOf(1)]);
    expect(await storedChaves(rj)).toEqual([]);
    expect(await storedChaves(mg)).toEqual([]);
    expect(await storedChaves(pr)).toEqual([chaveOf(4)]);
    // ApplyBatch alone answers the refused ones the same way.
    const alone = await rejection(client.applyBatch(pageOf(rj, 20, 2, 3n)));
    expect([alone.code, alone.rawMessage]).toEqual([stale.code, stale.rawMessage]);
  });

  it("refuses more than 64 pages in one call with INVALID_ARGUMENT, writing nothing", async () => {
    const [sp] = IBGES as [string];
    const batches = Array.from({ length: 65 }, (_, i) => ({ ...pageOf(sp, 100 + i, 100 + i), runId: String(900 + i) }));
    const err = await rejection(client.applyBatches({ batches }));
    expect(err.code).toBe(Code.InvalidArgument);
    expect(await storedChaves(sp)).toEqual([chaveOf(1)]);
  });
});

describe("a page sent before the answer for the one before it (follows_cursor, decision 0052)", () => {
  const reasonOf = (err: ConnectError) => err.findDetails(ErrorInfoSchema)[0];

  it("is refused with ABORTED PREDECESSOR_NOT_APPLIED, writing nothing, while the stored cursor is not the one it follows; once that page is in, it is applied", async () => {
    const df = IBGES[4]!;
    const ahead = { ...pageOf(df, 20, 22), followsCursor: 10n };
    const early = await rejection(client.applyBatch(ahead));
    expect(early.code).toBe(Code.Aborted);
    expect(reasonOf(early)).toMatchObject({ reason: "PREDECESSOR_NOT_APPLIED", metadata: { follows_cursor: "10", stored_cursor: "0" } });
    expect(early.rawMessage).toContain("nothing was written");
    expect(await storedChaves(df)).toEqual([]);

    expect((await client.applyBatch(pageOf(df, 10, 21))).cursor).toBe(10n);
    const applied = await client.applyBatch(ahead);
    expect(applied.cursor).toBe(20n);
    expect(applied.counts?.documentsInserted).toBe(1);
    expect(await storedChaves(df)).toEqual([chaveOf(21), chaveOf(22)]);
  });

  it("writes a run's next page given in the same call after the page it follows, and refuses it when that page is refused", async () => {
    const [rs, ce] = [IBGES[5]!, IBGES[6]!];
    const res = await client.applyBatches({
      batches: [
        pageOf(rs, 30, 31),
        pageOf(ce, 50, 41),
        { ...pageOf(rs, 50, 33), followsCursor: 40n }, // follows a page that is not in
        { ...pageOf(ce, 60, 42), items: [], newCursor: 999n, followsCursor: 50n }, // refused: a cursor beyond what it holds
        { ...pageOf(ce, 70, 43), followsCursor: 999n }, // follows the refused one
        pageOf(ce, 80, 44), // listed again without following a cursor
      ],
    });
    expect(res.results.map((r) => r.result.case)).toEqual(["applied", "applied", "refused", "refused", "refused", "refused"]);
    expect(reasonOf(refusal(res, 2))).toMatchObject({ reason: "PREDECESSOR_NOT_APPLIED", metadata: { stored_cursor: "30" } });
    expect(reasonOf(refusal(res, 3))?.reason).toBe("CURSOR_OUT_OF_RANGE");
    expect(reasonOf(refusal(res, 4))).toMatchObject({ reason: "PREDECESSOR_NOT_APPLIED", metadata: { stored_cursor: "50" } });
    expect(refusal(res, 5).rawMessage).toContain("batches[5].run_id repeats batches[4].run_id");
    expect(await storedChaves(rs)).toEqual([chaveOf(31)]);
    expect(await storedChaves(ce)).toEqual([chaveOf(41)]);

    const inOrder = await client.applyBatches({
      batches: [pageOf(rs, 40, 32), { ...pageOf(rs, 50, 33), followsCursor: 40n }, { ...pageOf(rs, 60, 34), followsCursor: 50n }],
    });
    expect(inOrder.results.map((r) => (r.result.case === "applied" ? r.result.value.cursor : r.result.case))).toEqual([40n, 50n, 60n]);
    expect(await storedChaves(rs)).toEqual([chaveOf(31), chaveOf(32), chaveOf(33), chaveOf(34)]);
  });
});
