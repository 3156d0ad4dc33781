import { describe, expect, it } from "vitest";
import { PreparedMunicipalities } from "./prepared-municipalities.js";

describe("PreparedMunicipalities", () => {
  it("admits up to its capacity, keeps its members, and lets a newcomer in only in place of an idle member", () => {
    let now = 0;
    const set = new PreparedMunicipalities(2, 1000, () => now);
    expect(set.admit("a")).toBe(true);
    expect(set.admit("b")).toBe(true);
    expect(set.admit("c")).toBe(false);
    now = 900;
    expect(set.admit("a")).toBe(true); // a member stays, and its use counts
    now = 1500;
    expect(set.admit("c")).toBe(true); // b has been idle for 1,500 ms: c takes its place
    expect(set.members().sort()).toEqual(["a", "c"]);
    expect(set.admit("b")).toBe(false); // a was used 600 ms ago, c just now
    now = 2600;
    expect(set.admit("b")).toBe(true);
    expect(set.members().sort()).toEqual(["b", "c"]);
  });
});
