// Secrets censored in a log object before pino writes it. pino's own `redact` option with wildcard paths
// (`*.key`, `*.*.key`) clones and walks every value of every line, ≈ 30 µs a line, on every service's hot
// path (docs/decisions/0053-log-redaction-by-key-walk.md); this walks the same three levels by key and
// copies only what it censors, so an ordinary line is neither copied nor slowed.

export const CENSOR = "[redacted]";

/**
 * `value` with every key of `secretKeys` censored at its first `levels` levels (the object's own keys, those
 * of its values, and of theirs). Objects on the way to a censored key are copied; the caller's are never
 * modified, and a value with nothing to censor is returned as it is.
 */
export function censorSecrets<T>(value: T, secretKeys: ReadonlySet<string>, levels = 3): T {
  return censorIn(value, secretKeys, levels) as T;
}

function censorIn(value: unknown, secretKeys: ReadonlySet<string>, levels: number): unknown {
  if (levels === 0 || value === null || typeof value !== "object") return value;
  // What JSON.stringify writes through toJSON (dates, buffers) is not a map of keys.
  if (typeof (value as { toJSON?: unknown }).toJSON === "function") return value;
  let copy: Record<string, unknown> | unknown[] | undefined;
  const source = value as Record<string, unknown>;
  for (const key of Object.keys(source)) {
    const current = source[key];
    const next = secretKeys.has(key) && current !== undefined ? CENSOR : censorIn(current, secretKeys, levels - 1);
    if (next === current) continue;
    copy ??= Array.isArray(value) ? [...value] : { ...source };
    (copy as Record<string, unknown>)[key] = next;
  }
  return copy ?? value;
}
