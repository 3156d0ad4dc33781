import { readFileSync } from "node:fs";
import { isAbsolute, join, resolve } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { MYSQL_URL_FORMAT, parseMysqlUrl } from "../../libs/db/pool.js";
import { readPageTokenSecret, type PageTokenSecret } from "../../libs/rpc/page-token.js";

export const DAY_MS = 24 * 3600 * 1000;
/** HMAC keys shorter than this are guessable in practice; 32 bytes is the SHA-256 block-size sweet spot. */
export const MIN_LINK_SECRET_BYTES = 32;

export interface ArtifactsConfig {
  /** Absolute root of the disk backend; created at start if missing. */
  dir: string;
  /** Default lifetime of an artifact whose header names no expiry. */
  defaultTtlMs: number;
  /** Largest accepted upload. */
  maxBytes: number;
  linkSecret: Buffer;
  /** HMAC key of ListArtifacts page tokens; replicas behind one address must share it. */
  pageTokenSecret: PageTokenSecret;
  httpHost: string;
  /** 0 picks a free port (tests); the "serving" log line tells which. */
  httpPort: number;
  /** Base of signed links; unset = http://<host>:<bound port>. */
  publicBaseUrl?: string;
  sweepIntervalMs: number;
  /** How often the sweep also walks every stored key looking for blobs without a row. */
  orphanScanMs: number;
  /** Temp files (and row-less blobs) untouched for this long belong to dead uploads (a live upload writes as it goes). */
  staleTempMs: number;
  mysqlUrl: string;
  migrateOnStart: boolean;
  migrationsDir: string;
  mysqlConnectionLimit: number;
}

export function readArtifactsConfig(env: EnvReader): ArtifactsConfig {
  const dir = env.string("ARTIFACT_DIR", { hint: "a directory for artifact content, created if missing" });
  const publicBaseUrl = env.optionalString("ARTIFACT_PUBLIC_BASE_URL");
  if (publicBaseUrl !== undefined) env.url("ARTIFACT_PUBLIC_BASE_URL", ["http:", "https:"]);
  return {
    dir: isAbsolute(dir) ? dir : resolve(dir),
    defaultTtlMs: env.int("ARTIFACT_TTL_DIAS", { default: 7, min: 1, max: 3650 }) * DAY_MS,
    maxBytes: env.int("ARTIFACT_MAX_BYTES", { default: 256 * 1024 * 1024, min: 1, max: 64 * 1024 ** 3 }),
    linkSecret: readLinkSecret(env),
    pageTokenSecret: readPageTokenSecret(env, "ARTIFACT_PAGE_TOKEN_SECRET"),
    httpHost: env.string("ARTIFACT_HTTP_HOST", { default: env.optionalString("GRPC_HOST") ?? "0.0.0.0" }),
    httpPort: env.port("ARTIFACT_HTTP_PORT", { default: 8054 }),
    ...(publicBaseUrl !== undefined ? { publicBaseUrl: publicBaseUrl.replace(/\/+$/, "") } : {}),
    sweepIntervalMs: env.durationMs("ARTIFACT_SWEEP_INTERVAL_SECONDS", { default: 300_000, minSeconds: 0.05, maxSeconds: 86_400 }),
    orphanScanMs: env.durationMs("ARTIFACT_ORPHAN_SCAN_SECONDS", { default: 21_600_000, minSeconds: 0.05, maxSeconds: 7 * 86_400 }),
    staleTempMs: env.durationMs("ARTIFACT_STALE_TEMP_SECONDS", { default: 3_600_000, minSeconds: 60, maxSeconds: 7 * 86_400 }),
    mysqlUrl: env.parse("MYSQL_URL", (url) => (parseMysqlUrl(url), url), { hint: MYSQL_URL_FORMAT }),
    migrateOnStart: env.bool("ARTIFACT_MIGRATE_ON_START", { default: true }),
    migrationsDir: env.string("MIGRATIONS_DIR", { default: join(projectRoot(), "migrations") }),
    mysqlConnectionLimit: env.int("MYSQL_CONNECTION_LIMIT", { default: 10, min: 1, max: 1000 }),
  };
}

/** Exactly one of ARTIFACT_LINK_SECRET / ARTIFACT_LINK_SECRET_FILE; the value never appears in an error. */
function readLinkSecret(env: EnvReader): Buffer {
  const inline = env.optionalString("ARTIFACT_LINK_SECRET");
  const file = env.optionalString("ARTIFACT_LINK_SECRET_FILE");
  if (inline !== undefined && file !== undefined) {
    throw new ConfigError("ARTIFACT_LINK_SECRET_FILE", "cannot be set together with ARTIFACT_LINK_SECRET (pick one)");
  }
  let secret: Buffer;
  let variable: string;
  if (file !== undefined) {
    variable = "ARTIFACT_LINK_SECRET_FILE";
    try {
      // Trailing newlines come from editors and `echo`, never from the intended key.
      secret = Buffer.from(readFileSync(file, "utf8").replace(/[\r\n]+$/, ""), "utf8");
    } catch (err) {
      throw new ConfigError(variable, `names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? "unreadable"}: ${file})`);
    }
  } else if (inline !== undefined) {
    variable = "ARTIFACT_LINK_SECRET";
    secret = Buffer.from(inline, "utf8");
  } else {
    throw new ConfigError("ARTIFACT_LINK_SECRET", "is required (or ARTIFACT_LINK_SECRET_FILE): the HMAC key for download links");
  }
  if (secret.length < MIN_LINK_SECRET_BYTES) {
    throw new ConfigError(variable, `must be at least ${MIN_LINK_SECRET_BYTES} bytes (e.g. \`openssl rand -hex 32\`)`);
  }
  return secret;
}
