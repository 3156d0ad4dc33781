// Date and time fields of the ADN: `dhProc`/`dhEmi` carry an offset, `DataHoraGeracao` usually does not
// (it is São Paulo local time) and has 1–3 fraction digits, `DataHoraProcessamento` up to 7. Parsed by
// hand so that no fraction digit is lost (Date keeps milliseconds only).
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Date as CalendarDate } from "../gen/malha/common/v1/common_pb.js";

const ZONE = "America/Sao_Paulo";

const offsetFormat = new Intl.DateTimeFormat("en-US", { timeZone: ZONE, timeZoneName: "longOffset" });

// Intl formatting dominated date parsing (two calls per date): offsets only change on quarter-hour
// boundaries, so one look-up per quarter hour is exact. Bounded so a long-running process stays small.
const QUARTER_HOUR_MS = 15 * 60_000;
const offsetCache = new Map<number, number>();

/** São Paulo's UTC offset in minutes at an instant (−180 since 2019; DST before). */
function saoPauloOffsetMinutes(epochMs: number): number {
  const slot = Math.floor(epochMs / QUARTER_HOUR_MS);
  const cached = offsetCache.get(slot);
  if (cached !== undefined) return cached;
  const name = offsetFormat.formatToParts(slot * QUARTER_HOUR_MS).find((p) => p.type === "timeZoneName")?.value ?? "GMT-03:00";
  const m = /GMT([+-])(\d{2}):?(\d{2})?/.exec(name);
  const offset = m ? (m[1] === "-" ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3] ?? 0)) : -180;
  if (offsetCache.size > 50_000) offsetCache.clear();
  offsetCache.set(slot, offset);
  return offset;
}

/** The number written by `count` ASCII digits at `at`, or -1 where one of them is not a digit. */
function digitsAt(s: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i++) {
    const d = s.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) return -1;
    value = value * 10 + d;
  }
  return value;
}

const DASH = 45;
const COLON = 58;
const DOT = 46;
const PLUS = 43;

/** The offset in minutes of a `Z`, `±hh:mm` or `±hhmm` that ends the text at `at`; null when there is none, NaN when malformed. */
function zoneAt(s: string, at: number): number | null {
  if (at === s.length) return null;
  const sign = s.charCodeAt(at);
  if (sign === 90 /* Z */) return at + 1 === s.length ? 0 : Number.NaN;
  if (sign !== PLUS && sign !== DASH) return Number.NaN;
  const colon = s.length === at + 6 && s.charCodeAt(at + 3) === COLON;
  if (!colon && s.length !== at + 5) return Number.NaN;
  const hours = digitsAt(s, at + 1, 2);
  const minutes = digitsAt(s, at + (colon ? 4 : 3), 2);
  if (hours < 0 || minutes < 0) return Number.NaN;
  return (sign === DASH ? -1 : 1) * (hours * 60 + minutes);
}

/**
 * Parses `AAAA-MM-DDThh:mm:ss[.f{1,9}][±hh:mm|Z]`; without an offset the time is São Paulo local time.
 * Returns undefined when the text is not such a date-time or names an impossible date. Read by position
 * rather than with a regular expression: several of these are in every document a store decodes.
 */
export function parseAdnDateTime(text: string): Timestamp | undefined {
  const s = text.trim();
  if (s.length < 19) return undefined;
  const sep = s.charCodeAt(10);
  if (
    s.charCodeAt(4) !== DASH ||
    s.charCodeAt(7) !== DASH ||
    (sep !== 84 /* T */ && sep !== 32) ||
    s.charCodeAt(13) !== COLON ||
    s.charCodeAt(16) !== COLON
  )
    return undefined;
  const year = digitsAt(s, 0, 4);
  const month = digitsAt(s, 5, 2);
  const day = digitsAt(s, 8, 2);
  const hour = digitsAt(s, 11, 2);
  const minute = digitsAt(s, 14, 2);
  const second = digitsAt(s, 17, 2);
  if (year < 0 || month < 0 || day < 0 || hour < 0 || minute < 0 || second < 0) return undefined;
  let at = 19;
  let nanos = 0;
  if (s.charCodeAt(at) === DOT) {
    let end = at + 1;
    while (end < s.length && digitsAt(s, end, 1) >= 0) end++;
    const count = end - at - 1;
    if (count < 1 || count > 9) return undefined;
    nanos = digitsAt(s, at + 1, count) * 10 ** (9 - count);
    at = end;
  }
  const zone = zoneAt(s, at);
  if (Number.isNaN(zone)) return undefined;
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const localMs = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(localMs);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  let offsetMin: number;
  if (zone !== null) offsetMin = zone;
  else {
    // Two passes settle the offset around a DST change (historic data; Brazil has had none since 2019).
    offsetMin = saoPauloOffsetMinutes(localMs - -180 * 60_000);
    offsetMin = saoPauloOffsetMinutes(localMs - offsetMin * 60_000);
  }
  const seconds = BigInt(Math.floor((localMs - offsetMin * 60_000) / 1000));
  return { $typeName: "google.protobuf.Timestamp", seconds, nanos };
}

/** Parses `AAAA-MM-DD` into a calendar date. */
export function parseAdnDate(text: string): CalendarDate | undefined {
  const s = text.trim();
  if (s.length !== 10 || s.charCodeAt(4) !== DASH || s.charCodeAt(7) !== DASH) return undefined;
  const year = digitsAt(s, 0, 4);
  const month = digitsAt(s, 5, 2);
  const day = digitsAt(s, 8, 2);
  if (year < 0 || month < 0 || day < 0) return undefined;
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  return { $typeName: "malha.common.v1.Date", year, month, day };
}
