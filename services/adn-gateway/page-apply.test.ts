// The gateway's batched page apply (docs/decisions/0040-pages-of-many-feeds-in-one-transaction.md)
// against a real store process: pages of deliveries applying at the same moment share one ApplyBatches
// call, a delivery that ends meanwhile cancels nothing of the others' pages, a refused page is refused
// alone, and a page too large to share a call goes alone through ApplyBatch.
import type { RowDataPacket } from "mysql2/promise";
import { Code } from "@connectrpc/connect";
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { batchSizeObservers } from "../../libs/batching/metrics.js";
import { StaleFenceSchema } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createLogger } from "../../libs/log/logger.js";
import { runInScope } from "../../libs/rpc/context.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { scrape } from "../../test/support/prom-text.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { chaveOf, docItem, feedOf, registerWithRuns, rejection, storeClient } from "../store/testing/fixtures.js";
import { BATCHED_PAGE_BYTES, batchedPageApply, PAGE_BATCHING, type PageApply } from "./page-apply.js";

const IBGES = ["3550308", "3304557", "3106200", "4106902"];

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;
let pages: PageApply;
const registry = new Registry();
let runIds: Map<string, string>;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  ({ client, close } = storeClient(store.baseUrl));
  pages = batchedPageApply(client, PAGE_BATCHING, batchSizeObservers(registry)("ApplyBatches"));
  runIds = await registerWithRuns(client, IBGES, "gw-test", 2n);
});
afterAll(async () => {
  await pages?.close();
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

const page = (ibge: string, nsu: number, n: number, fenceToken = 2n) => ({
  feed: feedOf(ibge),
  runId: runIds.get(ibge)!,
  fenceToken,
  items: [docItem(nsu, n)],
  newCursor: BigInt(nsu),
});

/** The store's served calls of a method, from its metrics. */
async function served(method: string): Promise<number> {
  const samples = await scrape(store.metricsPort);
  return samples.filter((s) => s.name === "malha_rpc_handled_total" && s.labels.method === method).reduce((n, s) => n + s.value, 0);
}

async function storedChaves(ibge: string): Promise<string[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT chave FROM nfse_documentos_${ibge} ORDER BY nsu`);
  return rows.map((r) => String(r.chave));
}

/** A delivery's request scope, as the gateway's DeliverFeeds handler runs in one. */
function deliveryScope() {
  const ended = new AbortController();
  return {
    ended,
    scope: { requestId: `delivery-${Math.random()}`, signal: ended.signal, log: createLogger({ service: "test", level: "silent" }) },
  };
}

describe("batchedPageApply", () => {
  it("applies pages of concurrent deliveries in one ApplyBatches, even when one delivery ends before the batch goes out", async () => {
    const [sp, rj, mg] = IBGES as [string, string, string];
    const before = { batches: await served("ApplyBatches"), single: await served("ApplyBatch") };
    const deliveries = [sp, rj, mg].map((ibge, i) => ({ ibge, ...deliveryScope(), nsu: 10 + i }));
    const applied = deliveries.map((d) => runInScope(d.scope, () => pages.apply(page(d.ibge, d.nsu, d.nsu), 100)));
    // The first delivery's call ends (its caller went away) while its page waits for the batch.
    deliveries[0]!.ended.abort();
    const answers = await Promise.all(applied);
    expect(answers.map((a) => a.cursor)).toEqual([10n, 11n, 12n]);
    expect(answers.map((a) => a.counts?.documentsInserted)).toEqual([1, 1, 1]);
    expect(await served("ApplyBatches")).toBe(before.batches + 1);
    expect(await served("ApplyBatch")).toBe(before.single);
    // The call's size is recorded: one call of three pages.
    const [histogram] = await registry.getMetricsAsJSON();
    const value = (name: string) => histogram!.values.find((v) => (v as { metricName?: string }).metricName === name)?.value;
    expect([value("malha_batched_call_entries_count"), value("malha_batched_call_entries_sum")]).toEqual([1, 3]);
    for (const d of deliveries) expect(await storedChaves(d.ibge)).toContain(chaveOf(d.nsu));
  });

  it("refuses a stale page alone, with the error ApplyBatch gives, and applies the page batched with it", async () => {
    const [sp, , , pr] = IBGES as [string, string, string, string];
    const [stale, fresh] = await Promise.allSettled([pages.apply(page(sp, 20, 20, 1n), 100), pages.apply(page(pr, 21, 21), 100)]);
    expect(stale.status).toBe("rejected");
    const err = await rejection(Promise.reject(stale.status === "rejected" ? stale.reason : undefined));
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(StaleFenceSchema)[0]?.currentFenceToken).toBe(2n);
    expect(fresh.status === "fulfilled" && fresh.value.cursor).toBe(21n);
    expect(await storedChaves(sp)).not.toContain(chaveOf(20));
  });

  it("sends a page over BATCHED_PAGE_BYTES alone through ApplyBatch", async () => {
    const [, rj] = IBGES as [string, string];
    const before = { batches: await served("ApplyBatches"), single: await served("ApplyBatch") };
    const answer = await pages.apply(page(rj, 30, 30), BATCHED_PAGE_BYTES + 1);
    expect(answer.cursor).toBe(30n);
    expect(await served("ApplyBatch")).toBe(before.single + 1);
    expect(await served("ApplyBatches")).toBe(before.batches);
  });
});
