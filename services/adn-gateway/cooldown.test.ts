import { describe, expect, it } from "vitest";
import { Cooldowns } from "./cooldown.js";

describe("Cooldowns", () => {
  it("keeps a 429's cool-down per key until it ends", () => {
    const c = new Cooldowns(300_000);
    expect(c.record("3550308/2", 1000)).toEqual({ observedAt: 1000, until: 301_000 });
    expect(c.current("3550308/2", 300_999)).toEqual({ observedAt: 1000, until: 301_000 });
    expect(c.current("3550308/1", 2000)).toBeUndefined();
    expect(c.current("3550308/2", 301_000)).toBeUndefined();
  });
});
