// How DeliverFeeds's pages reach the store: the pages the gateway's deliveries apply within a couple of
// milliseconds of each other share one ApplyBatches call and one transaction per round of
// municipalities (docs/decisions/0040-pages-of-many-feeds-in-one-transaction.md). Each page still gets
// its own answer, or the very error ApplyBatch would have thrown (StaleFence, cursor out of range, …),
// so the delivery's logic does not change; fencing stays per feed in the store (0008). A page larger
// than BATCHED_PAGE_BYTES goes alone through ApplyBatch, so that no call passes the store's read limit.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type { BatchObserver } from "../../libs/batching/metrics.js";
import { type Batching, tracedBatcher } from "../../libs/batching/traced-batcher.js";
import type { ApplyBatchRequestSchema, ApplyBatchResponse, StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { answerOfEntry } from "../../libs/rpc/entry-errors.js";

type ApplyRequest = MessageInitShape<typeof ApplyBatchRequestSchema>;

/** Applies one page; `bytes` is its entries' serialized size (page-entries.ts). */
export interface PageApply {
  apply(request: ApplyRequest, bytes: number, signal?: AbortSignal): Promise<ApplyBatchResponse>;
  close(): Promise<void>;
}

/** Pages up to this size are batched: 32 of them (PAGE_BATCHING.maxSize) stay within 8 MiB, half the store's 16 MiB read limit. */
export const BATCHED_PAGE_BYTES = 256 * 1024;

/**
 * A page waits at most 2 ms when the store is idle; under load the batches grow while the previous ones
 * are out, as the coordinator's run batches do (0036). The store takes 64 pages per call. Three calls out:
 * a call of pages sent ahead waits in the store for the call of the pages they follow (0052), and the
 * third keeps two calls writing side by side meanwhile.
 */
export const PAGE_BATCHING: Batching = { maxSize: 32, maxDelayMs: 2, maxInFlight: 3 };

export function batchedPageApply(
  store: Pick<Client<typeof StoreService>, "applyBatch" | "applyBatches">,
  batching = PAGE_BATCHING,
  observe?: BatchObserver,
): PageApply {
  const pages = tracedBatcher(
    { entry: "apply page (batched)", batch: "apply pages (batched)" },
    batching,
    async (batches: ApplyRequest[]) =>
      (await store.applyBatches({ batches })).results.map((r) => answerOfEntry<ApplyBatchResponse>(r.result, "applied")),
    observe,
  );
  return {
    apply: (request, bytes, signal) =>
      bytes > BATCHED_PAGE_BYTES ? store.applyBatch(request, signal ? { signal } : {}) : pages.submit(request, signal),
    close: () => pages.close(),
  };
}
