import { format } from "mysql2";
import { describe, expect, it } from "vitest";
import { POOL_TIMEZONE } from "../../../libs/db/sql-text.js";
import { buildMultiInsert, isRendered, renderRows, withSlotValues } from "./multi-insert.js";

const tail = "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id)";
const latin1 = (b: Buffer) => b.toString("latin1");

describe("buildMultiInsert", () => {
  it("writes every value but a byte column as mysql2 would have formatted it from placeholders", () => {
    const rows = [
      [1, "it's", null, new Date(Date.UTC(2026, 11, 3))],
      [2n, "São Paulo \\ — ✓", undefined, "?"],
    ];
    const [statement, ...more] = buildMultiInsert({ head: "INSERT INTO t (a, b, c, d)", columnCount: 4, tail, rows, budgetBytes: 1 << 20 });
    expect(more).toEqual([]);
    const placeholders = "INSERT INTO t (a, b, c, d) VALUES (?, ?, ?, ?), (?, ?, ?, ?) " + tail;
    expect(statement!.equals(Buffer.from(format(placeholders, rows.flat() as never[], false, POOL_TIMEZONE)))).toBe(true);
  });

  it("writes a byte column as its own bytes, escaping only NUL, quote and backslash", () => {
    const bytes = Buffer.from([0x3c, 0x00, 0x01, 0x27, 0x5c, 0xc3, 0x27, 0xff, 0x22]);
    const [statement] = buildMultiInsert({
      head: "INSERT INTO t (a, b, c)",
      columnCount: 3,
      rows: [
        [7, bytes, new Uint8Array([0x5c])],
        [8, Buffer.alloc(0), "x"],
      ],
      budgetBytes: 1 << 20,
    });
    expect(latin1(statement!)).toBe(
      "INSERT INTO t (a, b, c) VALUES (7, _binary'<\\0\x01\\'\\\\\xc3\\'\xff\"', _binary'\\\\'), (8, _binary'', 'x')",
    );
  });

  it("groups rows into statements that stay under the byte budget, in order", () => {
    const rows = Array.from({ length: 10 }, (_, i) => [i, Buffer.alloc(1000, 0x61)]);
    const statements = buildMultiInsert({ head: "INSERT INTO t (a, b)", columnCount: 2, tail, rows, budgetBytes: 2600 });
    expect(statements.map((s) => latin1(s).split("_binary'").length - 1)).toEqual([2, 2, 2, 2, 2]);
    for (const s of statements) expect(s.length).toBeLessThanOrEqual(2600);
    expect(latin1(statements[0]!).startsWith("INSERT INTO t (a, b) VALUES (0, _binary'aaa")).toBe(true);
    expect(latin1(statements[0]!).endsWith(`') ${tail}`)).toBe(true);
    expect(statements.flatMap((s) => [...latin1(s).matchAll(/\((\d+), _binary'/g)].map((m) => Number(m[1])))).toEqual([
      0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
    ]);
  });

  it("counts escapes against the budget", () => {
    // 600 NUL bytes are 1,200 bytes of literal: two such rows no longer fit in 2,000.
    const rows = [
      [1, Buffer.alloc(600)],
      [2, Buffer.alloc(600)],
    ];
    const statements = buildMultiInsert({ head: "INSERT INTO t (a, b)", columnCount: 2, rows, budgetBytes: 2000 });
    expect(statements).toHaveLength(2);
    expect(statements[0]!.length).toBe(Buffer.byteLength("INSERT INTO t (a, b) VALUES (1, _binary'')") + 1200);
  });

  it("sends one oversized row alone and nothing for no rows", () => {
    const statements = buildMultiInsert({
      head: "INSERT INTO t (a)",
      columnCount: 1,
      rows: [["x"], [Buffer.alloc(10_000)], ["y"]],
      budgetBytes: 1000,
    });
    expect(statements.map((s) => s.length)).toEqual([30, Buffer.byteLength("INSERT INTO t (a) VALUES (_binary'')") + 20_000, 30]);
    expect(latin1(statements[0]!)).toBe("INSERT INTO t (a) VALUES ('x')");
    expect(buildMultiInsert({ head: "INSERT INTO t (a)", columnCount: 1, rows: [], budgetBytes: 1000 })).toEqual([]);
    expect(() => buildMultiInsert({ head: "INSERT INTO t (a)", columnCount: 2, rows: [[1]], budgetBytes: 1000 })).toThrow();
  });
});

describe("renderRows", () => {
  const rows = [
    [1, "it's", 1, "DISTRIBUICAO", "17", Buffer.from("<a>'\\</a>")],
    [2, null, 2, "RECEPCAO", "18", Buffer.alloc(0)],
  ];
  const statementOf = (values: readonly (readonly unknown[])[] | ReturnType<typeof renderRows>) =>
    latin1(buildMultiInsert({ head: "INSERT INTO t (a, b, c, d, e, f)", columnCount: 6, tail, rows: values, budgetBytes: 1 << 20 })[0]!);

  it("writes rows, in one buffer, as buildMultiInsert writes them from their values", () => {
    const rendered = renderRows(rows.map((values) => ({ values, slot: [2, 4] as const })));
    expect(rendered.map(isRendered)).toEqual([true, true]);
    expect(rendered[0]!.bytes.buffer).toBe(rendered[1]!.bytes.buffer);
    expect(statementOf(rendered)).toBe(statementOf(rows));
    // Mixed with rows given as values, in order.
    expect(statementOf([rendered[0]!, rows[1]!] as never)).toBe(statementOf(rows));
    expect(latin1(Buffer.from(rendered[0]!.bytes)).slice(rendered[0]!.slotStart, rendered[0]!.slotEnd)).toBe("1, 'DISTRIBUICAO', '17'");
  });

  it("replaces the slot's literals as the values would have been written with them", () => {
    const [row] = renderRows([{ values: rows[0]!, slot: [2, 4] }]);
    const kept = withSlotValues(row!, [2, "RECEPCAO", "4"]);
    const expected = [...rows[0]!];
    expected.splice(2, 3, 2, "RECEPCAO", "4");
    expect(statementOf([kept])).toBe(statementOf([expected]));
    expect(statementOf([withSlotValues(kept, [1, "DISTRIBUICAO", "17"])])).toBe(statementOf([rows[0]!]));
  });

  it("keeps the column count: a written row of another table's width is refused", () => {
    const [row] = renderRows([{ values: [1, 2, 3], slot: [0, 2] }]);
    expect(() => buildMultiInsert({ head: "INSERT INTO t (a, b)", columnCount: 2, rows: [row!], budgetBytes: 1000 })).toThrow(
      /row has 3 values, expected 2/,
    );
  });

  it("cuts statements at the budget with written rows as with values", () => {
    const many = Array.from({ length: 10 }, (_, i) => [i, Buffer.alloc(1000, 0x61)]);
    const rendered = renderRows(many.map((values) => ({ values, slot: [0, 0] as const })));
    const build = (r: typeof many | typeof rendered) =>
      buildMultiInsert({ head: "INSERT INTO t (a, b)", columnCount: 2, tail, rows: r, budgetBytes: 2600 }).map(latin1);
    expect(build(rendered)).toEqual(build(many));
  });
});
