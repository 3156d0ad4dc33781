// google.protobuf.Duration ↔ milliseconds, and the one rule for a duration a caller sends (TTLs, grace
// periods; docs/decisions/0021-api-conventions.md): absent = the method's default; present = checked and
// used as given, or INVALID_ARGUMENT naming the field. Never clamped, never silently replaced.
import { create } from "@bufbuild/protobuf";
import { DurationSchema, type Duration } from "@bufbuild/protobuf/wkt";
import { invalidArgument } from "./errors.js";

export interface DurationRule {
  /** The value when the field is absent. */
  defaultMs: number;
  /** The largest accepted value; above it the call is refused. */
  maxMs: number;
  /** The smallest accepted value: 1 ms (positive) unless zero means something for the field. */
  minMs?: number;
}

const NANOS_PER_MS = 1_000_000;
const MAX_NANOS = 999_999_999;

/** The field's value in whole milliseconds (sub-millisecond rest dropped) under `rule`. */
export function durationMsOf(field: string, value: Duration | undefined, rule: DurationRule): number {
  if (value === undefined) return rule.defaultMs;
  const { seconds, nanos } = value;
  if (!Number.isInteger(nanos) || nanos < -MAX_NANOS || nanos > MAX_NANOS)
    throw invalidArgument(`${field}.nanos is out of range (got ${nanos})`);
  if (seconds < 0n || nanos < 0) throw invalidArgument(`${field} must not be negative`);
  const min = rule.minMs ?? 1;
  // Compared as bigint first: seconds may be far beyond what a double holds exactly.
  if (seconds > BigInt(Math.ceil(rule.maxMs / 1000))) throw aboveMax(field, rule.maxMs);
  const ms = Number(seconds) * 1000 + Math.floor(nanos / NANOS_PER_MS);
  if (ms > rule.maxMs) throw aboveMax(field, rule.maxMs);
  if (ms < min)
    throw invalidArgument(
      min === 1 ? `${field} must be positive (leave it unset for the default)` : `${field} must be at least ${spoken(min)}`,
    );
  return ms;
}

/** Milliseconds (fractions kept to the nanosecond) as a Duration: what a client sends, a server reports. */
export function durationOfMs(ms: number): Duration {
  if (!Number.isFinite(ms) || ms < 0 || ms > Number.MAX_SAFE_INTEGER) throw new RangeError(`not a duration in ms: ${ms}`);
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.min(MAX_NANOS, Math.round((ms - seconds * 1000) * NANOS_PER_MS));
  return create(DurationSchema, { seconds: BigInt(seconds), nanos });
}

const aboveMax = (field: string, maxMs: number) => invalidArgument(`${field} must be at most ${spoken(maxMs)}`);

const UNITS: [number, string][] = [
  [86_400_000, "day"],
  [3_600_000, "hour"],
  [60_000, "minute"],
  [1000, "second"],
];

/** "7 days", "15 minutes", "1500 ms": the largest unit that divides the value exactly. */
export function spoken(ms: number): string {
  for (const [size, unit] of UNITS) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms === size ? "" : "s"}`;
  }
  return `${ms} ms`;
}
