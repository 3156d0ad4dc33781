// One delivery of DeliverFeeds: a sync run's pages from the ADN to the store in one hop (adn_gateway.proto;
// deliver-feeds.ts carries many of them on one stream). Three parts run side by side: the ADN pages (one
// call of the feed in flight, the next asked for as soon as a page's envelope is read), a read-ahead of
// pages waiting for the store, and the apply loop, which hands the store up to PAGES_IN_APPLY pages under
// the run's fence — the next before the answer for the one before it, which the store writes first
// (docs/decisions/0052-a-run-s-next-page-sent-before-the-answer.md) — and reports each, in page order, to
// the caller. The caller's acknowledgements bound how far the loop may run ahead of it, so a paused
// coordinator pauses its gateway too (docs/decisions/0020-pages-from-gateway-to-store.md).
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  BatchStatus,
  type BatchHead,
  type DeliverFeedReportSchema,
  type DeliverFeedStart,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { Code } from "@connectrpc/connect";
import type { LoteDfeEntrySchema } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { ApplyBatchRequestSchema, ApplyBatchResponse } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { hasErrorReason, invalidArgument } from "../../libs/rpc/errors.js";
import { readBatchPage } from "./batch-page.js";
import type { AdnGateway } from "./gateway.js";
import type { PageApply } from "./page-apply.js";
import { pageEntries } from "./page-entries.js";
import { ReadAhead } from "./read-ahead.js";
import { validFeed } from "./validate.js";

/** Why the ADN side of a delivery is stopped when the delivery ends by itself; never seen by a caller. */
const DELIVERY_ENDED = new DOMException("the delivery ended", "AbortError");

/** What the race between the next page and the oldest page's answer reports when the page comes first. */
const PAGE = Symbol("page");

/** Read pages waiting for the store (memory: each ≤ ADN_MAX_BATCH_BYTES). */
export const PAGES_AHEAD_OF_STORE = 2;
/** Reports the caller may leave unacknowledged before the next page waits. */
export const UNACKNOWLEDGED_PAGES = 2;
/**
 * Pages of the delivery in the store's hands at once: the next page goes before the answer for the one
 * before it, so the store decodes it while it writes that one (docs/decisions/0052-a-run-s-next-page-sent-before-the-answer.md).
 */
export const PAGES_IN_APPLY = 2;

export interface DeliverFeedDeps {
  gateway: AdnGateway;
  /** The store's ApplyBatch, batched with other deliveries' pages (page-apply.ts). */
  store: PageApply;
  log: Logger;
  /** ADN_MAX_BATCH_BYTES: the most one page's entries may take in the store's request. */
  maxBatchBytes: number;
}

/** A page given to the store (or, without items, only to be reported), oldest first. */
interface Sent {
  n: bigint;
  head: BatchHead;
  entries: Page["entries"];
  bytes: number;
  /** Set when it went before the answer for the page before it. */
  followsCursor?: bigint | undefined;
  applied?: Promise<ApplyBatchResponse>;
}

type ApplyRequest = MessageInitShape<typeof ApplyBatchRequestSchema>;

interface Page {
  head: BatchHead;
  /** Undecoded: the store decodes them (docs/decisions/0034-store-decodes-the-page.md). */
  entries: MessageInitShape<typeof LoteDfeEntrySchema>[];
  /** The entries' serialized size, at most. */
  bytes: number;
}

export type Report = MessageInitShape<typeof DeliverFeedReportSchema>;

