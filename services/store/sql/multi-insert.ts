// Multi-row INSERT statements cut to a byte budget. One NFS-e XML can be hundreds of KB and a batch holds
// 50–100 of them; a single statement could exceed max_allowed_packet, so rows are grouped into as few
// statements as fit, all executed in the caller's transaction: for a page of ordinary documents, one
// statement per table (docs/decisions/0035-one-statement-per-step-in-apply-batch.md). Each statement is
// written straight into one Buffer, sent with libs/db queryStatements: every value but a byte column as the
// literal mysql2's `format` would write (docs/decisions/0042-statements-rendered-once.md), a byte column
// as its own bytes, `_binary'…'`, instead of twice as many hex digits
// (docs/decisions/0057-statements-sent-as-bytes.md). A row may come already written (renderRows, in a
// decode thread), its bytes then copied as they are (docs/decisions/0069-rows-written-as-sql-in-the-decode-thread.md).
import { binaryLiteralLength, writeBinaryLiteral } from "../../../libs/db/binary-literal.js";
import { sqlLiteral } from "../../../libs/db/sql-text.js";

/**
 * A row's `(v1, v2, …)` as an upsert carries it, and where the literals of its feed slot (the columns a
 * stored item keeps from its first distribution: ambiente, tipo_nsu, nsu) sit in it. A plain object, so it
 * crosses a thread boundary as it is; `bytes` may be a view into a buffer shared with other rows.
 */
export interface RenderedRow {
  columns: number;
  bytes: Uint8Array;
  slotStart: number;
  slotEnd: number;
}

/** A row as its values, or already written. */
export type RowValues = unknown[] | RenderedRow;

export function isRendered(row: readonly unknown[] | RenderedRow): row is RenderedRow {
  return !Array.isArray(row);
}

export interface MultiInsert {
  /** `INSERT INTO t (a, b)` or `INSERT IGNORE INTO t (a, b)`; trusted text built by the caller. */
  head: string;
  columnCount: number;
  /** Trailing clause, e.g. `ON DUPLICATE KEY UPDATE …`; trusted text. */
  tail?: string;
  rows: readonly (readonly unknown[] | RenderedRow)[];
  budgetBytes: number;
}

/** Runs of text, byte values (written as binary literals) and rows already written, in order. */
type Piece = string | Uint8Array | RenderedRow;

interface Written {
  pieces: Piece[];
  bytes: number;
}

/** A row of values as pieces; `slot` [from, to] asks where the literals of columns from..to start and end. */
function rowPieces(
  row: readonly unknown[],
  columnCount: number,
  slot?: readonly [number, number],
): Written & { slotAt?: [number, number] } {
  if (row.length !== columnCount) throw new Error(`multi-insert: row has ${row.length} values, expected ${columnCount}`);
  const pieces: Piece[] = [];
  let bytes = 0;
  let slotStart = -1;
  let slotEnd = -1;
  // Text runs are joined by the engine's string concatenation and measured once each.
  let text = "(";
  const cut = () => {
    pieces.push(text);
    bytes += Buffer.byteLength(text);
    text = "";
  };
  for (let i = 0; i < columnCount; i++) {
    const value = row[i];
    if (i > 0) text += ", ";
    if (slot && i === slot[0]) {
      cut();
      slotStart = bytes;
    }
    if (value instanceof Uint8Array) {
      cut();
      pieces.push(value);
      bytes += binaryLiteralLength(value);
    } else {
      text += sqlLiteral(value);
    }
    if (slot && i === slot[1]) {
      cut();
      slotEnd = bytes;
    }
  }
  text += ")";
  cut();
  return slot ? { pieces, bytes, slotAt: [slotStart, slotEnd] } : { pieces, bytes };
}

function writePieces(pieces: readonly Piece[], target: Buffer, offset: number): number {
  let at = offset;
  for (const piece of pieces) {
    if (typeof piece === "string") at += target.write(piece, at, "utf8");
    else if (piece instanceof Uint8Array) at = writeBinaryLiteral(piece, target, at);
    else {
      target.set(piece.bytes, at);
      at += piece.bytes.byteLength;
    }
  }
  return at;
}

/**
 * Rows written ahead of their statement, all in one buffer: the store's decode threads write a page's rows
 * there, so that the transaction that sends them only copies them (decision 0069). `slot` [from, to] is
 * the columns withSlotValues may replace.
 */
export function renderRows(rows: readonly { values: readonly unknown[]; slot: readonly [number, number] }[]): RenderedRow[] {
  const written = rows.map((r) => rowPieces(r.values, r.values.length, r.slot));
  const buffer = Buffer.allocUnsafeSlow(written.reduce((n, w) => n + w.bytes, 0));
  let at = 0;
  return written.map((w, i) => {
    const start = at;
    at = writePieces(w.pieces, buffer, at);
    if (at - start !== w.bytes) throw new Error(`multi-insert: wrote ${at - start} bytes of a ${w.bytes}-byte row`);
    const [slotStart, slotEnd] = w.slotAt!;
    return { columns: rows[i]!.values.length, bytes: buffer.subarray(start, at), slotStart, slotEnd };
  });
}

/** The row with the literals of its slot's columns replaced by those of `values` (an update keeps the stored slot). */
export function withSlotValues(row: RenderedRow, values: readonly unknown[]): RenderedRow {
  const slot = Buffer.from(values.map((v) => sqlLiteral(v)).join(", "), "utf8");
  const bytes = Buffer.concat([row.bytes.subarray(0, row.slotStart), slot, row.bytes.subarray(row.slotEnd)]);
  return { columns: row.columns, bytes, slotStart: row.slotStart, slotEnd: row.slotStart + slot.length };
}

/** The statements, values included, each as the bytes to send (queryStatements), in row order. */
export function buildMultiInsert({ head, columnCount, tail = "", rows, budgetBytes }: MultiInsert): Buffer[] {
  const opening = `${head} VALUES `;
  const closing = tail ? ` ${tail}` : "";
  const fixed = Buffer.byteLength(opening) + Buffer.byteLength(closing);
  const out: Buffer[] = [];
  let pieces: Piece[] = [];
  let bytes = fixed;
  let rowsIn = 0;
  const flush = () => {
    if (rowsIn === 0) return;
    out.push(writeStatement(opening, pieces, closing, bytes));
    pieces = [];
    bytes = fixed;
    rowsIn = 0;
  };
  for (const row of rows) {
    let written: Written;
    if (isRendered(row)) {
      if (row.columns !== columnCount) throw new Error(`multi-insert: row has ${row.columns} values, expected ${columnCount}`);
      written = { pieces: [row], bytes: row.bytes.byteLength };
    } else written = rowPieces(row, columnCount);
    // A row larger than the budget still goes, alone: the server is the judge of max_allowed_packet.
    if (rowsIn > 0 && bytes + 2 + written.bytes > budgetBytes) flush();
    if (rowsIn > 0) {
      pieces.push(", ");
      bytes += 2;
    }
    for (const piece of written.pieces) pieces.push(piece);
    bytes += written.bytes;
    rowsIn++;
  }
  flush();
  return out;
}

function writeStatement(opening: string, pieces: readonly Piece[], closing: string, length: number): Buffer {
  const target = Buffer.allocUnsafe(length);
  let at = target.write(opening, 0, "utf8");
  at = writePieces(pieces, target, at);
  at += target.write(closing, at, "utf8");
  if (at !== length) throw new Error(`multi-insert: wrote ${at} bytes of a ${length}-byte statement`);
  return target;
}
