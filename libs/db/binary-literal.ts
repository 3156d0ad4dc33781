// A byte column's value written into a statement as its own bytes, `_binary'…'`, with the three bytes the
// server's lexer reads specially escaped (NUL, quote, backslash), rather than as X'…' with two hex digits
// per byte: a page's upsert is mostly XML, and its hex form doubled what the store built, copied and sent
// and what the server parsed (docs/decisions/0057-statements-sent-as-bytes.md). The introducer makes the
// literal binary, so the server neither checks nor converts it against the connection's utf8mb4; and no
// byte of a UTF-8 multi-byte sequence is below 0x80, so the lexer never takes an escape for part of one.

const NUL = 0x00;
const QUOTE = 0x27;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const OPEN = Buffer.from("_binary'", "latin1");

/** Bytes the literal of `bytes` takes: the introducer, the quotes and one extra byte per escape. */
export function binaryLiteralLength(bytes: Uint8Array): number {
  const view = asBuffer(bytes);
  return OPEN.length + view.length + count(view, NUL) + count(view, QUOTE) + count(view, BACKSLASH) + 1;
}

/** Writes the literal of `bytes` at `offset` (room for binaryLiteralLength bytes); returns the offset after it. */
export function writeBinaryLiteral(bytes: Uint8Array, target: Buffer, offset: number): number {
  const view = asBuffer(bytes);
  let at = offset + OPEN.copy(target, offset);
  // The next position of each special byte, found by the native search: XML has few or none of them.
  let nul = view.indexOf(NUL);
  let quote = view.indexOf(QUOTE);
  let backslash = view.indexOf(BACKSLASH);
  let from = 0;
  for (;;) {
    const next = firstOf(nul, quote, backslash);
    if (next < 0) break;
    at += view.copy(target, at, from, next);
    const b = view[next]!;
    target[at++] = BACKSLASH;
    target[at++] = b === NUL ? ZERO : b;
    from = next + 1;
    if (b === NUL) nul = view.indexOf(NUL, from);
    else if (b === QUOTE) quote = view.indexOf(QUOTE, from);
    else backslash = view.indexOf(BACKSLASH, from);
  }
  at += view.copy(target, at, from);
  target[at++] = QUOTE;
  return at;
}

/** The least of the positions that were found (≥ 0), or -1. */
function firstOf(a: number, b: number, c: number): number {
  let m = a;
  if (b >= 0 && (m < 0 || b < m)) m = b;
  if (c >= 0 && (m < 0 || c < m)) m = c;
  return m;
}

function count(view: Buffer, byte: number): number {
  let n = 0;
  for (let i = view.indexOf(byte); i >= 0; i = view.indexOf(byte, i + 1)) n++;
  return n;
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}
