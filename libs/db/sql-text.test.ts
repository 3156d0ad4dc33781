import { format } from "mysql2";
import { describe, expect, it } from "vitest";
import { formatQuery, POOL_TIMEZONE, sqlLiteral } from "./sql-text.js";

// What mysql2 itself writes for one `?` with the pools' settings (stringifyObjects off, UTC dates).
const mysql2Literal = (value: unknown) => format("?", [value as never], false, POOL_TIMEZONE);

describe("sqlLiteral", () => {
  it("writes every kind of value exactly as mysql2's format does", () => {
    const values: unknown[] = [
      null,
      undefined,
      0,
      -12.5,
      1e21,
      Number.NaN,
      2n ** 64n - 1n,
      true,
      false,
      "",
      "plain",
      'O\'Brien \\ "quoted"',
      "line\nbreak\r\ttab\0nul\x1asub\bback",
      "São Paulo — prestação de serviços ✓ 😀",
      "\ud800 lone surrogate",
      "?? and ? inside",
      Buffer.alloc(0),
      Buffer.from([0, 1, 0x27, 0x5c, 0xff]),
      new Uint8Array([9, 8, 7]),
      new Date(Date.UTC(2026, 11, 3, 9, 41, 5, 123)),
      new Date(Number.NaN),
    ];
    for (const v of values) expect(sqlLiteral(v), String(v)).toBe(mysql2Literal(v));
  });
});

describe("formatQuery", () => {
  it("sends a statement without values as it is, even with a ? in it", () => {
    const sql = "INSERT INTO t (a) VALUES ('what?'), (X'3f')";
    expect(formatQuery(sql, [])).toBe(sql);
    expect(formatQuery(sql, undefined)).toBe(sql);
  });

  it("formats a statement with values as mysql2 does", () => {
    const sql = "SELECT ? AS a, ? AS b, ?? AS c WHERE d IN (?)";
    const values = ["x'y", new Date(Date.UTC(2026, 0, 1)), "col", [1, 2, 3]];
    expect(formatQuery(sql, values)).toBe(format(sql, values, false, POOL_TIMEZONE));
    expect(formatQuery("SELECT ?", "one")).toBe("SELECT 'one'");
  });
});
