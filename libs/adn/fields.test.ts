import { describe, expect, it } from "vitest";
import { parseCents } from "./fields.js";

describe("amounts in cents", () => {
  it("reads exactly what the regular expression it replaced read", () => {
    // The previous implementation, kept as the reference.
    const reference = (raw: string) => {
      const m = /^(-?)(\d{1,15})(?:\.(\d{1,2}))?$/.exec(raw);
      if (!m) return undefined;
      const cents = BigInt(m[2]!) * 100n + BigInt((m[3] ?? "").padEnd(2, "0"));
      return m[1] ? -cents : cents;
    };
    const pieces = ["0", "1", "9", "12", "999999", "-", ".", "5", "07", " ", "e", "+", "١", "00000000"];
    let seed = 5;
    const rnd = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 16) % n;
    let accepted = 0;
    for (let i = 0; i < 20_000; i++) {
      const raw = Array.from({ length: 1 + rnd(6) }, () => pieces[rnd(pieces.length)]).join("");
      const want = reference(raw);
      expect(parseCents(raw), JSON.stringify(raw)).toBe(want);
      if (want !== undefined) accepted++;
    }
    expect(accepted).toBeGreaterThan(1000);
  });

  it("keeps every digit of the largest amounts, past what a number holds exactly", () => {
    expect(parseCents("999999999999999.99")).toBe(99_999_999_999_999_999n);
    expect(parseCents("-9999999999999.99")).toBe(-999_999_999_999_999n);
    expect(parseCents("90071992547409.93")).toBe(9_007_199_254_740_993n);
    expect(parseCents("1000.5")).toBe(100_050n);
    expect(parseCents("-0.00")).toBe(0n);
    for (const bad of ["", "-", "1.", ".5", "1.234", "1000000000000000", "1,00", " 1"]) expect(parseCents(bad), bad).toBeUndefined();
  });
});
