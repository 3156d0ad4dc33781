import { ConfigError, type EnvReader } from "../config/env.js";
import { LOG_LEVELS } from "../log/logger.js";
import type { TlsFiles } from "./listener.js";

/** Settings every service shares. Service-specific settings are read by the service's own config. */
export interface RuntimeConfig {
  host: string;
  port: number;
  metricsEnabled: boolean;
  /** 0 (like GRPC_PORT=0) picks a free port; the "serving" log line tells which. */
  metricsPort: number;
  metricsHost: string;
  tls?: TlsFiles;
  logLevel: (typeof LOG_LEVELS)[number];
  shutdownDrainMs: number;
  shutdownTimeoutMs: number;
  maxRpcTimeoutMs: number;
  /** One info line per RPC (RPC_ACCESS_LOG). */
  accessLog: boolean;
  /** The plaintext HTTP/1.1 listener (HTTP1_PORT), off unless set. */
  http1?: { host: string; port: number };
}

export interface RuntimeDefaults {
  port: number;
  metricsPort: number;
}

export function readRuntimeConfig(env: EnvReader, defaults: RuntimeDefaults): RuntimeConfig {
  const cert = env.file("TLS_CERT_FILE");
  const key = env.file("TLS_KEY_FILE");
  const clientCa = env.file("TLS_CLIENT_CA_FILE");
  if (cert && !key) throw new ConfigError("TLS_KEY_FILE", "is required when TLS_CERT_FILE is set");
  if (key && !cert) throw new ConfigError("TLS_CERT_FILE", "is required when TLS_KEY_FILE is set");
  if (clientCa && !cert) throw new ConfigError("TLS_CERT_FILE", "is required when TLS_CLIENT_CA_FILE is set (mTLS needs TLS)");
  const http1Port = env.optionalString("HTTP1_PORT") === undefined ? undefined : env.port("HTTP1_PORT");
  // A plaintext side door would bypass TLS and the mTLS identities; the TLS port speaks HTTP/1.1 already.
  if (http1Port !== undefined && cert)
    throw new ConfigError("HTTP1_PORT", "cannot be used with TLS_CERT_FILE: the TLS port already accepts HTTP/1.1 (ALPN)");
  const host = env.string("GRPC_HOST", { default: "0.0.0.0" });
  return {
    host,
    port: env.port("GRPC_PORT", { default: defaults.port }),
    metricsHost: env.string("METRICS_HOST", { default: "0.0.0.0" }),
    metricsEnabled: env.bool("METRICS_ENABLED", { default: true }),
    metricsPort: env.port("METRICS_PORT", { default: defaults.metricsPort }),
    ...(cert && key ? { tls: { cert, key, ...(clientCa ? { clientCa } : {}) } } : {}),
    logLevel: env.oneOf("LOG_LEVEL", LOG_LEVELS, { default: "info" }),
    shutdownDrainMs: env.durationMs("SHUTDOWN_DRAIN_SECONDS", { default: 2000, maxSeconds: 300 }),
    shutdownTimeoutMs: env.durationMs("SHUTDOWN_TIMEOUT_SECONDS", { default: 20_000, maxSeconds: 3600 }),
    maxRpcTimeoutMs: env.durationMs("RPC_MAX_TIMEOUT_SECONDS", { default: 0, maxSeconds: 86_400 }),
    accessLog: env.bool("RPC_ACCESS_LOG", { default: true }),
    ...(http1Port === undefined ? {} : { http1: { host: env.string("HTTP1_HOST", { default: host }), port: http1Port } }),
  };
}
