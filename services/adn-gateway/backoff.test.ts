import { describe, expect, it } from "vitest";
import { backoffDelayMs, sleep } from "./backoff.js";

describe("backoff", () => {
  const policy = { baseMs: 1000, maxMs: 30_000 };

  it("doubles per retry within [step/2, step] and never exceeds the maximum", () => {
    for (const [retry, step] of [
      [1, 1000],
      [2, 2000],
      [3, 4000],
      [5, 16_000],
      [6, 30_000],
      [40, 30_000],
    ] as const) {
      expect(backoffDelayMs(retry, policy, () => 0)).toBe(step / 2);
      expect(backoffDelayMs(retry, policy, () => 0.999_999)).toBeLessThanOrEqual(step);
      expect(backoffDelayMs(retry, policy, () => 0.999_999)).toBeGreaterThan(step * 0.99);
    }
  });

  it("sleep rejects as soon as the signal aborts", async () => {
    const controller = new AbortController();
    const pending = sleep(60_000, controller.signal);
    controller.abort(new Error("stop"));
    await expect(pending).rejects.toThrow("stop");
  });
});
