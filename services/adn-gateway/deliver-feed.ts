// DeliverFeed: a sync run's pages from the ADN to the store in one hop (adn_gateway.proto). Three parts
// run side by side: the ADN pages (one call of the feed in flight, the next asked for as soon as a page's
// envelope is read), a read-ahead of pages waiting for the store, and the apply loop, which
// writes one page at a time under the run's fence and reports each to the caller. The caller's
// acknowledgements bound how far the loop may run ahead of it, so a paused coordinator pauses its
// gateway too (docs/decisions/0020-pages-from-gateway-to-store.md).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { ConnectError } from "@connectrpc/connect";
import {
  BatchStatus,
  type BatchHead,
  type DeliverFeedRequest,
  type DeliverFeedResponseSchema,
  type DeliverFeedStart,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { LoteDfeEntrySchema } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { invalidArgument } from "../../libs/rpc/errors.js";
import { readBatchPage } from "./batch-page.js";
import type { AdnGateway } from "./gateway.js";
import type { PageApply } from "./page-apply.js";
import { pageEntries } from "./page-entries.js";
import { ReadAhead } from "./read-ahead.js";
import { validFeed } from "./validate.js";

/** Read pages waiting for the store (memory: each ≤ ADN_MAX_BATCH_BYTES). */
export const PAGES_AHEAD_OF_STORE = 2;
/** Reports the caller may leave unacknowledged before the next page waits. */
export const UNACKNOWLEDGED_PAGES = 2;

export interface DeliverFeedDeps {
  gateway: AdnGateway;
  /** The store's ApplyBatch, batched with other deliveries' pages (page-apply.ts). */
  store: PageApply;
  log: Logger;
  /** ADN_MAX_BATCH_BYTES: the most one page's entries may take in the store's request. */
  maxBatchBytes: number;
}

interface Page {
  head: BatchHead;
  /** Undecoded: the store decodes them (docs/decisions/0034-store-decodes-the-page.md). */
  entries: MessageInitShape<typeof LoteDfeEntrySchema>[];
  /** The entries' serialized size, at most. */
  bytes: number;
}

type Report = MessageInitShape<typeof DeliverFeedResponseSchema>;

export async function* deliverFeed(
  deps: DeliverFeedDeps,
  requests: AsyncIterable<DeliverFeedRequest>,
  signal: AbortSignal,
): AsyncGenerator<Report> {
  const input = requests[Symbol.asyncIterator]();
  const first = await input.next();
  if (first.done || first.value.part.case !== "start") {
    throw invalidArgument(
      `the first DeliverFeed message must be start, not ${first.done ? "the end of the stream" : partName(first.value)}`,
    );
  }
  const start = validStart(first.value.part.value);
  // Checked before any ADN call; the feed then travels as the caller sent it.
  validFeed(start.feed);
  const feed = start.feed!;

  // Ends the ADN side (the call ahead included) when the loop ends or the caller asks to stop; the page
  // being applied is not tied to it, so a stop never cuts a transaction short.
  const fetching = new AbortController();
  // Once: abort() builds its DOMException reason before it looks whether the signal is aborted already.
  const stopFetching = () => {
    if (!fetching.signal.aborted) fetching.abort();
  };
  const caller = new CallerControl(input, stopFetching);
  const pages = new ReadAhead(adnPages(deps, feed, start.afterNsu, AbortSignal.any([signal, fetching.signal])), PAGES_AHEAD_OF_STORE);
  let cursor = start.afterNsu;
  try {
    for (let n = 1n; ; n++) {
      // The window first: a page taken from the read-ahead would let the ADN side fetch one more.
      await caller.windowOpen(n);
      if (caller.violation) throw caller.violation;
      if (caller.stopRequested) return;
      let page: Page | undefined;
      try {
        page = await pages.next();
      } catch (err) {
        if (caller.violation) throw caller.violation;
        if (caller.stopRequested) return;
        throw err;
      }
      if (!page) return; // only after a stop: the ADN side ends by itself after END_OF_STREAM only
      if (caller.stopRequested) return;
      const { head, entries, bytes } = page;
      const report: Report = { page: n, head, cursor };
      if (head.itemCount > 0) {
        const highest = head.highestNsu > cursor ? head.highestNsu : cursor;
        const applied = await deps.store.apply(
          { feed, runId: start.runId, fenceToken: start.fenceToken, entries, newCursor: highest, progress: { maxNsuSeen: highest } },
          bytes,
        );
        cursor = applied.cursor;
        Object.assign(report, { counts: applied.counts, cursor, cancelRequested: applied.cancelRequested });
      }
      yield report;
      if (head.status === BatchStatus.END_OF_STREAM || report.cancelRequested || caller.stopRequested) return;
    }
  } finally {
    stopFetching();
    caller.close();
  }
}

/** The proto's name of a request's part, for messages. */
function partName(m: DeliverFeedRequest): string {
  return m.part.case === undefined ? "an empty message" : m.part.case === "ackedPages" ? "acked_pages" : m.part.case;
}

function validStart(start: DeliverFeedStart): DeliverFeedStart {
  if (!start.runId) throw invalidArgument("start.run_id is required (the run from StoreService.BeginRun)");
  if (start.fenceToken < 1n) throw invalidArgument("start.fence_token must be at least 1 (the lease's revision)");
  return start;
}

/** The feed page after page, as the ADN sent it; the next ADN call leaves as soon as a page's envelope is read. */
async function* adnPages(deps: DeliverFeedDeps, feed: FeedKey, afterNsu: bigint, signal: AbortSignal): AsyncGenerator<Page> {
  let next = readBatchPage(deps.gateway, deps.log, { feed, afterNsu }, signal);
  for (;;) {
    const { entries, ...facts } = await next;
    const last = facts.status === BatchStatus.END_OF_STREAM;
    if (!last) {
      // DOCUMENTS_FOUND means a highest NSU above the last one: one call at a time, never two.
      next = readBatchPage(deps.gateway, deps.log, { feed, afterNsu: facts.highestNsu }, signal);
      // Dropped unread if the delivery ends first (stopped, cancelled, or this page failed).
      next.catch(() => undefined);
    }
    yield { head: { ...facts, itemCount: entries.length } as BatchHead, ...pageEntries(entries, deps.maxBatchBytes) };
    if (last) return;
  }
}

/** The caller's side of the stream after `start`: acknowledgements and a stop. */
class CallerControl {
  private acked = 0n;
  stopRequested = false;
  /** A message the protocol does not allow here; ends the stream with INVALID_ARGUMENT. */
  violation: ConnectError | undefined;
  private wake: (() => void) | undefined;
  private closed = false;

  constructor(
    private readonly input: AsyncIterator<DeliverFeedRequest>,
    private readonly onStop: () => void,
  ) {
    void this.read();
  }

  /** Resolves once page `n` may be applied (fewer than UNACKNOWLEDGED_PAGES reports before it untaken), or on a stop. */
  async windowOpen(n: bigint): Promise<void> {
    while (!this.stopRequested && n - 1n - this.acked >= BigInt(UNACKNOWLEDGED_PAGES)) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  close(): void {
    this.closed = true;
    void this.input.return?.().catch(() => undefined);
  }

  private stop(): void {
    if (this.stopRequested) return;
    this.stopRequested = true;
    this.onStop();
  }

  private async read(): Promise<void> {
    try {
      for (let r = await this.input.next(); !r.done && !this.closed; r = await this.input.next()) {
        const part = r.value.part;
        if (part.case === "ackedPages" && part.value > this.acked) this.acked = part.value;
        else if (part.case === "stop") this.stop();
        else if (part.case !== "ackedPages") {
          this.violation = invalidArgument(`${partName(r.value)} is not allowed after start (only acked_pages and stop are)`);
          this.stop();
        }
        this.wake?.();
      }
    } catch {
      // The caller went away: the call's own signal ends everything else.
    }
    // A caller that closes its side has nothing more to acknowledge: as a stop.
    this.stop();
    this.wake?.();
  }
}
