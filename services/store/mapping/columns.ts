// Value conversions for columns. Codes go into ascii columns, and strict mode rejects a non-ascii byte or
// an over-long value (failing the whole batch), so optional codes that do not fit become NULL — the
// typed message and the XML beside them still hold the value as sent.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Date as ProtoDate } from "../../../libs/gen/malha/common/v1/common_pb.js";

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

export function asciiCode(value: string | undefined, maxLength: number): string | null {
  if (value === undefined || value === "") return null;
  return value.length <= maxLength && PRINTABLE_ASCII.test(value) ? value : null;
}

export function digitsCode(value: string | undefined, lengths: readonly number[]): string | null {
  if (value === undefined || !/^[0-9]+$/.test(value)) return null;
  return lengths.includes(value.length) ? value : null;
}

/** Free text for a utf8mb4 VARCHAR(max): cut at max code points (the XML keeps the whole text). */
export function text(value: string | undefined, maxChars: number): string | null {
  if (value === undefined || value === "") return null;
  const chars = Array.from(value);
  return chars.length <= maxChars ? value : chars.slice(0, maxChars).join("");
}

export function smallEnum(value: number, max = 255): number | null {
  return value > 0 && value <= max ? value : null;
}

export function toDate(ts: Timestamp | undefined): Date | null {
  if (!ts) return null;
  const d = timestampDate(ts);
  const year = d.getUTCFullYear();
  // DATETIME covers years 1000–9999; anything else is not a real NFS-e date.
  return Number.isNaN(d.getTime()) || year < 1000 || year > 9999 ? null : d;
}

export function toSqlDate(date: ProtoDate | undefined): string | null {
  if (!date || date.year < 1000 || date.year > 9999) return null;
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day));
  if (d.getUTCMonth() !== date.month - 1 || d.getUTCDate() !== date.day) return null;
  return `${String(date.year).padStart(4, "0")}-${String(date.month).padStart(2, "0")}-${String(date.day).padStart(2, "0")}`;
}

export function cents(value: bigint | undefined): string | null {
  return value === undefined ? null : value.toString();
}

/** Basis points (2.00% = 200) → DECIMAL(7,4) percent text ("2.0000"); exact, no float. */
export function aliquotaPercent(bps: number | undefined): string | null {
  if (bps === undefined || !Number.isInteger(bps) || bps < 0 || bps > 999_999) return null;
  return `${Math.trunc(bps / 100)}.${String(bps % 100).padStart(2, "0")}00`;
}

/** DATETIME(3) text for keyset tokens, exact to the millisecond. */
export function sqlDateTime(d: Date): string {
  return d.toISOString().replace("T", " ").replace("Z", "");
}
