// Strict conversions of a document's or event's values into their columns. MySQL's strict mode refuses a
// value that does not fit (too long, out of range, not ascii) by failing the whole statement, and so the
// whole batch, every run, forever: the feed would stop at that note. Every value is therefore checked here,
// before SQL, against the column it goes to; one that does not fit sends its item to quarantine with the
// field and the reason, and the rest of the batch is stored (docs/decisions/0016-poison-values.md). Nothing
// is cut or turned into NULL: the typed message and the XML would say otherwise than the columns.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Date as ProtoDate } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { isCnpjShaped } from "../../../libs/tax-id/index.js";
import { toSqlDate } from "./columns.js";

export class ColumnValueError extends Error {
  override name = "ColumnValueError";
  constructor(
    readonly field: string,
    readonly column: string,
    problem: string,
  ) {
    super(`${field} (column ${column}) ${problem}`);
  }
}

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
const BIGINT_MAX = 9_223_372_036_854_775_807n;
/** TEXT and MEDIUMBLOB hold at most this many bytes. */
export const TEXT_MAX_BYTES = 65_535;
export const MEDIUMBLOB_MAX_BYTES = 16_777_215;

/** The column and field a value belongs to, for the message that names them. */
export interface Target {
  field: string;
  column: string;
}

const fail = (t: Target, problem: string): never => {
  throw new ColumnValueError(t.field, t.column, problem);
};

/** An ascii code column of at most `max` characters; "" or undefined → NULL. */
export function code(t: Target, value: string | undefined, max: number): string | null {
  if (value === undefined || value === "") return null;
  if (value.length > max) fail(t, `is ${value.length} characters, more than the column's ${max}`);
  if (!PRINTABLE_ASCII.test(value)) fail(t, "has characters outside printable ASCII");
  return value;
}

/** A code column that holds exactly one of `lengths` ASCII digits (IBGE codes). */
export function digits(t: Target, value: string | undefined, lengths: readonly number[]): string | null {
  if (value === undefined || value === "") return null;
  if (!/^[0-9]+$/.test(value) || !lengths.includes(value.length)) fail(t, `is not ${lengths.join(" or ")} digits`);
  return value;
}

/** A chave column (CHAR(50) ascii): the chave's shape, letters only in the CNPJ. */
export function chave(t: Target, value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  if (!/^[0-9]{9}[0-9A-Z]{14}[0-9]{27}$/.test(value)) fail(t, "is not a chave (50 characters, letters only in the CNPJ at 10-23)");
  return value;
}

/** A CNPJ (14, alphanumeric since 2026) or CPF (11 digits) column. */
export function cpfCnpj(t: Target, value: string, kind: "CNPJ" | "CPF"): string {
  if (kind === "CNPJ" ? !isCnpjShaped(value) : !/^[0-9]{11}$/.test(value)) {
    fail(t, kind === "CNPJ" ? "is not a CNPJ (12 of 0-9/A-Z upper case and 2 digits)" : "is not a CPF (11 digits)");
  }
  return value;
}

/** Free text for a utf8mb4 VARCHAR(max): at most `maxChars` code points. */
export function varchar(t: Target, value: string | undefined, maxChars: number): string | null {
  if (value === undefined || value === "") return null;
  if (value.length > maxChars) {
    const n = Array.from(value).length;
    if (n > maxChars) fail(t, `is ${n} characters, more than the column's ${maxChars}`);
  }
  return value;
}

/** Free text for a TEXT column: at most 65,535 bytes of UTF-8. */
export function textColumn(t: Target, value: string | undefined): string | null {
  if (value === undefined || value === "") return null;
  const bytes = Buffer.byteLength(value, "utf8");
  if (bytes > TEXT_MAX_BYTES) fail(t, `is ${bytes} bytes, more than a TEXT column's ${TEXT_MAX_BYTES}`);
  return value;
}

/** A TINYINT/SMALLINT UNSIGNED code: 0 (absent) → NULL; anything above `max` does not fit. */
export function smallCode(t: Target, value: number, max = 255): number | null {
  if (value === 0) return null;
  if (!Number.isInteger(value) || value < 0 || value > max) fail(t, `is ${value}, outside the column's 1..${max}`);
  return value;
}

/** BIGINT cents. */
export function money(t: Target, value: bigint | undefined): string | null {
  if (value === undefined) return null;
  if (value > BIGINT_MAX || value < -BIGINT_MAX) fail(t, "is beyond a BIGINT");
  return value.toString();
}

/**
 * A rate into DECIMAL(7,4) percent: `units` of 10^-`decimals` percent (basis points: 2; parts per million: 4)
 * → exact text; 0 ≤ rate ≤ 999.9999 %.
 */
export function rate(t: Target, units: number | undefined, decimals: 2 | 4): string | null {
  if (units === undefined) return null;
  const scale = 10 ** decimals;
  if (!Number.isInteger(units) || units < 0 || units >= 1000 * scale) fail(t, `is ${units / scale} %, outside the column's 0..999.9999 %`);
  const whole = Math.trunc(units / scale);
  const fraction = String(units % scale)
    .padStart(decimals, "0")
    .padEnd(4, "0");
  return `${whole}.${fraction}`;
}

/** DATETIME: years 1000–9999. */
export function dateTime(t: Target, ts: Timestamp | undefined): Date | null {
  if (!ts) return null;
  const d = timestampDate(ts);
  const year = d.getUTCFullYear();
  if (Number.isNaN(d.getTime()) || year < 1000 || year > 9999) fail(t, "is not an instant a DATETIME can hold (years 1000-9999)");
  return d;
}

/** DATE: a real calendar day in years 1000–9999. */
export function calendarDate(t: Target, date: ProtoDate | undefined): string | null {
  if (!date) return null;
  const sql = toSqlDate(date);
  if (sql === null) fail(t, `is not a calendar date a DATE can hold (${date.year}-${date.month}-${date.day})`);
  return sql;
}

/** A MEDIUMBLOB. */
export function mediumBlob(t: Target, bytes: Buffer): Buffer {
  if (bytes.byteLength > MEDIUMBLOB_MAX_BYTES) fail(t, `is ${bytes.byteLength} bytes, more than a MEDIUMBLOB's ${MEDIUMBLOB_MAX_BYTES}`);
  return bytes;
}
