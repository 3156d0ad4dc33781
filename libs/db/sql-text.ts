// Values written into a statement's text by us rather than by mysql2's `format`, for the statements whose
// text is most of what a service sends: the store's multi-row upserts (docs/decisions/0042-statements-rendered-once.md).
// Every literal is what `format` would have written, so the server sees the same statement.
import { escape as escapeValue, format, type SqlValue } from "mysql2";

/** How every pool sends and reads JS Dates: as UTC (pool.ts). */
export const POOL_TIMEZONE = "Z";

/**
 * One value as a SQL literal, exactly as mysql2's `format` writes it for a `?`. Buffers skip `format`'s
 * escaping pass over their hex digits, which can hold nothing to escape.
 */
export function sqlLiteral(value: unknown): string {
  if (value === null || value === undefined) return "NULL";
  const type = typeof value;
  if (type === "number" || type === "bigint") return String(value);
  if (Buffer.isBuffer(value)) return `X'${value.toString("hex")}'`;
  return escapeValue(value as SqlValue, false, POOL_TIMEZONE);
}

/**
 * The pools' `queryFormat`: mysql2's own `format`, except that a statement without values is sent as
 * it is. mysql2 formats every statement, and `format` scans the whole text for a placeholder even when
 * there is no value to put in it — for a rendered upsert of a page, ≈ 200 KB scanned character by
 * character to change nothing.
 */
export function formatQuery(sql: string, values: unknown): string {
  if (values === undefined || (Array.isArray(values) && values.length === 0)) return sql;
  return format(sql, values as SqlValue[], false, POOL_TIMEZONE);
}
