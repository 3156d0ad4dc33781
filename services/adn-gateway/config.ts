import { readFileSync } from "node:fs";
import { DEFAULT_MAX_TLS_CONTEXTS } from "../../libs/adn/http.js";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";

export type CredentialsConfig = { kind: "dir"; dir: string; refreshMs: number } | { kind: "vault"; secret?: string; refreshMs: number };

export interface GatewayConfig {
  /** Root URLs (the APIs live under /municipios): index 1 = produção, 2 = produção restrita. */
  baseUrlProducao: string;
  baseUrlProducaoRestrita: string;
  /** The CAs trusted for the ADN instead of Node's bundle (the simulator's test CA); decision 0024. */
  trustedCa?: Buffer;
  /** A certificate's connection pool unused for this long is closed; 0 = never. */
  idlePoolMs: number;
  /** TLS contexts kept past their pools, one per certificate used in the last two hours (decision 0050). */
  maxTlsContexts: number;
  requestTimeoutMs: number;
  maxRetries: number;
  backoffBaseMs: number;
  backoffMaxMs: number;
  maxDecompressedBytes: number;
  maxResponseBytes: number;
  /** Largest page DeliverFeeds sends on: its entries, undecoded, as serialized in the store's ApplyBatch request. */
  maxBatchBytes: number;
  rateLimitCooldownMs: number;
  credentials: CredentialsConfig;
}

export function readGatewayConfig(env: EnvReader): GatewayConfig {
  const dir = env.optionalString("ADN_CREDENTIALS_DIR");
  const backoffBaseMs = env.durationMs("NFSE_RETRY_BACKOFF_BASE_SECONDS", { default: 1000, maxSeconds: 600 });
  const backoffMaxMs = env.durationMs("NFSE_RETRY_BACKOFF_MAX_SECONDS", { default: 30_000, maxSeconds: 3600 });
  if (backoffMaxMs < backoffBaseMs) {
    throw new ConfigError("NFSE_RETRY_BACKOFF_MAX_SECONDS", "must not be below NFSE_RETRY_BACKOFF_BASE_SECONDS");
  }
  const trustedCa = env.file("ADN_CA_FILE");
  // A feed runs once an hour (the one-hour rule), so a pool kept after its run is not used again: closed
  // soon after the run's last call, the pools open are about the runs in flight, not every certificate a
  // sweep touched; the next run resumes the TLS session (0029) with the context kept (0050). A retry
  // after a longer back-off reopens the pool (AdnHttpClient), so no bound against the back-off (0037).
  const idlePoolMs = env.durationMs("ADN_POOL_IDLE_SECONDS", { default: 2_000, maxSeconds: 86_400 });
  return {
    baseUrlProducao: env.url("ADN_BASE_URL_PRODUCAO", ["https:"], { default: "https://adn.nfse.gov.br" }),
    baseUrlProducaoRestrita: env.url("ADN_BASE_URL_PRODUCAO_RESTRITA", ["https:"], {
      default: "https://adn.producaorestrita.nfse.gov.br",
    }),
    ...(trustedCa ? { trustedCa } : {}),
    idlePoolMs,
    maxTlsContexts: env.int("ADN_TLS_CONTEXTS_MAX", { default: DEFAULT_MAX_TLS_CONTEXTS, min: 0, max: 100_000 }),
    requestTimeoutMs: env.durationMs("NFSE_REQUEST_TIMEOUT_SECONDS", { default: 60_000, minSeconds: 0.01, maxSeconds: 600 }),
    maxRetries: env.int("NFSE_MAX_RETRIES", { default: 3, min: 0, max: 10 }),
    backoffBaseMs,
    backoffMaxMs,
    maxDecompressedBytes: env.int("ADN_MAX_DECOMPRESSED_BYTES", { default: 8 * 1024 * 1024, min: 1024, max: 256 * 1024 * 1024 }),
    maxResponseBytes: env.int("ADN_MAX_RESPONSE_BYTES", { default: 64 * 1024 * 1024, min: 1024, max: 1024 * 1024 * 1024 }),
    maxBatchBytes: env.int("ADN_MAX_BATCH_BYTES", { default: 15 * 1024 * 1024, min: 1024, max: 15 * 1024 * 1024 }),
    rateLimitCooldownMs: env.durationMs("ADN_RATE_LIMIT_COOLDOWN_SECONDS", { default: 300_000, maxSeconds: 86_400 }),
    // A directory is a developer's: replaced files should take effect within a second, not a minute.
    credentials: dir
      ? { kind: "dir", dir, refreshMs: env.durationMs("ADN_CREDENTIALS_REFRESH_SECONDS", { default: 1_000, maxSeconds: 86_400 }) }
      : {
          kind: "vault",
          ...vaultSecret(env),
          refreshMs: env.durationMs("ADN_CREDENTIALS_REFRESH_SECONDS", { default: 60_000, maxSeconds: 86_400 }),
        },
  };
}

/** The shared secret the vault accepts from the gateway when the mesh runs without TLS. */
function vaultSecret(env: EnvReader): { secret?: string } {
  const inline = env.optionalString("VAULT_CREDENTIALS_SECRET");
  const file = env.optionalString("VAULT_CREDENTIALS_SECRET_FILE");
  if (inline && file) throw new ConfigError("VAULT_CREDENTIALS_SECRET_FILE", "must not be set together with VAULT_CREDENTIALS_SECRET");
  if (inline) return { secret: inline };
  if (!file) return {};
  let secret: string;
  try {
    secret = readFileSync(file, "utf8").trim();
  } catch (err) {
    throw new ConfigError(
      "VAULT_CREDENTIALS_SECRET_FILE",
      `names a file that cannot be read (${(err as NodeJS.ErrnoException).code ?? "unreadable"}: ${file})`,
    );
  }
  if (!secret) throw new ConfigError("VAULT_CREDENTIALS_SECRET_FILE", "names an empty file");
  return { secret };
}
