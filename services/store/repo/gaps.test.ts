import { describe, expect, it } from "vitest";
import { gapsIn } from "./gaps.js";

const pairs = (lo: bigint, hi: bigint, present: bigint[]) => gapsIn(lo, hi, present).map((g) => [g.start, g.end]);

describe("gapsIn", () => {
  it("returns exactly the missing runs of the range", () => {
    expect(pairs(1n, 10n, [1n, 2n, 3n, 4n, 5n, 6n, 8n, 9n, 10n])).toEqual([[7n, 7n]]);
    expect(pairs(1n, 10n, [2n, 5n])).toEqual([
      [1n, 1n],
      [3n, 4n],
      [6n, 10n],
    ]);
    expect(pairs(5n, 7n, [5n, 6n, 7n])).toEqual([]);
    expect(pairs(5n, 7n, [])).toEqual([[5n, 7n]]);
    expect(pairs(18446744073709551610n, 18446744073709551615n, [18446744073709551612n])).toEqual([
      [18446744073709551610n, 18446744073709551611n],
      [18446744073709551613n, 18446744073709551615n],
    ]);
  });
});