/** Runs one delivery to its end; `caller` is the caller's side (acknowledgements, stop), `signal` cancels it. */
export async function* deliverFeed(
  deps: DeliverFeedDeps,
  start: DeliverFeedStart,
  caller: DeliveryControl,
  signal: AbortSignal,
): AsyncGenerator<Report> {
  validStart(start);
  // Checked before any ADN call; the feed then travels as the caller sent it.
  validFeed(start.feed);
  const feed = start.feed!;

  // Ends the ADN side (the call ahead included) when the loop ends or the caller asks to stop; the page
  // being applied is not tied to it, so a stop never cuts a transaction short.
  // One controller rather than AbortSignal.any over the caller's signal and this one: Node 20's `any` ties
  // the signals through weak references and a finalization registry, work for the collector on every
  // run (decision 0051). The caller's cancellation passes on with its own reason.
  const fetching = new AbortController();
  // Once, and with a reason built at load: abort() without one builds a DOMException, stack trace
  // included, before it looks whether the signal is aborted already.
  const stopFetching = (reason: unknown = DELIVERY_ENDED) => {
    if (!fetching.signal.aborted) fetching.abort(reason);
  };
  const cancelled = () => stopFetching(signal.reason);
  if (signal.aborted) cancelled();
  else signal.addEventListener("abort", cancelled, { once: true });
  caller.onStop(() => stopFetching());
  const pages = new ReadAhead(adnPages(deps, feed, start.afterNsu, start.endBelowPageSize, fetching.signal), PAGES_AHEAD_OF_STORE);
  const sent: Sent[] = [];
  let n = 1n;
  // The store's cursor as last answered, and what it will be once every page sent is applied as sent.
  let cursor = start.afterNsu;
  let expected = start.afterNsu;
  // The next page, asked for once the window allows it; undefined once the ADN side ended or failed.
  let next: Promise<Page | undefined> | undefined;
  let reading = true;
  let failure: { error: unknown } | undefined;

  const request = (entries: Page["entries"], newCursor: bigint, followsCursor?: bigint): ApplyRequest => ({
    feed,
    runId: start.runId,
    fenceToken: start.fenceToken,
    entries,
    newCursor,
    progress: { maxNsuSeen: newCursor },
    ...(followsCursor !== undefined ? { followsCursor } : {}),
  });

  const send = (page: Page) => {
    const { head, entries, bytes } = page;
    const item: Sent = { n: n++, head, entries, bytes };
    if (head.itemCount > 0) {
      const highest = head.highestNsu > expected ? head.highestNsu : expected;
      // Sent before the answer for the page before it: the store writes it after that page (0052).
      item.followsCursor = sent.some((s) => s.applied !== undefined) ? expected : undefined;
      item.applied = deps.store.apply(request(entries, highest, item.followsCursor), bytes);
      // Answered in order below; a page sent after one that failed is dropped unread.
      item.applied.catch(() => undefined);
      expected = highest;
    }
    sent.push(item);
  };

  // The store's answer for the oldest page sent, as its report.
  const answer = async (item: Sent): Promise<Report> => {
    const report: Report = { page: item.n, head: item.head, cursor };
    if (!item.applied) return report;
    let applied: ApplyBatchResponse;
    try {
      applied = await item.applied;
    } catch (err) {
      if (item.followsCursor === undefined || !hasErrorReason(err, Code.Aborted, PREDECESSOR_NOT_APPLIED)) throw err;
      // It reached the store before the page it follows was committed there (another replica, or a call
      // that overtook its predecessor's): that page is answered now, so it goes again as pages always went.
      const highest = item.head.highestNsu > cursor ? item.head.highestNsu : cursor;
      applied = await deps.store.apply(request(item.entries, highest), item.bytes);
    }
    cursor = applied.cursor;
    return Object.assign(report, { counts: applied.counts, cursor, cancelRequested: applied.cancelRequested });
  };

  try {
    for (;;) {
      // The window first: a page taken from the read-ahead would let the ADN side fetch one more.
      if (reading && next === undefined && sent.length < PAGES_IN_APPLY && !caller.stopRequested) {
        next = caller.windowOpen(n).then(() => (caller.stopRequested ? undefined : pages.next()));
        next.catch(() => undefined);
      }
      const oldest = sent[0];
      // A page to send, unless the oldest page's answer comes first.
      if (
        next !== undefined &&
        (oldest === undefined ||
          (await Promise.race([
            settled(oldest.applied),
            next.then(
              () => PAGE,
              () => PAGE,
            ),
          ])) === PAGE)
      ) {
        const asked = next;
        next = undefined;
        let page: Page | undefined;
        try {
          page = await asked;
        } catch (error) {
          failure = { error };
        }
        // undefined only after a stop: the ADN side ends by itself after END_OF_STREAM only
        if (page && !caller.stopRequested) send(page);
        else reading = false;
        if (page && endsDelivery(page.head)) reading = false;
        continue;
      }
      if (oldest === undefined) {
        // Everything sent is answered: the ADN side's failure is the delivery's, unless the caller stopped it.
        if (failure && !caller.stopRequested) throw failure.error;
        return;
      }
      sent.shift();
      const report = await answer(oldest);
      yield report;
      // A page sent before this answer is still written; it is answered and reported before the end. The
      // page asked for is not sent: its ADN call is stopped when the delivery ends.
      if (endsDelivery(oldest.head) || report.cancelRequested || caller.stopRequested) {
        reading = false;
        next = undefined;
      }
    }
  } finally {
    stopFetching();
    signal.removeEventListener("abort", cancelled);
  }
}

