// How DeliverFeeds's pages reach the store: the pages the gateway's deliveries apply within a couple of
// milliseconds of each other share one ApplyBatches call and one transaction per round of
// municipalities (docs/decisions/0040-pages-of-many-feeds-in-one-transaction.md). Each page still gets
// its own answer, or the very error ApplyBatch would have thrown (StaleFence, cursor out of range, …),
// so the delivery's logic does not change; fencing stays per feed in the store (0008). A page larger
// than BATCHED_PAGE_BYTES goes alone through ApplyBatch, so that no call passes the store's read limit.
import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { WireType } from "@bufbuild/protobuf/wire";
import type { Client } from "@connectrpc/connect";
import { encodeLoteDfeEntryDelimited } from "../../libs/adn/lote-entry-wire.js";
import type { BatchObserver } from "../../libs/batching/metrics.js";
import { type Batching, tracedBatcher } from "../../libs/batching/traced-batcher.js";
import {
  type ApplyBatchRequest,
  ApplyBatchRequestSchema,
  type ApplyBatchResponse,
  type StoreService,
} from "../../libs/gen/malha/store/v1/store_pb.js";
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

const ENTRIES_FIELD = ApplyBatchRequestSchema.field.entries.number;

/**
 * The request as a message whose entries are already in wire form: each one an unknown field of the
 * entries' number, which toBinary writes as it stands and the store reads as `entries`
 * (docs/decisions/0055-page-entries-encoded-once.md). The rest of the request goes through protobuf-es.
 */
export function withEncodedEntries(request: ApplyRequest): ApplyBatchRequest {
  const { entries, ...rest } = request;
  // A message given whole stays one (create returns it as it is), without its entries.
  const message = create(ApplyBatchRequestSchema, { ...rest, entries: [] } as ApplyRequest);
  if (entries && entries.length > 0) {
    const encoded = entries.map((entry) => ({
      no: ENTRIES_FIELD,
      wireType: WireType.LengthDelimited,
      data: encodeLoteDfeEntryDelimited(entry),
    }));
    message.$unknown = message.$unknown ? [...message.$unknown, ...encoded] : encoded;
  }
  return message;
}

export function batchedPageApply(
  store: Pick<Client<typeof StoreService>, "applyBatch" | "applyBatches">,
  batching = PAGE_BATCHING,
  observe?: BatchObserver,
): PageApply {
  const pages = tracedBatcher(
    { entry: "apply page (batched)", batch: "apply pages (batched)" },
    batching,
    async (batches: ApplyBatchRequest[]) =>
      (await store.applyBatches({ batches })).results.map((r) => answerOfEntry<ApplyBatchResponse>(r.result, "applied")),
    observe,
  );
  return {
    apply: (request, bytes, signal) => {
      const message = withEncodedEntries(request);
      return bytes > BATCHED_PAGE_BYTES ? store.applyBatch(message, signal ? { signal } : {}) : pages.submit(message, signal);
    },
    close: () => pages.close(),
  };
}
