import { describe, expect, it } from "vitest";
import { parseAdnDate, parseAdnDateTime } from "./time.js";

const iso = (text: string) => {
  const ts = parseAdnDateTime(text)!;
  return { ms: Number(ts.seconds) * 1000, nanos: ts.nanos };
};

describe("ADN date-times", () => {
  it("reads offsets exactly and keeps up to 9 fraction digits", () => {
    expect(iso("2026-03-10T14:02:10-03:00")).toEqual({ ms: Date.parse("2026-03-10T17:02:10Z"), nanos: 0 });
    expect(iso("2026-03-12T08:00:00.1234567-03:00")).toEqual({ ms: Date.parse("2026-03-12T11:00:00Z"), nanos: 123_456_700 });
    expect(iso("2026-03-12T08:00:00Z").ms).toBe(Date.parse("2026-03-12T08:00:00Z"));
  });

  it("reads DataHoraGeracao without an offset as São Paulo time, with 1–3 fraction digits", () => {
    expect(iso("2026-01-03T15:04:09.28")).toEqual({ ms: Date.parse("2026-01-03T18:04:09Z"), nanos: 280_000_000 });
    expect(iso("2026-03-11T09:30:02.7").nanos).toBe(700_000_000);
    // Before 2019 Brazil had summer time: −02:00 in January 2018.
    expect(iso("2018-01-15T12:00:00").ms).toBe(Date.parse("2018-01-15T14:00:00Z"));
  });

  it("refuses impossible or malformed values", () => {
    for (const bad of ["2026-02-30T10:00:00-03:00", "2026-13-01T10:00:00", "10/03/2026 14:00", "2026-03-10T25:00:00", ""]) {
      expect(parseAdnDateTime(bad)).toBeUndefined();
    }
    expect(parseAdnDate("2026-03-10")).toMatchObject({ year: 2026, month: 3, day: 10 });
    expect(parseAdnDate("2025-02-29")).toBeUndefined();
  });

  it("reads exactly what the regular expressions it replaced read", () => {
    // The previous implementation's syntax, kept as the reference; the checks after it are shared code.
    const dateTime = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:?\d{2})?$/;
    const date = /^(\d{4})-(\d{2})-(\d{2})$/;
    const reference = (text: string) => {
      const m = dateTime.exec(text.trim());
      if (!m) return undefined;
      const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [number, number, number, number, number, number];
      if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return undefined;
      const localMs = Date.UTC(year, month - 1, day, hour, minute, second);
      const check = new Date(localMs);
      if (check.getUTCDate() !== day || check.getUTCMonth() !== month - 1) return undefined;
      const z = m[8] && m[8] !== "Z" ? /^([+-])(\d{2}):?(\d{2})$/.exec(m[8])! : undefined;
      // São Paulo has been at −03:00 since 2019, the only years the pieces make without an offset.
      const offsetMin = m[8] === "Z" ? 0 : z ? (z[1] === "-" ? -1 : 1) * (Number(z[2]) * 60 + Number(z[3])) : -180;
      return { seconds: BigInt(Math.floor((localMs - offsetMin * 60_000) / 1000)), nanos: m[7] ? Number(m[7].padEnd(9, "0")) : 0 };
    };
    const pieces = "2026|-|03|10|T| |:|14|59|60|.|1234567|0|Z|+|-03:00|0300|9|x|٣|\n".split("|");
    let seed = 11;
    const rnd = (n: number) => ((seed = (seed * 1_103_515_245 + 12_345) >>> 0) >>> 16) % n;
    const variants = (base: string) => [
      base,
      ...Array.from(
        { length: 6 },
        () => base.slice(0, rnd(base.length + 1)) + pieces[rnd(pieces.length)] + base.slice(rnd(base.length + 1)),
      ),
    ];
    let parsed = 0;
    for (let i = 0; i < 4000; i++) {
      const base = [
        "2026-03-10T14:02:10-03:00",
        "2026-01-03T15:04:09.28",
        "2026-03-12 08:00:00.123456789Z",
        "2024-02-29T23:59:60+0130",
        "2026-03-10",
      ][i % 5]!;
      for (const text of variants(base)) {
        const got = parseAdnDateTime(text);
        expect(got && { seconds: got.seconds, nanos: got.nanos }, JSON.stringify(text)).toEqual(reference(text));
        if (got) parsed++;
        if (!date.test(text.trim())) expect(parseAdnDate(text), JSON.stringify(text)).toBeUndefined();
      }
    }
    expect(parsed).toBeGreaterThan(1000);
    // What both accept, the new one reads as the old one did.
    expect(iso("2024-02-29 23:59:59+0130")).toEqual({ ms: Date.parse("2024-02-29T22:29:59Z"), nanos: 0 });
    expect(iso("  2026-03-12T08:00:00.123456789Z\n")).toEqual({ ms: Date.parse("2026-03-12T08:00:00Z"), nanos: 123_456_789 });
    expect(iso("2026-03-12T08:00:00.5+03:30").ms).toBe(Date.parse("2026-03-12T04:30:00.000Z"));
  });
});
