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
});
