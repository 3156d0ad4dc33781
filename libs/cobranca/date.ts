import { fail } from "./errors.js";

/** A calendar date with no time and no zone. Month is 1–12. */
export interface CalendarDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil; pure integers). */
export function toDayNumber(d: CalendarDate): number {
  const y = d.month <= 2 ? d.year - 1 : d.year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const mp = (d.month + 9) % 12;
  const doy = Math.floor((153 * mp + 2) / 5) + d.day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

export function fromDayNumber(n: number): CalendarDate {
  const z = n + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const day = doy - Math.floor((153 * mp + 2) / 5) + 1;
  const month = mp < 10 ? mp + 3 : mp - 9;
  const year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  return { year, month, day };
}

export function isValidDate(d: CalendarDate): boolean {
  if (!d || !Number.isInteger(d.year) || !Number.isInteger(d.month) || !Number.isInteger(d.day)) return false;
  if (d.month < 1 || d.month > 12 || d.day < 1 || d.year < 1 || d.year > 9999) return false;
  const back = fromDayNumber(toDayNumber(d));
  return back.year === d.year && back.month === d.month && back.day === d.day;
}

export function assertDate(d: CalendarDate | undefined, field: string): CalendarDate {
  if (d === undefined || d === null) fail("CAMPO_OBRIGATORIO", "date is required", field);
  if (!isValidDate(d)) fail("DATA_INVALIDA", `not a calendar date: ${JSON.stringify(d)}`, field);
  return { year: d.year, month: d.month, day: d.day };
}

export function addDays(d: CalendarDate, n: number): CalendarDate {
  return fromDayNumber(toDayNumber(d) + n);
}

export function diffDays(a: CalendarDate, b: CalendarDate): number {
  return toDayNumber(a) - toDayNumber(b);
}

export function compareDates(a: CalendarDate, b: CalendarDate): number {
  return diffDays(a, b);
}

export function date(year: number, month: number, day: number): CalendarDate {
  return { year, month, day };
}

const pad = (n: number, w: number) => String(n).padStart(w, "0");

export function isoDate(d: CalendarDate): string {
  return `${pad(d.year, 4)}-${pad(d.month, 2)}-${pad(d.day, 2)}`;
}

export function parseIsoDate(s: string, field = "date"): CalendarDate {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (!m) fail("DATA_INVALIDA", `expected YYYY-MM-DD, got ${JSON.stringify(s)}`, field);
  return assertDate({ year: +m[1]!, month: +m[2]!, day: +m[3]! }, field);
}

/** DDMMAAAA (CNAB 240). */
export function formatDDMMAAAA(d: CalendarDate): string {
  return `${pad(d.day, 2)}${pad(d.month, 2)}${pad(d.year, 4)}`;
}

/** AAAAMMDD (Sicredi's CNAB 400 retorno dates). */
export function formatAAAAMMDD(d: CalendarDate): string {
  return `${pad(d.year, 4)}${pad(d.month, 2)}${pad(d.day, 2)}`;
}

/** DDMMAA (CNAB 400). Years 2000–2099 only, so the 2-digit year is unambiguous for the engine's range. */
export function formatDDMMAA(d: CalendarDate): string {
  return `${pad(d.day, 2)}${pad(d.month, 2)}${pad(d.year % 100, 2)}`;
}

/** Parse DDMMAAAA; all-zero or blank means "no date" (undefined). Invalid dates throw. */
export function parseDDMMAAAA(s: string, field = "date"): CalendarDate | undefined {
  if (/^[0 ]*$/.test(s)) return undefined;
  const m = /^(\d{2})(\d{2})(\d{4})$/.exec(s);
  if (!m) fail("DATA_INVALIDA", `expected DDMMAAAA, got ${JSON.stringify(s)}`, field);
  return assertDate({ day: +m[1]!, month: +m[2]!, year: +m[3]! }, field);
}

/** Parse AAAAMMDD; all-zero or blank means "no date" (undefined). Invalid dates throw. */
export function parseAAAAMMDD(s: string, field = "date"): CalendarDate | undefined {
  if (/^[0 ]*$/.test(s)) return undefined;
  const m = /^(\d{4})(\d{2})(\d{2})$/.exec(s);
  if (!m) fail("DATA_INVALIDA", `expected AAAAMMDD, got ${JSON.stringify(s)}`, field);
  return assertDate({ year: +m[1]!, month: +m[2]!, day: +m[3]! }, field);
}

/**
 * Parse DDMMAA with a pivot: years 00–79 → 20xx, 80–99 → 19xx (CNAB 400 files from the 1990s exist in
 * bank archives; nothing the engine emits is before 2000). All-zero/blank → undefined.
 */
export function parseDDMMAA(s: string, field = "date"): CalendarDate | undefined {
  if (/^[0 ]*$/.test(s)) return undefined;
  const m = /^(\d{2})(\d{2})(\d{2})$/.exec(s);
  if (!m) fail("DATA_INVALIDA", `expected DDMMAA, got ${JSON.stringify(s)}`, field);
  const yy = +m[3]!;
  return assertDate({ day: +m[1]!, month: +m[2]!, year: yy < 80 ? 2000 + yy : 1900 + yy }, field);
}

/** A timestamp with no zone: what a CNAB header carries (date + HHMMSS). */
export interface LocalDateTime extends CalendarDate {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

// Building an Intl formatter loads time-zone data: once per process, not once per call (a hot path
// when every boleto of a batch is stamped).
const SAO_PAULO = new Intl.DateTimeFormat("en-CA", {
  timeZone: "America/Sao_Paulo",
  year: "numeric",
  month: "2-digit",
  day: "2-digit",
  hour: "2-digit",
  minute: "2-digit",
  second: "2-digit",
  hourCycle: "h23",
});

/**
 * The calendar date (and wall time) of an instant in America/Sao_Paulo. Pure: the instant is an
 * argument, the clock is never read. Use it at the edge to turn "now" into the engine's inputs.
 */
export function saoPauloDateTime(instant: Date): LocalDateTime {
  const parts = SAO_PAULO.formatToParts(instant);
  const get = (t: string) => Number(parts.find((p) => p.type === t)?.value);
  return { year: get("year"), month: get("month"), day: get("day"), hour: get("hour"), minute: get("minute"), second: get("second") };
}

export function saoPauloDate(instant: Date): CalendarDate {
  const { year, month, day } = saoPauloDateTime(instant);
  return { year, month, day };
}
