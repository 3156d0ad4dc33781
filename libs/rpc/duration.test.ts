import { Code, ConnectError } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import { DurationSchema } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { durationMsOf, durationOfMs, spoken } from "./duration.js";

const d = (seconds: bigint, nanos = 0) => create(DurationSchema, { seconds, nanos });
const LINK = { defaultMs: 15 * 60_000, maxMs: 7 * 86_400_000 };

function refusal(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    return (err as ConnectError).rawMessage;
  }
  throw new Error("expected INVALID_ARGUMENT");
}

describe("durationMsOf", () => {
  it("gives the default when absent and the value in ms when present", () => {
    expect(durationMsOf("ttl", undefined, LINK)).toBe(15 * 60_000);
    expect(durationMsOf("ttl", d(90n, 500_000_000), LINK)).toBe(90_500);
    expect(durationMsOf("ttl", d(7n * 86_400n), LINK)).toBe(7 * 86_400_000);
  });

  it("refuses zero unless the field allows it, naming the field", () => {
    expect(refusal(() => durationMsOf("link_ttl", d(0n), LINK))).toBe("link_ttl must be positive (leave it unset for the default)");
    expect(durationMsOf("grace", d(0n), { ...LINK, minMs: 0 })).toBe(0);
    expect(refusal(() => durationMsOf("wait", d(1n), { ...LINK, minMs: 5000 }))).toBe("wait must be at least 5 seconds");
  });

  it("refuses negative values and nanos out of range", () => {
    expect(refusal(() => durationMsOf("ttl", d(-1n), LINK))).toBe("ttl must not be negative");
    expect(refusal(() => durationMsOf("ttl", d(0n, -5), LINK))).toBe("ttl must not be negative");
    expect(refusal(() => durationMsOf("ttl", d(1n, 1_000_000_000), LINK))).toBe("ttl.nanos is out of range (got 1000000000)");
  });

  it("refuses a value above the maximum instead of clamping it, naming the maximum", () => {
    expect(refusal(() => durationMsOf("ttl", d(7n * 86_400n, 1_000_000), LINK))).toBe("ttl must be at most 7 days");
    expect(refusal(() => durationMsOf("ttl", d(2n ** 62n), LINK))).toBe("ttl must be at most 7 days");
  });
});

describe("durationOfMs", () => {
  it("splits milliseconds into seconds and nanos and round-trips", () => {
    expect(durationOfMs(1500)).toMatchObject({ seconds: 1n, nanos: 500_000_000 });
    expect(durationOfMs(2.25)).toMatchObject({ seconds: 0n, nanos: 2_250_000 });
    expect(durationMsOf("ttl", durationOfMs(123_456), LINK)).toBe(123_456);
    expect(() => durationOfMs(-1)).toThrow(RangeError);
  });

  it("speaks durations in the largest exact unit", () => {
    expect(spoken(86_400_000)).toBe("1 day");
    expect(spoken(15 * 60_000)).toBe("15 minutes");
    expect(spoken(1500)).toBe("1500 ms");
  });
});