/** Resolves, never rejects, once a page's answer is in (at once for a page with nothing to apply). */
function settled(applied: Promise<unknown> | undefined): Promise<void> {
  return applied
    ? applied.then(
        () => undefined,
        () => undefined,
      )
    : Promise.resolve();
}

/** The store's refusal of a page that follows a cursor its run has not reached (store.proto, decision 0052). */
const PREDECESSOR_NOT_APPLIED = { domain: "malha.store", reason: "PREDECESSOR_NOT_APPLIED" } as const;

/** The ADN's "nothing newer", or a short page the caller let end the delivery (0061). */
function endsDelivery(head: BatchHead): boolean {
  return head.status === BatchStatus.END_OF_STREAM || head.endsAtShortPage === true;
}

function validStart(start: DeliverFeedStart): DeliverFeedStart {
  if (!start.runId) throw invalidArgument("start.run_id is required (the run from StoreService.BeginRun)");
  if (start.fenceToken < 1n) throw invalidArgument("start.fence_token must be at least 1 (the lease's revision)");
  return start;
}

/**
 * The feed page after page, as the ADN sent it; the next ADN call leaves as soon as a page's envelope is
 * read, unless the page ends the delivery: the ADN's "nothing newer", or a page with items and fewer
 * entries than `endBelowPageSize` (0: never), after which the ADN is not asked again (0061).
 */
async function* adnPages(
  deps: DeliverFeedDeps,
  feed: FeedKey,
  afterNsu: bigint,
  endBelowPageSize: number,
  signal: AbortSignal,
): AsyncGenerator<Page> {
  let next = readBatchPage(deps.gateway, deps.log, { feed, afterNsu }, signal);
  for (;;) {
    const { entries, ...facts } = await next;
    const short = facts.status === BatchStatus.DOCUMENTS_FOUND && entries.length > 0 && facts.pageSizeSeen < endBelowPageSize;
    const last = facts.status === BatchStatus.END_OF_STREAM || short;
    if (!last) {
      // DOCUMENTS_FOUND means a highest NSU above the last one: one call at a time, never two.
      next = readBatchPage(deps.gateway, deps.log, { feed, afterNsu: facts.highestNsu }, signal);
      // Dropped unread if the delivery ends first (stopped, cancelled, or this page failed).
      next.catch(() => undefined);
    }
    yield {
      head: { ...facts, itemCount: entries.length, ...(short ? { endsAtShortPage: true } : {}) } as BatchHead,
      ...pageEntries(entries, deps.maxBatchBytes),
    };
    if (last) return;
  }
}

/** The caller's side of a delivery after `start`, as its messages arrive: acknowledgements and a stop. */
export class DeliveryControl {
  private acked = 0n;
  stopRequested = false;
  private wake: (() => void) | undefined;
  private stopped: (() => void) | undefined;

  /** Resolves once page `n` may be applied (fewer than UNACKNOWLEDGED_PAGES reports before it untaken), or on a stop. */
  async windowOpen(n: bigint): Promise<void> {
    while (!this.stopRequested && n - 1n - this.acked >= BigInt(UNACKNOWLEDGED_PAGES)) {
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** The caller has taken `pages` reports (cumulative; an older count changes nothing). */
  ack(pages: bigint): void {
    if (pages > this.acked) this.acked = pages;
    this.wake?.();
  }

  /** End after the page being applied. */
  stop(): void {
    if (this.stopRequested) return;
    this.stopRequested = true;
    this.stopped?.();
    this.wake?.();
  }

  /** `fn` runs once, when the caller asks to stop (at once if it has asked already). */
  onStop(fn: () => void): void {
    this.stopped = fn;
    if (this.stopRequested) fn();
  }
}
