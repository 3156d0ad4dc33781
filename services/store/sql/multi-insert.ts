// Multi-row INSERT statements cut to a byte budget. One NFS-e XML can be hundreds of KB and a batch holds
// 50–100 of them; a single statement could exceed max_allowed_packet, so rows are grouped into as few
// statements as fit, all executed in the caller's transaction: for a page of ordinary documents, one
// statement per table (docs/decisions/0035-one-statement-per-step-in-apply-batch.md). The values are
// written into the text here, each row once, and the statement is joined in one piece: mysql2's `format`
// of 3,000 placeholders and the flattening of the string it built cost the store's event loop more than
// the rows' own escaping (docs/decisions/0042-statements-rendered-once.md).
import { sqlLiteral } from "../../../libs/db/sql-text.js";

export interface MultiInsert {
  /** `INSERT INTO t (a, b)` or `INSERT IGNORE INTO t (a, b)`; trusted text built by the caller. */
  head: string;
  columnCount: number;
  /** Trailing clause, e.g. `ON DUPLICATE KEY UPDATE …`; trusted text. */
  tail?: string;
  rows: readonly (readonly unknown[])[];
  budgetBytes: number;
}

/**
 * The statements' full text, values included; send each with no values. Every literal becomes one piece of
 * one array per statement, joined once: the text comes out flat, so mysql2's byte count and its copy into
 * the packet do not first flatten a string of thousands of pieces.
 */
export function buildMultiInsert({ head, columnCount, tail = "", rows, budgetBytes }: MultiInsert): string[] {
  const opening = `${head} VALUES `;
  const closing = tail ? ` ${tail}` : "";
  const fixed = Buffer.byteLength(opening) + Buffer.byteLength(closing);
  const out: string[] = [];
  let parts: string[] = [opening];
  let bytes = fixed;
  let rowsIn = 0;
  const literals: string[] = new Array(columnCount);
  const flush = () => {
    if (rowsIn === 0) return;
    parts.push(closing);
    out.push(parts.join(""));
    parts = [opening];
    bytes = fixed;
    rowsIn = 0;
  };
  for (const row of rows) {
    if (row.length !== columnCount) throw new Error(`multi-insert: row has ${row.length} values, expected ${columnCount}`);
    // "(", ")" and the ", " before the next row; a literal of anything but text is ASCII.
    let rowBytes = 4 + 2 * (columnCount - 1);
    for (let i = 0; i < columnCount; i++) {
      const literal = sqlLiteral(row[i]);
      literals[i] = literal;
      rowBytes += typeof row[i] === "string" ? Buffer.byteLength(literal) : literal.length;
    }
    // A row larger than the budget still goes, alone: the server is the judge of max_allowed_packet.
    if (rowsIn > 0 && bytes + rowBytes > budgetBytes) flush();
    parts.push(rowsIn === 0 ? "(" : ", (");
    for (let i = 0; i < columnCount; i++) {
      if (i > 0) parts.push(", ");
      parts.push(literals[i]!);
    }
    parts.push(")");
    bytes += rowBytes;
    rowsIn++;
  }
  flush();
  return out;
}
