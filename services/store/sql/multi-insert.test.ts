import { describe, expect, it } from "vitest";
import { buildMultiInsert } from "./multi-insert.js";

describe("buildMultiInsert", () => {
  it("groups rows into statements that stay under the byte budget, in order", () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, Buffer.alloc(1000)]);
    const stmts = buildMultiInsert({
      head: "INSERT INTO t (a, b)",
      columnCount: 2,
      tail: "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)",
      rows,
      budgetBytes: 4500,
    });
    expect(stmts.map((s) => s.params.length / 2)).toEqual([2, 2, 2, 2, 2]);
    expect(stmts[0]!.sql).toBe("INSERT INTO t (a, b) VALUES (?, ?), (?, ?) ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)");
    expect(stmts.flatMap((s) => s.params.filter((_, i) => i % 2 === 0))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("sends one oversized row alone and nothing for no rows", () => {
    const stmts = buildMultiInsert({
      head: "INSERT INTO t (a)",
      columnCount: 1,
      rows: [["x"], [Buffer.alloc(10_000)], ["y"]],
      budgetBytes: 1000,
    });
    expect(stmts.map((s) => s.params.length)).toEqual([1, 1, 1]);
    expect(buildMultiInsert({ head: "INSERT INTO t (a)", columnCount: 1, rows: [], budgetBytes: 1000 })).toEqual([]);
    expect(() => buildMultiInsert({ head: "INSERT INTO t (a)", columnCount: 2, rows: [[1]], budgetBytes: 1000 })).toThrow();
  });
});
