import { format } from "mysql2";
import { describe, expect, it } from "vitest";
import { POOL_TIMEZONE } from "../../../libs/db/sql-text.js";
import { buildMultiInsert } from "./multi-insert.js";

const tail = "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)";

describe("buildMultiInsert", () => {
  it("writes the statement mysql2 would have formatted from placeholders", () => {
    const rows = [
      [1, "it's", Buffer.from("<xml/>"), null, new Date(Date.UTC(2026, 11, 3))],
      [2n, "São Paulo \\", Buffer.alloc(0), undefined, "?"],
    ];
    const [sql, ...more] = buildMultiInsert({ head: "INSERT INTO t (a, b, c, d, e)", columnCount: 5, tail, rows, budgetBytes: 1 << 20 });
    expect(more).toEqual([]);
    const placeholders = "INSERT INTO t (a, b, c, d, e) VALUES (?, ?, ?, ?, ?), (?, ?, ?, ?, ?) " + tail;
    expect(sql).toBe(format(placeholders, rows.flat() as never[], false, POOL_TIMEZONE));
  });

  it("groups rows into statements that stay under the byte budget, in order", () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, Buffer.alloc(1000)]);
    const stmts = buildMultiInsert({ head: "INSERT INTO t (a, b)", columnCount: 2, tail, rows, budgetBytes: 4500 });
    expect(stmts.map((s) => s.split("X'").length - 1)).toEqual([2, 2, 2, 2, 2]);
    for (const s of stmts) expect(Buffer.byteLength(s)).toBeLessThanOrEqual(4500);
    expect(stmts[0]!.startsWith("INSERT INTO t (a, b) VALUES (0, X'00")).toBe(true);
    expect(stmts[0]!.endsWith(`) ${tail}`)).toBe(true);
    expect(stmts.flatMap((s) => [...s.matchAll(/\((\d+), X'/g)].map((m) => Number(m[1])))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("sends one oversized row alone and nothing for no rows", () => {
    const stmts = buildMultiInsert({
      head: "INSERT INTO t (a)",
      columnCount: 1,
      rows: [["x"], [Buffer.alloc(10_000)], ["y"]],
      budgetBytes: 1000,
    });
    expect(stmts).toHaveLength(3);
    expect(stmts[0]).toBe("INSERT INTO t (a) VALUES ('x')");
    expect(buildMultiInsert({ head: "INSERT INTO t (a)", columnCount: 1, rows: [], budgetBytes: 1000 })).toEqual([]);
    expect(() => buildMultiInsert({ head: "INSERT INTO t (a)", columnCount: 2, rows: [[1]], budgetBytes: 1000 })).toThrow();
  });
});
