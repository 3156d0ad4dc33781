import { randomUUID } from "node:crypto";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { SkipReason, type FeedDecision } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import type { Ambiente, FeedKey, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { RunOutcome, RunTrigger, SyncPool, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { LeaseManager } from "../../libs/leases/types.js";
import type { Logger } from "../../libs/log/logger.js";
import type { CoordinatorConfig } from "./config.js";
import { decide } from "./decide.js";
import { feedId, leaseKeyOf } from "./feed-key.js";
import { uncheckedNsus } from "./gap-range.js";
import { FleetViewBuilder } from "./fleet-view.js";
import type { CoordinatorMetrics } from "./metrics.js";
import { WorkerPool } from "./pool.js";
import { reconcileFeed, type ReconcileResult } from "./reconcile.js";
import type { FeedJob, FeedRunner } from "./runner.js";

export interface FeedFilter {
  ibge?: string;
  ambiente?: Ambiente;
  tipoNsu?: TipoNsu;
}

export interface SchedulerDeps {
  store: Client<typeof StoreService>;
  gateway: Client<typeof AdnGatewayService>;
  leases: LeaseManager;
  runner: FeedRunner;
  config: CoordinatorConfig;
  log: Logger;
  now: () => number;
  /** Whether a municipality has an ACTIVE certificate (the vault knows; undefined = unknown); absent skips the check. */
  hasActiveCertificate?: (ibge: string) => Promise<boolean | undefined>;
  /** One look-up slot per certificate per 3600/budget seconds, shared by every replica; absent = no reconciliation. */
  reconciliationSlots?: { take(key: string): Promise<boolean> };
  metrics?: CoordinatorMetrics;
}

/** The slot key of a feed's certificate: one e-CNPJ serves every feed of a municipality in an ambiente. */
function certificateKey(feed: FeedKey): string {
  return `cert.${feed.ibge}.${feed.ambiente}`;
}

/** How many feeds a sweep queued and why it skipped the others, for its log line. */
export function decisionCounts(decisions: FeedDecision[]): { feeds: number; accepted: number; skipped: Record<string, number> } {
  const skipped: Record<string, number> = {};
  let accepted = 0;
  for (const d of decisions) {
    if (d.accepted) accepted++;
    else {
      const reason = SkipReason[d.reason] ?? String(d.reason);
      skipped[reason] = (skipped[reason] ?? 0) + 1;
    }
  }
  return { feeds: decisions.length, accepted, skipped };
}

/** Spacing between two look-ups of one certificate: the hourly budget spread evenly. */
export function reconciliationSpacingMs(config: Pick<CoordinatorConfig, "reconciliationBudgetPerHour">): number {
  return Math.ceil(3_600_000 / Math.max(1, config.reconciliationBudgetPerHour));
}

/**
 * When the first gap scan runs after the coordinator's start: half way to its next sweep (or to its next
 * scan, if scans come more often), so that the hourly scan falls between two sweeps and not on one
 * (decision 0063). With the defaults, 150 s after the start and then every hour.
 */
export function gapScanOffsetMs(config: Pick<CoordinatorConfig, "syncIntervalMs" | "reconciliationIntervalMs">): number {
  return Math.floor(Math.min(config.syncIntervalMs, config.reconciliationIntervalMs) / 2);
}

/**
 * Who syncs what, when, in this replica: the incremental and bootstrap pools, the periodic sweep, the
 * watchdog and the run-log cleanup. Replicas coordinate only through the leases and the store.
 */
export class Scheduler {
  readonly incremental: WorkerPool<FeedJob>;
  readonly bootstrap: WorkerPool<FeedJob>;
  private readonly sweeps = new Map<string, WorkerPool<FeedJob>>();
  private readonly timers: NodeJS.Timeout[] = [];
  /** Feeds with NSU gaps, as of the last gap scan (or step), by feed id. */
  private readonly gapFeeds = new Map<string, FeedKey>();
  /** When this replica last took a reconciliation step on each feed: a certificate's feeds take turns. */
  private readonly lastStep = new Map<string, number>();

  constructor(private readonly deps: SchedulerDeps) {
    const onError = (job: FeedJob, err: unknown) => deps.log.error({ err, feed: job.key }, "feed job crashed");
    this.incremental = new WorkerPool("incremental", deps.config.workerConcurrency, (job) => this.runJob(job), onError);
    this.bootstrap = new WorkerPool("bootstrap", deps.config.bootstrapConcurrency, (job) => this.runJob(job), onError);
  }

  private pools(): WorkerPool<FeedJob>[] {
    return [this.incremental, this.bootstrap, ...this.sweeps.values()];
  }

  isQueuedHere(key: string): boolean {
    return this.pools().some((p) => p.has(key));
  }

  /**
   * The feeds waiting for a worker in this replica's pools, read from memory alone. A job a worker has
   * just taken shows as QUEUED until its lease is held (milliseconds) but is not among these.
   */
  queuedFeeds(): FeedKey[] {
    return this.pools().flatMap((p) => p.queued().map((j) => j.feed));
  }

  dequeue(key: string): boolean {
    return this.pools().some((p) => p.dequeue(key));
  }

  private async runJob(job: FeedJob): Promise<void> {
    const result = await this.deps.runner.run(job);
    // The run's last ADN call (an end-of-stream answer, a 429, a failure) uses up the certificate's
    // current look-up slot: no reconciliation look-up follows it within 3600/budget seconds.
    if (result.kind === "finished") {
      await this.deps.reconciliationSlots?.take(certificateKey(job.feed)).catch(() => false);
    }
    // A bootstrap that used up its slice goes to the back of its queue: the others get their turn.
    if (result.kind === "finished" && result.outcome === RunOutcome.YIELDED && job.pool === SyncPool.BOOTSTRAP) {
      setImmediate(() => this.bootstrap.enqueue({ ...job, trigger: RunTrigger.RESUME }));
    }
  }

  private async *states(filter: FeedFilter): AsyncGenerator<SyncState> {
    let pageToken = "";
    do {
      const page = await this.deps.store.listSyncStates({
        ibge: filter.ibge ?? "",
        ...(filter.ambiente !== undefined ? { ambiente: filter.ambiente } : {}),
        ...(filter.tipoNsu !== undefined ? { tipoNsu: filter.tipoNsu } : {}),
        pageSize: 500,
        pageToken,
      });
      yield* page.states;
      pageToken = page.nextPageToken;
    } while (pageToken);
  }

  /**
   * Decides every feed matching the filter and enqueues the accepted ones: into `target` when given
   * (a SyncAll sweep with its own concurrency), otherwise into the pool the feed belongs to.
   */
  async enqueueFeeds(
    filter: FeedFilter,
    trigger: RunTrigger,
    target?: WorkerPool<FeedJob>,
    observe?: (s: SyncState) => void,
  ): Promise<FeedDecision[]> {
    const decisions: FeedDecision[] = [];
    const certificates = new Map<string, boolean>();
    // One read of every lease per sweep, not one KV get per feed: 11,140 sequential gets took ≈ 31 s
    // on a loaded 2-core machine (bench/sweep-parts.ts).
    const holders = await this.deps.leases.holders();
    for await (const state of this.states(filter)) {
      observe?.(state);
      if (!state.feed) continue;
      const key = feedId(state.feed);
      const queuedHere = this.isQueuedHere(key);
      const holder = queuedHere ? undefined : holders.get(leaseKeyOf(state.feed));
      let hasCert: boolean | undefined;
      if (this.deps.hasActiveCertificate) {
        const ibge = state.feed.ibge;
        if (!certificates.has(ibge)) {
          // The vault being unreachable must not stop every feed: the gateway will refuse on its own.
          const known = await this.deps.hasActiveCertificate(ibge).catch((err: unknown) => {
            this.deps.log.warn({ err, ibge }, "could not ask the vault for an active certificate");
            return undefined;
          });
          if (known !== undefined) certificates.set(ibge, known);
        }
        hasCert = certificates.get(ibge);
      }
      const decision = decide(state, {
        now: this.deps.now(),
        queuedHere,
        ...(holder ? { leaseHolder: holder } : {}),
        ...(hasCert !== undefined ? { hasActiveCertificate: hasCert } : {}),
        bootstrapThresholdNsu: this.deps.config.bootstrapThresholdNsu,
      });
      if (decision.accepted) {
        const pool = target ?? (decision.pool === SyncPool.BOOTSTRAP ? this.bootstrap : this.incremental);
        pool.enqueue({ key, feed: state.feed, trigger, pool: decision.pool });
      }
      decisions.push(decision);
    }
    return decisions;
  }

  /** The periodic sweep: every feed decided, and the fleet view of what it read published as metrics. */
  async sweep(): Promise<FeedDecision[]> {
    const started = performance.now();
    const view = new FleetViewBuilder(this.deps.now());
    const decisions = await this.enqueueFeeds({}, RunTrigger.SCHEDULED, undefined, (s) => view.add(s));
    this.deps.metrics?.fleet(view.build());
    this.deps.log.info({ ...decisionCounts(decisions), ms: Math.round(performance.now() - started) }, "sweep decided");
    return decisions;
  }

  /** SyncAll: every eligible feed, through a pool of its own with the requested concurrency. */
  async sweepAll(filter: FeedFilter, concurrency: number): Promise<{ sweepId: string; decisions: FeedDecision[] }> {
    const sweepId = randomUUID();
    const pool = new WorkerPool<FeedJob>(
      `sweep-${sweepId}`,
      concurrency,
      (job) => this.runJob(job),
      (job, err) => this.deps.log.error({ err, feed: job.key, sweepId }, "feed job crashed"),
    );
    this.sweeps.set(sweepId, pool);
    const decisions = await this.enqueueFeeds(filter, RunTrigger.SYNC_ALL, pool);
    void pool.idle().then(() => this.sweeps.delete(sweepId));
    return { sweepId, decisions };
  }

  /**
   * Which feeds have NSU gaps below their cursor, refreshed every NFSE_RECONCILIATION_INTERVAL_SECONDS.
   * The store only (it records how far each feed was found complete): the ADN is called by the paced
   * steps below.
   */
  async scanGaps(): Promise<number> {
    const seen = new Set<string>();
    for await (const state of this.states({})) {
      if (!state.feed) continue;
      const key = feedId(state.feed);
      seen.add(key);
      // Gaps only mean something below a cursor that a finished sync has reached.
      if (!state.enabled || !state.municipalityActive || state.lastNsu === 0n || state.lastSuccessAt === undefined) {
        this.gapFeeds.delete(key);
        continue;
      }
      // A feed whose cursor has not moved since it was found complete costs no call.
      const range = uncheckedNsus(state);
      if (!range) {
        this.gapFeeds.delete(key);
        continue;
      }
      const found = await this.deps.store.findNsuGaps({ feed: state.feed, range, limit: 1, recordChecked: true });
      if (found.gaps.length > 0) this.gapFeeds.set(key, state.feed);
      else this.gapFeeds.delete(key);
    }
    for (const key of this.gapFeeds.keys()) if (!seen.has(key)) this.gapFeeds.delete(key);
    // Turns matter only among a certificate's feeds with gaps: a feed without any starts first again if
    // it gets some, and a feed gone from the fleet leaves no entry behind (decision 0037).
    for (const key of this.lastStep.keys()) if (!this.gapFeeds.has(key)) this.lastStep.delete(key);
    return this.gapFeeds.size;
  }

  /**
   * One paced round of gap back-fill: for every certificate (municipality × ambiente) with a feed that
   * has gaps, take the certificate's slot — one per 3600/budget seconds, shared by every replica through
   * NATS KV — and spend it on one single-NSU look-up of one of its feeds (they take turns). A feed that
   * is queued or running here, or whose lease someone holds, waits for a later round.
   */
  async reconcileStep(): Promise<{ looked: number; filled: number; holes: number }> {
    const total = { looked: 0, filled: 0, holes: 0 };
    const slots = this.deps.reconciliationSlots;
    if (!slots) return total;
    const byCertificate = new Map<string, [string, FeedKey][]>();
    for (const [key, feed] of this.gapFeeds) {
      const certificate = certificateKey(feed);
      const feeds = byCertificate.get(certificate) ?? [];
      feeds.push([key, feed]);
      byCertificate.set(certificate, feeds);
    }
    const step = async (certificate: string, feeds: [string, FeedKey][]) => {
      const candidates = feeds.filter(([key]) => !this.isQueuedHere(key));
      if (candidates.length === 0 || !(await slots.take(certificate))) return;
      candidates.sort(([a], [b]) => (this.lastStep.get(a) ?? 0) - (this.lastStep.get(b) ?? 0));
      for (const [key, feed] of candidates) {
        const lease = await this.deps.leases.tryAcquire(leaseKeyOf(feed));
        if (!lease) continue;
        let result: ReconcileResult;
        try {
          result = await reconcileFeed({ store: this.deps.store, gateway: this.deps.gateway, now: this.deps.now }, lease, feed, {
            failureBackoffMs: this.deps.config.failureBackoffBaseMs,
          });
        } finally {
          await lease.release().catch(() => false);
        }
        this.lastStep.set(key, this.deps.now());
        if (result.kind === "no-gaps") {
          this.gapFeeds.delete(key);
          continue; // the slot is still unspent: a sibling feed may use it
        }
        if (result.kind === "done") {
          total.looked += result.looked;
          total.filled += result.filled;
          total.holes += result.holes;
          if (result.outcome === RunOutcome.CAUGHT_UP && !result.remainingGaps) this.gapFeeds.delete(key);
          if (result.error)
            this.deps.log.warn(
              { feed: key, runId: result.runId, outcome: RunOutcome[result.outcome], error: result.error },
              "reconciliation look-up failed",
            );
        }
        return; // one look-up (or one wait, shared by the certificate's feeds) per slot
      }
    };
    const queue = [...byCertificate];
    const worker = async () => {
      for (let next = queue.shift(); next; next = queue.shift()) {
        await step(...next).catch((err: unknown) => this.deps.log.error({ err, certificate: next![0] }, "reconciliation step failed"));
      }
    };
    await Promise.all(Array.from({ length: Math.min(queue.length, this.deps.config.workerConcurrency) }, worker));
    if (total.looked > 0) this.deps.log.debug(total, "reconciliation round");
    return total;
  }

  /** Periodic work: the incremental sweep, reconciliation, the watchdog and the run-log cleanup. */
  start(): void {
    const { config, log, store, now } = this.deps;
    /** Every `ms` from now, or from `firstAfterMs` on (then once at that moment too). */
    const every = (ms: number, what: string, fn: () => Promise<unknown>, firstAfterMs?: number) => {
      let busy = false; // a slow round is never overlapped by the next one
      const tick = () => {
        if (busy) return;
        busy = true;
        void fn()
          .catch((err: unknown) => log.error({ err }, `${what} failed`))
          .finally(() => (busy = false));
      };
      const repeat = () => {
        const timer = setInterval(tick, ms);
        timer.unref();
        this.timers.push(timer);
      };
      if (firstAfterMs === undefined) return repeat();
      const first = setTimeout(() => {
        tick();
        repeat();
      }, firstAfterMs);
      first.unref();
      this.timers.push(first);
    };
    every(config.syncIntervalMs, "sweep", () => this.sweep());
    if (this.deps.reconciliationSlots && config.reconciliationBudgetPerHour > 0) {
      // How long a scan took and what it found, for operators (and the fleet bench, which waits for it).
      const scan = async () => {
        const startedAt = performance.now();
        const feedsWithGaps = await this.scanGaps();
        log.info({ feedsWithGaps, ms: Math.round(performance.now() - startedAt) }, "gap scan");
      };
      // Half a sweep interval after the sweeps, so that the two fleet-wide reads never add up (decision 0063).
      every(config.reconciliationIntervalMs, "gap scan", scan, gapScanOffsetMs(config));
      // Rounds run several times per slot period so that a slot is used soon after the previous one
      // expires; the slot, not this timer, is what bounds the rate.
      every(Math.max(250, reconciliationSpacingMs(config) / 4), "reconciliation", () => this.reconcileStep());
    }
    every(Math.min(config.staleLockMs / 4, 300_000), "watchdog", () =>
      store.expireStaleRuns({ staleBefore: timestampFromMs(now() - config.staleLockMs), requestedBy: "coordinator-watchdog" }),
    );
    every(6 * 3600_000, "cleanup", () =>
      store.purgeRunLogs({
        finishedBefore: timestampFromMs(now() - 30 * 86_400_000),
        failedFinishedBefore: timestampFromMs(now() - 90 * 86_400_000),
      }),
    );
    void this.sweep().catch((err: unknown) => log.error({ err }, "first sweep failed"));
  }

  async stop(): Promise<void> {
    for (const t of this.timers) clearInterval(t);
    await Promise.all(this.pools().map((p) => p.close()));
  }
}
