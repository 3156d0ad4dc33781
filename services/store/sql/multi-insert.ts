// Multi-row INSERT statements cut to a byte budget. One NFS-e XML can be hundreds of KB and a batch holds
// 50–100 of them; a single statement would exceed max_allowed_packet, so rows are grouped into as few
// statements as fit, all executed in the caller's transaction. Two flavours:
// - buildMultiInsert, for mysql2's text protocol (`query`), where a Buffer travels as X'hex' (twice its
//   size) and a string may double through escaping;
// - buildPreparedInserts, for the binary protocol (`execute`), where values travel as they are and the
//   row counts come from a small fixed set, so each statement text is prepared once per connection.
import type { SqlFragment } from "./keyset.js";

export function estimateValueBytes(value: unknown): number {
  if (value === null || value === undefined) return 4;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return value.byteLength * 2 + 3;
  if (typeof value === "string") return Buffer.byteLength(value, "utf8") * 2 + 2;
  if (value instanceof Date) return 28;
  return 24;
}

export interface MultiInsert {
  /** `INSERT INTO t (a, b)` or `INSERT IGNORE INTO t (a, b)`; trusted text built by the caller. */
  head: string;
  columnCount: number;
  /** Trailing clause, e.g. `ON DUPLICATE KEY UPDATE …`; trusted text. */
  tail?: string;
  rows: unknown[][];
  budgetBytes: number;
}

export function buildMultiInsert({ head, columnCount, tail = "", rows, budgetBytes }: MultiInsert): SqlFragment[] {
  const tuple = `(${new Array(columnCount).fill("?").join(", ")})`;
  const fixed = head.length + tail.length + 32;
  const out: SqlFragment[] = [];
  let current: unknown[][] = [];
  let bytes = fixed;
  const flush = () => {
    if (current.length === 0) return;
    out.push({
      sql: `${head} VALUES ${current.map(() => tuple).join(", ")}${tail ? ` ${tail}` : ""}`,
      params: current.flat(),
    });
    current = [];
    bytes = fixed;
  };
  for (const row of rows) {
    if (row.length !== columnCount) throw new Error(`multi-insert: row has ${row.length} values, expected ${columnCount}`);
    const rowBytes = row.reduce<number>((sum, v) => sum + estimateValueBytes(v), tuple.length + 2);
    // A row larger than the budget still goes, alone: the server is the judge of max_allowed_packet.
    if (current.length > 0 && bytes + rowBytes > budgetBytes) flush();
    current.push(row);
    bytes += rowBytes;
  }
  flush();
  return out;
}

/**
 * Bytes a value takes in a COM_STMT_EXECUTE packet: its type (2), a length prefix (≤ 9) and the raw bytes.
 * Strings count 3 bytes per UTF-16 unit, an upper bound of their UTF-8 size that needs no scan.
 */
export function binaryValueBytes(value: unknown): number {
  if (value === null || value === undefined) return 2;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return value.byteLength + 11;
  if (typeof value === "string") return value.length * 3 + 11;
  if (value instanceof Date) return 14;
  return 24;
}

/**
 * The row counts a group of `n` rows is cut into: the largest multiple of `step`, then the rest
 * (27 rows, step 8 → 24 + 3). Every statement thus has one of maxRows/step + step − 1 row counts, and a
 * group needs at most two statements.
 */
export function preparedChunkSizes(n: number, step: number): number[] {
  const rest = n % step;
  return [n - rest, rest].filter((size) => size > 0);
}

export interface PreparedStatementRows extends SqlFragment {
  /** The rows behind params, for a caller that has to send them another way. */
  rows: unknown[][];
}

export interface PreparedInsert extends MultiInsert {
  /** Most rows in one statement; a multiple of rowStep. */
  maxRows: number;
  /** Granularity of the larger statements' row counts (see preparedChunkSizes). */
  rowStep: number;
}

/**
 * Prepared multi-row INSERTs. Rows are grouped by the byte budget (and maxRows) as in buildMultiInsert,
 * then each group is cut by preparedChunkSizes, which bounds how many statement texts a table ever needs
 * and so what the server and mysql2 keep prepared.
 */
export function buildPreparedInserts({
  head,
  columnCount,
  tail = "",
  rows,
  budgetBytes,
  maxRows,
  rowStep,
}: PreparedInsert): PreparedStatementRows[] {
  if (rowStep < 1 || maxRows < rowStep || maxRows % rowStep !== 0)
    throw new Error(`prepared insert: maxRows ${maxRows} is not a multiple of ${rowStep}`);
  const tuple = `(${new Array(columnCount).fill("?").join(", ")})`;
  // Packet header, statement id, flags and the NULL bitmap; the text goes separately, at prepare time.
  const fixed = 16 + Math.ceil((maxRows * columnCount) / 8);
  const out: PreparedStatementRows[] = [];
  const emit = (group: unknown[][]) => {
    let at = 0;
    for (const size of preparedChunkSizes(group.length, rowStep)) {
      const chunk = group.slice(at, at + size);
      at += size;
      out.push({
        sql: `${head} VALUES ${new Array(size).fill(tuple).join(", ")}${tail ? ` ${tail}` : ""}`,
        params: bindParams(chunk),
        rows: chunk,
      });
    }
  };
  let group: unknown[][] = [];
  let bytes = fixed;
  for (const row of rows) {
    if (row.length !== columnCount) throw new Error(`prepared insert: row has ${row.length} values, expected ${columnCount}`);
    const rowBytes = row.reduce<number>((sum, v) => sum + binaryValueBytes(v), 0);
    // A row larger than the budget still goes, alone: the server is the judge of max_allowed_packet.
    if (group.length > 0 && (group.length === maxRows || bytes + rowBytes > budgetBytes)) {
      emit(group);
      group = [];
      bytes = fixed;
    }
    group.push(row);
    bytes += rowBytes;
  }
  if (group.length > 0) emit(group);
  return out;
}

// The text protocol writes `undefined` as NULL; mysql2's execute refuses it. Keep the text behaviour.
function bindParams(rows: unknown[][]): unknown[] {
  const params: unknown[] = [];
  for (const row of rows) for (const v of row) params.push(v === undefined ? null : v);
  return params;
}
