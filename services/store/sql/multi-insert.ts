// Multi-row INSERT statements cut to a byte budget. One NFS-e XML can be hundreds of KB and a batch holds
// 50–100 of them; a single statement could exceed max_allowed_packet, so rows are grouped into as few
// statements as fit, all executed in the caller's transaction: for a page of ordinary documents, one
// statement per table (docs/decisions/0035-one-statement-per-step-in-apply-batch.md). They go over
// mysql2's text protocol (`query`), where a Buffer travels as X'hex' (twice its size) and a string may
// double through escaping; the estimate below counts that.
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
    // A loop, not current.flat(): V8's flat() took ≈ 200 µs for a page of 50 documents' rows where this
    // takes ≈ 15 (4 % of the store's event loop in a K = 50 bootstrap).
    const params: unknown[] = [];
    for (const row of current) for (let i = 0; i < row.length; i++) params.push(row[i]);
    out.push({
      sql: `${head} VALUES ${new Array(current.length).fill(tuple).join(", ")}${tail ? ` ${tail}` : ""}`,
      params,
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
