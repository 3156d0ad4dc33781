import { randomUUID } from "node:crypto";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import type { FeedDecision } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import type { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { RunOutcome, RunTrigger, SyncPool, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { LeaseManager } from "../../libs/leases/types.js";
import type { Logger } from "../../libs/log/logger.js";
import type { CoordinatorConfig } from "./config.js";
import { decide } from "./decide.js";
import { feedId, leaseKeyOf } from "./feed-key.js";
import { FleetViewBuilder } from "./fleet-view.js";
import type { CoordinatorMetrics } from "./metrics.js";
import { WorkerPool } from "./pool.js";
import { reconcileFeed } from "./reconcile.js";
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
  /** Whether a municipality has an ACTIVE certificate (the vault knows); undefined skips the check. */
  hasActiveCertificate?: (ibge: string) => Promise<boolean>;
  metrics?: CoordinatorMetrics;
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
  /** Single-NSU look-ups spent per feed in the current hour (this replica's share of the budget). */
  private readonly spent = new Map<string, { hour: number; calls: number }>();

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

  dequeue(key: string): boolean {
    return this.pools().some((p) => p.dequeue(key));
  }

  private async runJob(job: FeedJob): Promise<void> {
    const result = await this.deps.runner.run(job);
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
  async enqueueFeeds(filter: FeedFilter, trigger: RunTrigger, target?: WorkerPool<FeedJob>, observe?: (s: SyncState) => void): Promise<FeedDecision[]> {
    const decisions: FeedDecision[] = [];
    const certificates = new Map<string, boolean>();
    for await (const state of this.states(filter)) {
      observe?.(state);
      if (!state.feed) continue;
      const key = feedId(state.feed);
      const queuedHere = this.isQueuedHere(key);
      const holder = queuedHere ? undefined : (await this.deps.leases.holderOf(leaseKeyOf(state.feed)))?.holder;
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
    const view = new FleetViewBuilder(this.deps.now());
    const decisions = await this.enqueueFeeds({}, RunTrigger.SCHEDULED, undefined, (s) => view.add(s));
    this.deps.metrics?.fleet(view.build());
    return decisions;
  }

  /** SyncAll: every eligible feed, through a pool of its own with the requested concurrency. */
  async sweepAll(filter: FeedFilter, concurrency: number): Promise<{ sweepId: string; decisions: FeedDecision[] }> {
    const sweepId = randomUUID();
    const pool = new WorkerPool<FeedJob>(`sweep-${sweepId}`, concurrency, (job) => this.runJob(job), (job, err) =>
      this.deps.log.error({ err, feed: job.key, sweepId }, "feed job crashed"),
    );
    this.sweeps.set(sweepId, pool);
    const decisions = await this.enqueueFeeds(filter, RunTrigger.SYNC_ALL, pool);
    void pool.idle().then(() => this.sweeps.delete(sweepId));
    return { sweepId, decisions };
  }

  private budgetLeft(key: string): number {
    const hour = Math.floor(this.deps.now() / 3_600_000);
    const used = this.spent.get(key);
    return this.deps.config.reconciliationBudgetPerHour - (used && used.hour === hour ? used.calls : 0);
  }

  private spend(key: string, calls: number): void {
    const hour = Math.floor(this.deps.now() / 3_600_000);
    const used = this.spent.get(key);
    this.spent.set(key, { hour, calls: (used && used.hour === hour ? used.calls : 0) + calls });
  }

  /**
   * Gap back-fill for every idle feed: under the feed's lease, single-NSU look-ups within the hourly
   * budget. A feed that is queued or running here is left for the next round.
   */
  async reconcileAll(): Promise<{ looked: number; filled: number; holes: number }> {
    const total = { looked: 0, filled: 0, holes: 0 };
    for await (const state of this.states({})) {
      if (!state.feed || !state.enabled || !state.municipalityActive) continue;
      // Gaps only mean something below a cursor that a finished sync has reached.
      if (state.lastNsu === 0n || state.lastSuccessAt === undefined) continue;
      const key = feedId(state.feed);
      const budget = this.budgetLeft(key);
      if (budget <= 0 || this.isQueuedHere(key)) continue;
      const lease = await this.deps.leases.tryAcquire(leaseKeyOf(state.feed));
      if (!lease) continue;
      try {
        const result = await reconcileFeed({ store: this.deps.store, gateway: this.deps.gateway }, lease, state.feed, budget);
        if (result.kind === "done") {
          this.spend(key, result.looked);
          total.looked += result.looked;
          total.filled += result.filled;
          total.holes += result.holes;
        }
      } finally {
        await lease.release().catch(() => false);
      }
    }
    if (total.looked > 0) this.deps.log.info(total, "reconciliation round");
    return total;
  }

  /** Periodic work: the incremental sweep, reconciliation, the watchdog and the run-log cleanup. */
  start(): void {
    const { config, log, store, now } = this.deps;
    const every = (ms: number, what: string, fn: () => Promise<unknown>) => {
      let busy = false; // a slow round is never overlapped by the next one
      const timer = setInterval(() => {
        if (busy) return;
        busy = true;
        void fn()
          .catch((err: unknown) => log.error({ err }, `${what} failed`))
          .finally(() => (busy = false));
      }, ms);
      timer.unref();
      this.timers.push(timer);
    };
    every(config.syncIntervalMs, "sweep", () => this.sweep());
    every(config.reconciliationIntervalMs, "reconciliation", () => this.reconcileAll());
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
