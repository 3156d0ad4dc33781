import { pino, stdSerializers, type Logger, type DestinationStream } from "pino";
import { activeTraceIds } from "../tracing/ids.js";
import { censorSecrets } from "./redact.js";

export type { Logger } from "pino";

/**
 * Keys whose values are written as "[redacted]" wherever they appear in the first three levels of a log
 * object or a child logger's bindings (an error under `err` as pino serializes it). Secrets must never
 * reach a log line, even when a developer logs a whole request by mistake.
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

const SECRET_KEYS: ReadonlySet<string> = new Set(REDACTED_KEYS);

/** The line's object with its secrets censored; an error under `err` is left to its serializer, which censors what it writes. */
function censoredLine(object: Record<string, unknown>): Record<string, unknown> {
  const { err } = object;
  if (!(err instanceof Error)) return censorSecrets(object, SECRET_KEYS);
  return { ...censorSecrets({ ...object, err: undefined }, SECRET_KEYS), err };
}

/** pino's error serializer, then the error's fields and theirs censored (the line's levels two and three). */
const censoredError = (err: Error) => censorSecrets(stdSerializers.err(err), SECRET_KEYS, 2);

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; defaults to stdout. Tests pass a stream to capture them. */
  destination?: DestinationStream;
}

export function createLogger(opts: LoggerOptions): Logger {
  const logger = pino(
    {
      level: opts.level ?? "info",
      base: { service: opts.service, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      serializers: { err: censoredError },
      // Not pino's `redact` option: its wildcard paths cost ≈ 30 µs a line (libs/log/redact.ts).
      formatters: {
        level: (label) => ({ level: label }),
        log: censoredLine,
        bindings: (bindings) => censorSecrets(bindings, SECRET_KEYS),
      },
      // Every line written while a span is active carries its trace and span ids (none with tracing off).
      mixin: () => activeTraceIds() ?? {},
    },
    opts.destination ?? pino.destination({ dest: 1, sync: false }),
  );
  // pino formats only the root's bindings; a child's are censored here. Children inherit this method
  // (pino makes each one with Object.create of its parent), so grandchildren's are too.
  const child = logger.child;
  logger.child = function censoredChild(this: Logger, bindings, options) {
    return child.call(this, censorSecrets(bindings, SECRET_KEYS), options);
  } as Logger["child"];
  return logger;
}

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
