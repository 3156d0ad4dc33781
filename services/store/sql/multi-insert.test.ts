import { describe, expect, it } from "vitest";
import { binaryValueBytes, buildMultiInsert, buildPreparedInserts, preparedChunkSizes } from "./multi-insert.js";

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

describe("buildPreparedInserts", () => {
  const spec = { head: "INSERT INTO t (a, b)", columnCount: 2, tail: "ON DUPLICATE KEY UPDATE b = VALUES(b)", maxRows: 32, rowStep: 8 };
  const rowCounts = (stmts: { params: unknown[] }[]) => stmts.map((s) => s.params.length / 2);

  it("cuts a group into a multiple of the step and the rest, at most maxRows per statement", () => {
    expect(preparedChunkSizes(27, 8)).toEqual([24, 3]);
    expect(preparedChunkSizes(16, 8)).toEqual([16]);
    expect(preparedChunkSizes(5, 8)).toEqual([5]);
    const rows = Array.from({ length: 45 }, (_, i) => [i, "x"]);
    const stmts = buildPreparedInserts({ ...spec, rows, budgetBytes: 1 << 20 });
    expect(rowCounts(stmts)).toEqual([32, 8, 5]);
    expect(stmts[2]!.sql).toBe("INSERT INTO t (a, b) VALUES (?, ?), (?, ?), (?, ?), (?, ?), (?, ?) ON DUPLICATE KEY UPDATE b = VALUES(b)");
    expect(stmts.flatMap((s) => s.params.filter((_, i) => i % 2 === 0))).toEqual(rows.map((r) => r[0]));
    expect(stmts.flatMap((s) => s.rows)).toEqual(rows);
  });

  it("uses at most maxRows/rowStep + rowStep - 1 statement texts whatever the row count", () => {
    const texts = new Set<string>();
    for (let n = 1; n <= 200; n++) {
      for (const s of buildPreparedInserts({ ...spec, rows: Array.from({ length: n }, () => [1, 2]), budgetBytes: 1 << 20 }))
        texts.add(s.sql);
    }
    expect(texts.size).toBe(11);
  });

  it("keeps each statement under the byte budget by the binary size, and sends an oversized row alone", () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, Buffer.alloc(1000)]);
    // Binary size: ~1 035 bytes a row, so four fit in 4 500 where the text estimate (2 000+) allowed two.
    const stmts = buildPreparedInserts({ ...spec, rows, budgetBytes: 4500 });
    expect(rowCounts(stmts)).toEqual([4, 4, 2]);
    for (const s of stmts) expect(s.params.reduce<number>((sum, v) => sum + binaryValueBytes(v), 0)).toBeLessThan(4500);
    const big = buildPreparedInserts({
      ...spec,
      rows: [
        [1, "x"],
        [2, Buffer.alloc(10_000)],
        [3, "y"],
      ],
      budgetBytes: 1000,
    });
    expect(rowCounts(big)).toEqual([1, 1, 1]);
  });

  it("binds undefined as NULL, as the text protocol writes it, and refuses malformed input", () => {
    const [stmt] = buildPreparedInserts({ ...spec, rows: [[1, undefined]], budgetBytes: 1000 });
    expect(stmt!.params).toEqual([1, null]);
    expect(buildPreparedInserts({ ...spec, rows: [], budgetBytes: 1000 })).toEqual([]);
    expect(() => buildPreparedInserts({ ...spec, rows: [[1]], budgetBytes: 1000 })).toThrow(/expected 2/);
    expect(() => buildPreparedInserts({ ...spec, maxRows: 30, rows: [[1, 2]], budgetBytes: 1000 })).toThrow(/multiple/);
  });

  it("counts strings at their worst-case UTF-8 size", () => {
    expect(binaryValueBytes("ação😀")).toBeGreaterThanOrEqual(Buffer.byteLength("ação😀") + 2);
    expect(binaryValueBytes(null)).toBeLessThan(binaryValueBytes(new Date()));
  });
});
