/**
 * Interleaved 2 of 5 as geometry (cobranca.md §7.3): the 44 digits as 22 pairs, the first digit of a
 * pair in the bars and the second in the spaces; start nnnn, stop wn n. Pure: returns bar rectangles.
 */
import { fail } from "../errors.js";

const PATTERNS = ["nnwwn", "wnnnw", "nwnnw", "wwnnn", "nnwnw", "wnwnn", "nwwnn", "nnnww", "wnnwn", "nwnwn"] as const;

export interface ItfGeometry {
  /** Bars as [x, width] in narrow-module units from the start of the symbol. */
  readonly bars: ReadonlyArray<readonly [number, number]>;
  /** Total width in narrow units (405 for 44 digits at 1:3). */
  readonly units: number;
}

/** Elements (bar, space, bar, …) in narrow units for an even-length digit string. */
export function itfElements(digits: string, ratio = 3): number[] {
  if (!/^\d+$/.test(digits) || digits.length % 2 !== 0) fail("CAMPO_INVALIDO", "ITF needs an even number of digits", "codigoBarras");
  const w = (c: string) => (c === "w" ? ratio : 1);
  const out: number[] = [1, 1, 1, 1]; // start: narrow bar, narrow space, narrow bar, narrow space
  for (let i = 0; i < digits.length; i += 2) {
    const a = PATTERNS[Number(digits[i])]!;
    const b = PATTERNS[Number(digits[i + 1])]!;
    for (let k = 0; k < 5; k++) out.push(w(a[k]!), w(b[k]!));
  }
  out.push(ratio, 1, 1); // stop: wide bar, narrow space, narrow bar
  return out;
}

export function itfGeometry(digits: string, ratio = 3): ItfGeometry {
  const el = itfElements(digits, ratio);
  const bars: Array<[number, number]> = [];
  let x = 0;
  el.forEach((u, i) => {
    if (i % 2 === 0) bars.push([x, u]);
    x += u;
  });
  return { bars, units: x };
}
