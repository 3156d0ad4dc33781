// Protobuf varints, for the encoders that write wire form themselves (binary-encoder.ts, decision 0048;
// libs/adn/lote-entry-wire.ts, decision 0055). A length is a number below 2^32; a 64-bit integer is a
// bigint already reduced to its unsigned form.

/** Bytes a varint of `n` (0 ≤ n < 2^32) takes. */
export function varintSize(n: number): number {
  return n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5;
}

/** Bytes a varint of `n` (0 ≤ n < 2^64) takes. */
export function bigVarintSize(n: bigint): number {
  let size = 1;
  while (n > 0x7fn) {
    n >>= 7n;
    size++;
  }
  return size;
}

/** Writes `n` (0 ≤ n < 2^32) at `at`; returns the offset after it. */
export function writeVarint(buf: Uint8Array, at: number, n: number): number {
  while (n > 0x7f) {
    buf[at++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[at++] = n;
  return at;
}

/** Writes `n` (0 ≤ n < 2^64) at `at`; returns the offset after it. */
export function writeBigVarint(buf: Uint8Array, at: number, n: bigint): number {
  while (n > 0x7fn) {
    buf[at++] = Number(n & 0x7fn) | 0x80;
    n >>= 7n;
  }
  buf[at++] = Number(n);
  return at;
}
