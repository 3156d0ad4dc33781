import { threadsPerCpu } from "../../libs/worker-pool/index.js";
import { join } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { MYSQL_URL_FORMAT, parseMysqlUrl } from "../../libs/db/pool.js";
import { readPageTokenSecret, type PageTokenSecret } from "../../libs/rpc/page-token.js";

export interface BillingConfig {
  mysqlUrl: string;
  /** HMAC key of every List RPC's page tokens; replicas behind one address must share it. */
  pageTokenSecret: PageTokenSecret;
  natsUrl: string;
  /** JetStream replicas of the work-queue and dead-letter streams (NATS_REPLICAS). */
  natsReplicas: number;
  /** Items accepted per boleto job (seed 003: JOB_MAX_ITENS). */
  maxItems: number;
  /** Prefix of the JetStream streams, subjects and consumers: separate deployments (and test runs) never share queues. */
  natsPrefix: string;
  /** Boleto items processed at once by this process. */
  renderConcurrency: number;
  /** CNAB sub-batches generated at once by this process. */
  cnabConcurrency: number;
  /** Retorno files parsed at once by this process. */
  retornoConcurrency: number;
  /** Títulos accepted per remessa job. */
  remessaMaxTitulos: number;
  /** Títulos per remessa file (below the layout's hard limit); unset = the hard limit. */
  remessaMaxTitulosPorArquivo?: number;
  /** Retorno bytes accepted inline in CreateRetornoJob; larger files go through artifacts. */
  retornoInlineMaxBytes: number;
  /** Largest retorno file parsed (inline or artifact). */
  retornoMaxBytes: number;
  /** Worker threads rendering PDFs. */
  renderThreads: number;
  /** A render slower than this fails the item with RENDER_TIMEOUT (retryable). */
  itemTimeoutMs: number;
  /** A job not finished this long after its pick-up has its unfinished items failed with JOB_TIMEOUT. */
  jobTimeoutMs: number;
  /** JetStream ack_wait: longer than the longest task; heartbeats (`working`) extend it while a task runs. */
  ackWaitMs: number;
  /** Deliveries before a message is given up (and logged as dead-lettered). */
  maxDeliver: number;
  /** Jobs of one tenant running at once; later ones wait in RECEIVED. */
  tenantMaxRunningJobs: number;
  /** Lifetime of the job's artifacts in days (the artifacts service's ARTIFACT_TTL_DIAS). */
  artifactTtlDays: number;
  /** The same in milliseconds; BILLING_ARTIFACT_TTL_SECONDS overrides it (tests of expiry). */
  artifactTtlMs: number;
  /** How often stalled jobs are looked for and re-enqueued. */
  reconcileIntervalMs: number;
  /** Finished jobs last changed longer ago than this are deleted with their rows; 0 = kept forever. */
  retentionMs: number;
  /** How often the retention purge runs. */
  retentionSweepMs: number;
  webhook: {
    maxAttempts: number;
    timeoutMs: number;
    backoffBaseMs: number;
    backoffMaxMs: number;
    pollMs: number;
    concurrency: number;
    /** Plain-HTTP endpoints, for development only. */
    allowHttp: boolean;
    /** Loopback, private and link-local endpoint addresses (development, in-cluster receivers). */
    allowPrivate: boolean;
  };
  /**
   * How callers prove their tenant: a file of per-tenant API token digests, or a network that
   * authenticates them before billing (explicitly chosen; neither is refused).
   */
  tenantAuth: { mode: "tokens"; file: string } | { mode: "trusted-network" };
  /** Test-only fault injection: SIGKILL this process at a named point of the boleto pipeline. */
  migrateOnStart: boolean;
  migrationsDir: string;
  mysqlConnectionLimit: number;
}

/**
 * Items in flight per process. Each spends most of its time waiting on round trips (MySQL, NATS,
 * artifacts), so well more than the render threads: on 2 cores bench:billing measured 16 in flight
 * ≈ 1.35× faster per item than 4, with less CPU per job (puts batch, fewer idle wake-ups).
 */
