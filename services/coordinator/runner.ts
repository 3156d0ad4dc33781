import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunOutcome, RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import type { LeaseManager } from "../../libs/leases/types.js";
import { inSpan, SpanKind } from "../../libs/tracing/spans.js";
import type { CoordinatorConfig } from "./config.js";
import { feedId, leaseKeyOf } from "./feed-key.js";
import type { CoordinatorMetrics } from "./metrics.js";
import { syncFeed, type SyncFeedDeps, type SyncFeedResult } from "./sync-feed.js";

export interface FeedJob {
  key: string;
  feed: FeedKey;
  trigger: RunTrigger;
  pool: SyncPool;
}

export type RunResult = SyncFeedResult | { kind: "lease-held"; holder?: string };

/**
 * Runs one feed job: take the feed's lease (or leave it to whoever holds it), sync, give the lease
 * back. Consecutive failures of a feed stretch its backoff, so a broken certificate or a sick ADN is
 * not hammered.
 */
export class FeedRunner {
  private readonly failures = new Map<string, number>();
  /** Page sizes seen that differ from NFSE_ADN_PAGE_SIZE, each warned about once. */
  private readonly pageSizesWarned = new Set<number>();

  constructor(
    private readonly leases: LeaseManager,
    private readonly deps: SyncFeedDeps,
    private readonly config: CoordinatorConfig,
    private readonly log: Logger,
    private readonly metrics?: CoordinatorMetrics,
  ) {}

  failureBackoffMs(key: string): number {
    const n = this.failures.get(key) ?? 0;
    return Math.min(this.config.failureBackoffMaxMs, this.config.failureBackoffBaseMs * 2 ** n);
  }

  async run(job: FeedJob): Promise<RunResult> {
    const started = performance.now();
    // One trace per run: its store, gateway and vault calls (and, through them, the ADN calls and SQL
    // transactions) are this span's descendants.
    const result = await inSpan(
      `sync run ${feedId(job.feed)}`,
      { kind: SpanKind.INTERNAL, attributes: { "malha.feed": feedId(job.feed), "malha.pool": SyncPool[job.pool] ?? String(job.pool) } },
      async (span) => {
        const r = await this.runUnderLease(job);
        span.setAttribute("malha.run.result", r.kind);
        return r;
      },
    );
    this.metrics?.runEnded(job.pool, result, (performance.now() - started) / 1000);
    return result;
  }

  /**
   * A full page of another size than NFSE_ADN_PAGE_SIZE means the setting is stale: larger pages make
   * short-page ends rarer (no harm), smaller ones end runs early that had more to read (their next
   * run, an hour later, reads it; at most NFSE_SHORT_PAGE_END_RUNS in a row). Said once per size.
   */
  private checkPageSize(seen: number, feed: string): void {
    if (seen === this.config.adnPageSize || this.pageSizesWarned.has(seen)) return;
    this.pageSizesWarned.add(seen);
    this.log.warn(
      { feed, pageSize: seen, configured: this.config.adnPageSize },
      "the ADN sent a full page of another size than NFSE_ADN_PAGE_SIZE; set it to the ADN's page size",
    );
  }

  private async runUnderLease(job: FeedJob): Promise<RunResult> {
    const lease = await this.leases.tryAcquire(leaseKeyOf(job.feed));
    if (!lease) {
      const current = await this.leases.holderOf(leaseKeyOf(job.feed)).catch(() => null);
      // Rare after a sweep that read the holders first: a race with another replica, or a lease left by a
      // holder that stopped without giving it back (it lasts until the bucket's TTL).
      this.log.info({ feed: feedId(job.feed), holder: current?.holder ?? null }, "feed job skipped: its lease is held");
      return { kind: "lease-held", ...(current ? { holder: current.holder } : {}) };
    }
    // The run's fields on each line rather than a child logger: a child per run serialises and redacts its
    // bindings once more per run, for the one or two lines a run writes.
    const runFields = { feed: feedId(job.feed), fence: lease.fenceToken.toString() };
    try {
      const result = await syncFeed(this.deps, lease, job.feed, {
        trigger: job.trigger,
        pool: job.pool,
        emptyResultBackoffMs: this.config.emptyResultBackoffMs,
        failureBackoffMs: this.failureBackoffMs(job.key),
        ...(job.pool === SyncPool.BOOTSTRAP ? { sliceMs: this.config.bootstrapSliceMs } : {}),
        // Only the sweep's runs of caught-up feeds: a bootstrap, a resumed slice or an operator's sync
        // goes on until the ADN says nothing is newer (decision 0061).
        ...(job.pool === SyncPool.INCREMENTAL && job.trigger === RunTrigger.SCHEDULED && this.config.shortPageEndRuns > 0
          ? { shortPageEnd: { pageSize: this.config.adnPageSize, maxRuns: this.config.shortPageEndRuns } }
          : {}),
      });
      if (result.kind === "finished" && result.fullPageSize !== undefined) this.checkPageSize(result.fullPageSize, runFields.feed);
      if (result.kind === "finished" && result.outcome === RunOutcome.FAILED) {
        this.failures.set(job.key, (this.failures.get(job.key) ?? 0) + 1);
        this.log.warn({ ...runFields, runId: result.runId, error: result.error }, "feed run failed");
      } else {
        if (result.kind === "finished") this.failures.delete(job.key);
        this.log.info(
          {
            ...runFields,
            kind: result.kind,
            ...(result.kind === "finished"
              ? {
                  outcome: RunOutcome[result.outcome],
                  runId: result.runId,
                  items: result.items,
                  cursor: result.cursor.toString(),
                  ...(result.endedAtShortPage ? { endedAtShortPage: true } : {}),
                }
              : {}),
            ...(result.kind === "lease-lost" ? { runId: result.runId, items: result.items } : {}),
          },
          "feed run ended",
        );
      }
      return result;
    } finally {
      await lease.release().catch(() => false);
    }
  }
}
