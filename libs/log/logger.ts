import { pino, type Logger, type DestinationStream } from "pino";
import { activeTraceIds } from "../tracing/ids.js";

export type { Logger } from "pino";

/**
 * Paths pino replaces with "[redacted]" wherever they appear one or two levels deep in a log object.
 * Secrets must never reach a log line, even when a developer logs a whole request by mistake.
 */
export const REDACTED_KEYS = [
  "password",
  "senha",
  "pfx",
  "pfxBytes",
  "privateKey",
  "privateKeyPem",
  "masterKey",
  "secret",
  "token",
  "authorization",
  "cookie",
  "apiKey",
  "certificateChainPem",
] as const;

const redactPaths = REDACTED_KEYS.flatMap((k) => [k, `*.${k}`, `*.*.${k}`]);

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to capture them. */
  destination?: DestinationStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  return pino(
    {
      level: opts.level ?? "info",
      base: { service: opts.service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      redact: { paths: redactPaths, censor: "[redacted]" },
      // Every line written while a span is active carries its trace and span ids (none with tracing off).
      mixin: () => activeTraceIds() ?? {},
    },
    opts.destination ?? pino.destination({ dest: 1, sync: false }),
  );
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