export const DEFAULT_RENDER_CONCURRENCY = 16;

/**
 * One render thread per CPU (the main thread mostly waits: on 2 cores 2 threads beat 1 by ≈ 1.15×), but at
 * most 4 unless asked: each thread holds its own PDF engine, and availableParallelism() counts the host's
 * CPUs, not a container's CPU quota (deploy/k8s gives billing 512 MiB). docs/decisions/0010-pdf-rendering-in-worker-threads.md.
 */
export function defaultRenderThreads(renderConcurrency: number): number {
  return Math.min(renderConcurrency, threadsPerCpu());
}

function readTenantAuth(env: EnvReader): BillingConfig["tenantAuth"] {
  const file = env.optionalString("BILLING_TENANT_TOKENS_FILE");
  const trusted = env.bool("BILLING_TRUST_NETWORK", { default: false });
  if (file !== undefined && trusted)
    throw new ConfigError(
      "BILLING_TRUST_NETWORK",
      "cannot be true together with BILLING_TENANT_TOKENS_FILE: choose tenant tokens or a trusted network",
    );
  if (file !== undefined) return { mode: "tokens", file };
  if (trusted) return { mode: "trusted-network" };
  throw new ConfigError(
    "BILLING_TENANT_TOKENS_FILE",
    "is required: per-tenant API tokens (`malha billing tokens new` prints a token and its line), or BILLING_TRUST_NETWORK=true when callers are authenticated in front of billing",
  );
}

