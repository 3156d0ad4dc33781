import { join } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { MYSQL_URL_FORMAT, parseMysqlUrl } from "../../libs/db/pool.js";
import { threadsPerCpu } from "../../libs/worker-pool/index.js";

export interface DanfseConfig {
  /** Export jobs (danfse_exports); the notes themselves are read from the store. */
  mysqlUrl: string;
  mysqlConnectionLimit: number;
  migrateOnStart: boolean;
  migrationsDir: string;
  /** Worker threads rendering PDFs. */
  renderThreads: number;
  /** A render slower than this fails its note (the thread is replaced). */
  renderTimeoutMs: number;
  /** V8 heap limit of each render thread, MB (old generation; the young one is a quarter of it, at most 16). */
  renderThreadHeapMb: number;
  /** Notes of one export in flight: read in batches of half as many, one batch read while the other is drawn (the zip keeps their order). */
  exportConcurrency: number;
  /** Most notes one export may hold (RESOURCE_EXHAUSTED TOO_MANY_NOTES above). */
  exportMaxNotes: number;
  /** Lifetime of an export's zip in the artifacts service; the export row goes with it. */
  exportTtlMs: number;
  /** The longest an export may run before it fails (its zip is one upload call). */
  exportTimeoutMs: number;
  /** Lifetime of a signed download link. */
  linkTtlMs: number;
  /** A RUNNING export whose heartbeat is older than this is FAILED as INTERRUPTED (its process is gone). */
  exportStaleMs: number;
  /** How often the running exports heartbeat and the stale ones are looked for. */
  heartbeatMs: number;
}

/** The zip has no ZIP64: 65,535 entries at most, one of them manifest.json. */
export const EXPORT_MAX_NOTES_LIMIT = 65_000;

export function readDanfseConfig(env: EnvReader): DanfseConfig {
  const heartbeatMs = env.durationMs("DANFSE_EXPORT_HEARTBEAT_SECONDS", { default: 2_000, minSeconds: 0.05, maxSeconds: 600 });
  const exportStaleMs = env.durationMs("DANFSE_EXPORT_STALE_SECONDS", {
    default: Math.max(60_000, 6 * heartbeatMs),
    minSeconds: 0.1,
    maxSeconds: 86_400,
  });
  // A live export misses a heartbeat or two under load; it must not be taken for a dead one.
  if (exportStaleMs < 3 * heartbeatMs)
    throw new ConfigError(
      "DANFSE_EXPORT_STALE_SECONDS",
      `must be at least 3 × DANFSE_EXPORT_HEARTBEAT_SECONDS (${(3 * heartbeatMs) / 1000})`,
    );
  return {
    mysqlUrl: env.parse("MYSQL_URL", (url) => (parseMysqlUrl(url), url), { hint: MYSQL_URL_FORMAT }),
    mysqlConnectionLimit: env.int("MYSQL_CONNECTION_LIMIT", { default: 4, min: 1, max: 1000 }),
    migrateOnStart: env.bool("DANFSE_MIGRATE_ON_START", { default: true }),
    migrationsDir: env.string("MIGRATIONS_DIR", { default: join(projectRoot(), "migrations") }),
    renderThreads: env.int("DANFSE_RENDER_THREADS", { default: threadsPerCpu(), min: 1, max: 64 }),
    renderTimeoutMs: env.durationMs("DANFSE_RENDER_TIMEOUT_SECONDS", { default: 30_000, minSeconds: 0.001, maxSeconds: 600 }),
    renderThreadHeapMb: env.int("DANFSE_RENDER_THREAD_HEAP_MB", { default: 64, min: 32, max: 4096 }),
    exportConcurrency: env.int("DANFSE_EXPORT_CONCURRENCY", { default: 64, min: 1, max: 200 }),
    exportMaxNotes: env.int("DANFSE_EXPORT_MAX_NOTES", { default: 10_000, min: 1, max: EXPORT_MAX_NOTES_LIMIT }),
    exportTtlMs: env.durationMs("DANFSE_EXPORT_TTL_SECONDS", { default: 7 * 86_400_000, minSeconds: 1, maxSeconds: 3650 * 86_400 }),
    exportTimeoutMs: env.durationMs("DANFSE_EXPORT_TIMEOUT_SECONDS", { default: 3_600_000, minSeconds: 1, maxSeconds: 86_400 }),
    linkTtlMs: env.durationMs("DANFSE_LINK_TTL_SECONDS", { default: 3_600_000, minSeconds: 1, maxSeconds: 7 * 86_400 }),
    exportStaleMs,
    heartbeatMs,
  };
}
