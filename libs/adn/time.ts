// Date and time fields of the ADN: `dhProc`/`dhEmi` carry an offset, `DataHoraGeracao` usually does not
// (it is São Paulo local time) and has 1–3 fraction digits, `DataHoraProcessamento` up to 7. Parsed by
// hand so that no fraction digit is lost (Date keeps milliseconds only).
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Date as CalendarDate } from "../gen/malha/common/v1/common_pb.js";

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;
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

/**
 * Parses `AAAA-MM-DDThh:mm:ss[.f{1,9}][±hh:mm|Z]`; without an offset the time is São Paulo local time.
 * Returns undefined when the text is not such a date-time or names an impossible date.
 */
export function parseAdnDateTime(text: string): Timestamp | undefined {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
  const localMs = Date.UTC(year, month - 1, day, hour, minute, second);
  const check = new Date(localMs);
  if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
  let offsetMin: number;
  const zone = m[8];
  if (zone === "Z") offsetMin = 0;
  else if (zone) {
    const z = /^([+-])(\d{2}):?(\d{2})$/.exec(zone)!;
    offsetMin = (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3]));
  } else {
    // Two passes settle the offset around a DST change (historic data; Brazil has had none since 2019).
    offsetMin = saoPauloOffsetMinutes(localMs - -180 * 60_000);
    offsetMin = saoPauloOffsetMinutes(localMs - offsetMin * 60_000);
  }
  const seconds = BigInt(Math.floor((localMs - offsetMin * 60_000) / 1000));
  const nanos = m[7] ? Number(m[7].padEnd(9, "0")) : 0;
  return { $typeName: "google.protobuf.Timestamp", seconds, nanos };
}

/** Parses `AAAA-MM-DD` into a calendar date. */
export function parseAdnDate(text: string): CalendarDate | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text.trim());
  if (!m) return undefined;
  const [year, month, day] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCFullYear() !== year || check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return undefined;
  return { $typeName: "malha.common.v1.Date", year, month, day };
}