export function readBillingConfig(env: EnvReader): BillingConfig {
  const renderConcurrency = env.int("BILLING_RENDER_CONCURRENCY", { default: DEFAULT_RENDER_CONCURRENCY, min: 1, max: 256 });
  const artifactTtlDays = env.int("ARTIFACT_TTL_DIAS", { default: 7, min: 1, max: 3650 });
  const itemTimeoutMs = env.durationMs("BILLING_ITEM_TIMEOUT_SECONDS", { default: 30_000, minSeconds: 0.001, maxSeconds: 3600 });
  const retentionDays = env.int("BILLING_RETENTION_DAYS", { default: 180, min: 0, max: 36_500 });
  // A job deleted while its files live would leave them unreachable through the API until they expire.
  if (retentionDays > 0 && retentionDays < artifactTtlDays)
    throw new ConfigError("BILLING_RETENTION_DAYS", `must be 0 (keep forever) or at least ARTIFACT_TTL_DIAS (${artifactTtlDays})`);
  const porArquivo = env.optionalString("BILLING_REMESSA_MAX_TITULOS_POR_ARQUIVO")
    ? env.int("BILLING_REMESSA_MAX_TITULOS_POR_ARQUIVO", { min: 1, max: 999_999 })
    : undefined;
  return {
    mysqlUrl: env.parse("MYSQL_URL", (url) => (parseMysqlUrl(url), url), { hint: MYSQL_URL_FORMAT }),
    pageTokenSecret: readPageTokenSecret(env, "BILLING_PAGE_TOKEN_SECRET"),
    natsUrl: env.url("NATS_URL", ["nats:", "tls:"]),
    natsReplicas: env.int("NATS_REPLICAS", { default: 1, min: 1, max: 5 }),
    maxItems: env.int("JOB_MAX_ITENS", { default: 200, min: 1, max: 100_000 }),
    natsPrefix: env.string("BILLING_NATS_PREFIX", { default: "billing", pattern: /^[A-Za-z0-9_-]{1,32}$/, hint: "1-32 of [A-Za-z0-9_-]" }),
    renderConcurrency,
    cnabConcurrency: env.int("BILLING_CNAB_CONCURRENCY", { default: 2, min: 1, max: 64 }),
    retornoConcurrency: env.int("BILLING_RETORNO_CONCURRENCY", { default: 2, min: 1, max: 64 }),
    remessaMaxTitulos: env.int("BILLING_REMESSA_MAX_TITULOS", { default: 10_000, min: 1, max: 1_000_000 }),
    ...(porArquivo !== undefined ? { remessaMaxTitulosPorArquivo: porArquivo } : {}),
    retornoInlineMaxBytes: env.int("BILLING_RETORNO_INLINE_MAX_BYTES", { default: 4 * 1024 * 1024, min: 1024, max: 64 * 1024 * 1024 }),
    retornoMaxBytes: env.int("BILLING_RETORNO_MAX_BYTES", { default: 64 * 1024 * 1024, min: 1024, max: 1024 * 1024 * 1024 }),
    renderThreads: env.int("BILLING_RENDER_THREADS", { default: defaultRenderThreads(renderConcurrency), min: 1, max: 64 }),
    itemTimeoutMs,
    jobTimeoutMs: env.durationMs("BILLING_JOB_TIMEOUT_SECONDS", { default: 3_600_000, minSeconds: 1, maxSeconds: 7 * 86_400 }),
    ackWaitMs: env.durationMs("BILLING_ACK_WAIT_SECONDS", {
      default: Math.max(60_000, 2 * itemTimeoutMs),
      minSeconds: 1,
      maxSeconds: 86_400,
    }),
    maxDeliver: env.int("BILLING_MAX_DELIVER", { default: 10, min: 2, max: 1000 }),
    tenantMaxRunningJobs: env.int("BILLING_TENANT_MAX_RUNNING_JOBS", { default: 4, min: 1, max: 10_000 }),
    artifactTtlDays,
    artifactTtlMs: env.durationMs("BILLING_ARTIFACT_TTL_SECONDS", {
      default: artifactTtlDays * 86_400_000,
      minSeconds: 1,
      maxSeconds: 3650 * 86_400,
    }),
    reconcileIntervalMs: env.durationMs("BILLING_RECONCILE_SECONDS", { default: 30_000, minSeconds: 0.1, maxSeconds: 3600 }),
    retentionMs: retentionDays * 86_400_000,
    retentionSweepMs: env.durationMs("BILLING_RETENTION_SWEEP_SECONDS", { default: 3_600_000, minSeconds: 0.1, maxSeconds: 86_400 }),
    webhook: {
      maxAttempts: env.int("BILLING_WEBHOOK_MAX_ATTEMPTS", { default: 8, min: 1, max: 100 }),
      timeoutMs: env.durationMs("BILLING_WEBHOOK_TIMEOUT_SECONDS", { default: 10_000, minSeconds: 0.1, maxSeconds: 120 }),
      backoffBaseMs: env.durationMs("BILLING_WEBHOOK_BACKOFF_SECONDS", { default: 5_000, minSeconds: 0.01, maxSeconds: 3600 }),
      backoffMaxMs: env.durationMs("BILLING_WEBHOOK_BACKOFF_MAX_SECONDS", { default: 3_600_000, minSeconds: 0.01, maxSeconds: 86_400 }),
      pollMs: env.durationMs("BILLING_WEBHOOK_POLL_SECONDS", { default: 1_000, minSeconds: 0.05, maxSeconds: 600 }),
      concurrency: env.int("BILLING_WEBHOOK_CONCURRENCY", { default: 8, min: 1, max: 256 }),
      allowHttp: env.bool("BILLING_WEBHOOK_ALLOW_HTTP", { default: false }),
      allowPrivate: env.bool("BILLING_WEBHOOK_ALLOW_PRIVATE", { default: false }),
    },
    tenantAuth: readTenantAuth(env),
    migrateOnStart: env.bool("BILLING_MIGRATE_ON_START", { default: true }),
    migrationsDir: env.string("MIGRATIONS_DIR", { default: join(projectRoot(), "migrations") }),
    mysqlConnectionLimit: env.int("MYSQL_CONNECTION_LIMIT", { default: 10, min: 1, max: 1000 }),
  };
}
