import type { EnvReader } from "../../libs/config/env.js";

/** Coordinator settings; the NFSE_* names are seed 000's and stay as they are. */
export interface CoordinatorConfig {
  natsUrl: string;
  /**
   * Incremental pool size (seed: NFSE_WORKER_CONCURRENCY). The ADN limits each certificate, and a feed
   * has one run at a time, so runs of different municipalities may overlap freely: the pool is sized
   * for a fleet (decision 0024), by the runs in flight a 30-s sweep of 11,140 feeds needs (0037), and
   * twice that so that the runs' batched store calls stay large on a host short of CPU (0067).
   */
  workerConcurrency: number;
  /** Bootstrap pool size: long first syncs, CPU-bound at fleet level well before 16 (decision 0024). */
  bootstrapConcurrency: number;
  syncIntervalMs: number;
  /** Wait after "no more documents" (the ADN's one-hour rule; never below 3600 s in production). */
  emptyResultBackoffMs: number;
  progressEvery: number;
  staleLockMs: number;
  leaseBucket: string;
  /** JetStream replicas of the lease bucket (NATS_REPLICAS). */
  natsReplicas: number;
  leaseTtlMs: number;
  /** A bootstrap run gives its lease back after this long and resumes later from its cursor. */
  bootstrapSliceMs: number;
  /** A feed whose cursor is this far behind what the ADN reported counts as a bootstrap. */
  bootstrapThresholdNsu: bigint;
  /**
   * Single-NSU look-ups per certificate (municipality × ambiente) per hour for gap back-fill, spread
   * evenly: one every 3600/budget s across all replicas (the NF-e rule is 20/h). 0 = no reconciliation.
   */
  reconciliationBudgetPerHour: number;
  /** How often feeds are scanned for NSU gaps (a store read; the look-ups themselves are paced). */
  reconciliationIntervalMs: number;
  /** Backoff after a failed run: base, doubled per consecutive failure, capped. */
  failureBackoffBaseMs: number;
  failureBackoffMaxMs: number;
  /** How old the cached list of the vault's ACTIVE certificates may get (feed status, sweep checks). */
  certificateRefreshMs: number;
  /**
   * The ADN's page size (50 observed in 2026): a scheduled incremental run ends at a page with fewer
   * entries, without the second call that would only hear "nothing newer" (decision 0061).
   */
  adnPageSize: number;
  /** Runs of a feed in a row that may end so; the next one asks until the ADN's end. 0: never. */
  shortPageEndRuns: number;
}

export function readCoordinatorConfig(env: EnvReader): CoordinatorConfig {
  return {
    natsUrl: env.url("NATS_URL", ["nats:", "tls:"], { hint: "nats://host:4222" }),
    workerConcurrency: env.int("NFSE_WORKER_CONCURRENCY", { default: 512, min: 1, max: 1024 }),
    bootstrapConcurrency: env.int("NFSE_BOOTSTRAP_CONCURRENCY", { default: 16, min: 1, max: 256 }),
    syncIntervalMs: env.durationMs("NFSE_SYNC_INTERVAL_SECONDS", { default: 300_000, minSeconds: 1 }),
    emptyResultBackoffMs: env.durationMs("NFSE_EMPTY_RESULT_BACKOFF_SECONDS", { default: 3_600_000 }),
    progressEvery: env.int("NFSE_SYNC_PROGRESS_EVERY", { default: 100, min: 1, max: 100_000 }),
    staleLockMs: env.int("NFSE_SYNC_STALE_LOCK_MINUTES", { default: 120, min: 1, max: 10_080 }) * 60_000,
    leaseBucket: env.string("COORDINATOR_LEASE_BUCKET", {
      default: "malha_leases",
      pattern: /^[A-Za-z0-9_-]{1,64}$/,
      hint: "letters, digits, _ and -",
    }),
    natsReplicas: env.int("NATS_REPLICAS", { default: 1, min: 1, max: 5 }),
    leaseTtlMs: env.durationMs("COORDINATOR_LEASE_TTL_SECONDS", { default: 30_000, minSeconds: 1, maxSeconds: 3600 }),
    bootstrapSliceMs: env.durationMs("NFSE_BOOTSTRAP_SLICE_SECONDS", { default: 600_000, minSeconds: 1 }),
    bootstrapThresholdNsu: BigInt(env.int("NFSE_BOOTSTRAP_THRESHOLD_NSU", { default: 10_000, min: 1 })),
    reconciliationBudgetPerHour: env.int("NFSE_RECONCILIATION_BUDGET_PER_HOUR", { default: 20, min: 0, max: 3600 }),
    reconciliationIntervalMs: env.durationMs("NFSE_RECONCILIATION_INTERVAL_SECONDS", { default: 3_600_000, minSeconds: 1 }),
    failureBackoffBaseMs: env.durationMs("NFSE_FAILURE_BACKOFF_SECONDS", { default: 60_000, minSeconds: 1 }),
    failureBackoffMaxMs: env.durationMs("NFSE_FAILURE_BACKOFF_MAX_SECONDS", { default: 3_600_000, minSeconds: 1 }),
    certificateRefreshMs: env.durationMs("COORDINATOR_CERTIFICATE_REFRESH_SECONDS", { default: 60_000, minSeconds: 1, maxSeconds: 86_400 }),
    adnPageSize: env.int("NFSE_ADN_PAGE_SIZE", { default: 50, min: 1, max: 1000 }),
    shortPageEndRuns: env.int("NFSE_SHORT_PAGE_END_RUNS", { default: 3, min: 0, max: 100 }),
  };
}
