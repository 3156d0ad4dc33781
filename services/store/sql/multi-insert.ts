// Multi-row INSERT statements cut to a byte budget. One NFS-e XML can be hundreds of KB and a batch holds
// 50–100 of them; a single statement could exceed max_allowed_packet, so rows are grouped into as few
// statements as fit, all executed in the caller's transaction: for a page of ordinary documents, one
// statement per table (docs/decisions/0035-one-statement-per-step-in-apply-batch.md). Each statement is
// written straight into one Buffer, sent with libs/db queryStatements: every value but a byte column as the
// literal mysql2's `format` would write (docs/decisions/0042-statements-rendered-once.md), a byte column
// as its own bytes, `_binary'…'`, instead of twice as many hex digits
// (docs/decisions/0057-statements-sent-as-bytes.md).
import { binaryLiteralLength, writeBinaryLiteral } from "../../../libs/db/binary-literal.js";
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

/** A rendered row, or the rows of a statement: runs of text between byte values, in order. */
type Piece = string | Uint8Array;

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
    if (row.length !== columnCount) throw new Error(`multi-insert: row has ${row.length} values, expected ${columnCount}`);
    const rowStart = pieces.length;
    let rowBytes = 0;
    // Text runs are joined by the engine's string concatenation and measured once each.
    let text = "(";
    for (let i = 0; i < columnCount; i++) {
      const value = row[i];
      if (i > 0) text += ", ";
      if (value instanceof Uint8Array) {
        pieces.push(text, value);
        rowBytes += Buffer.byteLength(text) + binaryLiteralLength(value);
        text = "";
      } else {
        text += sqlLiteral(value);
      }
    }
    text += ")";
    pieces.push(text);
    rowBytes += Buffer.byteLength(text);
    // A row larger than the budget still goes, alone: the server is the judge of max_allowed_packet.
    if (rowsIn > 0 && bytes + 2 + rowBytes > budgetBytes) {
      const rowPieces = pieces.slice(rowStart);
      pieces.length = rowStart;
      flush();
      pieces = rowPieces;
    } else if (rowsIn > 0) {
      pieces[rowStart] = `, ${pieces[rowStart] as string}`;
      rowBytes += 2;
    }
    bytes += rowBytes;
    rowsIn++;
  }
  flush();
  return out;
}

function writeStatement(opening: string, pieces: readonly Piece[], closing: string, length: number): Buffer {
  const target = Buffer.allocUnsafe(length);
  let at = target.write(opening, 0, "utf8");
  for (const piece of pieces) {
    if (typeof piece === "string") at += target.write(piece, at, "utf8");
    else at = writeBinaryLiteral(piece, target, at);
  }
  at += target.write(closing, at, "utf8");
  if (at !== length) throw new Error(`multi-insert: wrote ${at} bytes of a ${length}-byte statement`);
  return target;
}
