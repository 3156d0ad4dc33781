import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { RateLimitedSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { BatchStatus } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { NotEligibleSchema, RunOutcome, StaleFenceSchema, type RunTrigger, type SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { Lease } from "../../libs/leases/types.js";
import { inContextOf, SpanKind, startSpan } from "../../libs/tracing/spans.js";
import type { FeedDeliveries } from "./feed-delivery.js";
import type { RunCalls } from "./run-calls.js";

export interface SyncFeedDeps {
  /** BeginRun/FinishRun: batched with other runs' in production (run-calls.ts, decision 0036). */
  store: RunCalls;
  /** The gateway's DeliverFeeds, shared by the runs (feed-delivery.ts, decision 0044). */
  deliveries: FeedDeliveries;
  /** Wall clock for persisted times (next eligible, cool-down); leases use the monotonic clock. */
  now: () => number;
}

export interface SyncFeedOptions {
  trigger: RunTrigger;
  pool: SyncPool;
  /** Wait after end of stream before the ADN may be asked again for this feed. */
  emptyResultBackoffMs: number;
  /** Wait after a failed run (the scheduler grows it with consecutive failures). */
  failureBackoffMs: number;
  /** Give the lease back after this long (bootstrap time slice); undefined = run to the end. */
  sliceMs?: number;
  /**
   * May end at a page with fewer entries than `pageSize` instead of asking the ADN until it says nothing
   * is newer, while fewer than `maxRuns` runs of the feed in a row ended so (decision 0061). Undefined: never.
   */
  shortPageEnd?: { pageSize: number; maxRuns: number };
}

export type SyncFeedResult =
  | { kind: "not-eligible"; nextEligibleAt?: Date; cooldownUntil?: Date }
  | {
      kind: "finished";
      outcome: RunOutcome;
      runId: string;
      items: number;
      cursor: bigint;
      error?: string;
      /** CAUGHT_UP at a short page, the ADN not asked again. */
      endedAtShortPage?: boolean;
      /** The most entries of a page the ADN followed with more in this run: its page size, as seen. */
      fullPageSize?: number;
    }
  | { kind: "lease-lost"; runId?: string; items: number };

/**
 * One run of one feed under a held lease (blueprint §3): BeginRun, then one gateway delivery that
 * applies the pages to the store itself until the ADN says there is nothing newer, then FinishRun. The
 * gateway asks the ADN for page k+1 as soon as it has read page k's answer, so decoding and the store's
 * applying hide behind the ADN's latency; the page bytes go gateway → store and only page heads and
 * apply counts come here. Every write carries the lease's fence token; the store refuses a stale one,
 * which is what makes a paused or partitioned holder harmless, and losing the lease cancels the delivery.
 */
export async function syncFeed(deps: SyncFeedDeps, lease: Lease, feed: FeedKey, opts: SyncFeedOptions): Promise<SyncFeedResult> {
  const { store, deliveries, now } = deps;
  const call = { signal: lease.signal };
  let begin;
  try {
    begin = await store.beginRun(
      { feed, holder: lease.holder, fenceToken: lease.fenceToken, trigger: opts.trigger, pool: opts.pool },
      call,
    );
  } catch (err) {
    const e = ConnectError.from(err);
    const notEligible = e.findDetails(NotEligibleSchema)[0];
    if (notEligible) {
      return {
        kind: "not-eligible",
        ...(notEligible.nextEligibleAt ? { nextEligibleAt: timestampDate(notEligible.nextEligibleAt) } : {}),
        ...(notEligible.cooldownUntil ? { cooldownUntil: timestampDate(notEligible.cooldownUntil) } : {}),
      };
    }
    if (lease.signal.aborted) return { kind: "lease-lost", items: 0 };
    throw e;
  }

  const runId = begin.runId;
  let cursor = begin.cursor;
  let items = 0;
  const startedAt = performance.now();
  // Cancelled by a lost lease, and closed whenever the run ends, however it ends: no delivery outlives
  // its run. The delivery's span in the run's trace is the parent of the gateway's (decision 0044).
  const span = startSpan("deliver feed", SpanKind.CLIENT);
  const short = opts.shortPageEnd;
  const endBelowPageSize = short && begin.shortPageEnds < short.maxRuns ? short.pageSize : 0;
  const delivery = inContextOf(span, () =>
    deliveries.open({ feed, afterNsu: cursor, runId, fenceToken: lease.fenceToken, endBelowPageSize }, lease.signal),
  );
  let fullPageSize = 0;
  let delivered = false;
  const endDelivery = () => {
    delivery.close();
    if (delivered) return;
    delivered = true;
    span.end();
  };
  const finish = async (
    outcome: RunOutcome,
    extra: { error?: string; nextEligibleAt?: number; cooldownUntil?: number; endedAtShortPage?: boolean },
  ) => {
    endDelivery();
    await store.finishRun(
      {
        feed,
        runId,
        fenceToken: lease.fenceToken,
        outcome,
        errorMessage: extra.error ?? "",
        ...(extra.nextEligibleAt !== undefined ? { nextEligibleAt: timestampFromMs(extra.nextEligibleAt) } : {}),
        ...(extra.cooldownUntil !== undefined ? { cooldownUntil: timestampFromMs(extra.cooldownUntil) } : {}),
        endedAtShortPage: extra.endedAtShortPage === true,
      },
      call,
    );
    return {
      kind: "finished" as const,
      outcome,
      runId,
      items,
      cursor,
      ...(fullPageSize > 0 ? { fullPageSize } : {}),
      ...(extra.error ? { error: extra.error } : {}),
      ...(extra.endedAtShortPage ? { endedAtShortPage: true } : {}),
    };
  };

  const sliceOver = () => opts.sliceMs !== undefined && performance.now() - startedAt >= opts.sliceMs;
  try {
    let caughtUp = false;
    let endedAtShortPage = false;
    let cancelled = false;
    let stopping = false;
    let pageBefore = 0;
    for (let report = await delivery.next(); report; report = await delivery.next()) {
      const head = report.head;
      if (report.cursor > cursor) cursor = report.cursor;
      if (report.counts) items += head?.itemCount ?? 0;
      if (report.cancelRequested) cancelled = true;
      if (head?.status === BatchStatus.END_OF_STREAM) caughtUp = true;
      if (head?.endsAtShortPage) caughtUp = endedAtShortPage = true;
      // A page the ADN followed with more items was a full one: its size is the ADN's page size.
      if (head?.status === BatchStatus.DOCUMENTS_FOUND && pageBefore > fullPageSize) fullPageSize = pageBefore;
      pageBefore = head?.status === BatchStatus.DOCUMENTS_FOUND ? head.pageSizeSeen : 0;
      if (lease.signal.aborted) return { kind: "lease-lost", runId, items };
      // The gateway ends after the page it is applying; its reports until then still count.
      if (!stopping && (sliceOver() || lease.remainingMs() <= 0)) {
        stopping = true;
        delivery.stop();
      }
    }
    if (lease.signal.aborted) return { kind: "lease-lost", runId, items };
    if (cancelled) return await finish(RunOutcome.CANCELLED, {});
    // A short page ends the run as the ADN's "nothing newer" does, one-hour wait included: the notes
    // issued meanwhile are the next run's (0061).
    if (caughtUp) return await finish(RunOutcome.CAUGHT_UP, { nextEligibleAt: now() + opts.emptyResultBackoffMs, endedAtShortPage });
    if (stopping) return await finish(RunOutcome.YIELDED, {});
    throw new ConnectError("the gateway's delivery ended without an END_OF_STREAM page, a cancellation or a stop", Code.Internal);
  } catch (err) {
    if (lease.signal.aborted) return { kind: "lease-lost", runId, items };
    const e = ConnectError.from(err);
    if (e.findDetails(StaleFenceSchema).length > 0) {
      // Someone with a newer fence owns the feed: our writes are refused, and so would FinishRun be.
      return { kind: "lease-lost", runId, items };
    }
    const rateLimited = e.code === Code.ResourceExhausted ? e.findDetails(RateLimitedSchema)[0] : undefined;
    if (rateLimited) {
      const until = rateLimited.cooldownUntil ? timestampDate(rateLimited.cooldownUntil).getTime() : now() + opts.failureBackoffMs;
      return await finish(RunOutcome.RATE_LIMITED, { error: e.rawMessage, cooldownUntil: until });
    }
    return await finish(RunOutcome.FAILED, { error: `${Code[e.code]}: ${e.rawMessage}`, nextEligibleAt: now() + opts.failureBackoffMs });
  } finally {
    endDelivery();
  }
}
