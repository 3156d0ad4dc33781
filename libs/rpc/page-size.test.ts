import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { pageSizeOf } from "./page-size.js";

describe("pageSizeOf", () => {
  it("gives the default for 0, clamps to the maximum and refuses a negative size naming page_size", () => {
    expect(pageSizeOf(0)).toBe(50);
    expect(pageSizeOf(7)).toBe(7);
    expect(pageSizeOf(10_000)).toBe(500);
    expect(pageSizeOf(0, { default: 100, max: 1000 })).toBe(100);
    expect(pageSizeOf(5000, { default: 100, max: 1000 })).toBe(1000);
    const err = (() => {
      try {
        pageSizeOf(-1);
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.InvalidArgument);
    expect((err as ConnectError).rawMessage).toContain("page_size");
  });
});
