// The prepared path must store exactly what the text path stored (Buffers, BIGINT UNSIGNED strings,
// Dates, NULL, UTF-8), and fall back to text statements when the server refuses to prepare more.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { insertRows, STATEMENT_ROWS, type InsertConnection } from "./insert-rows.js";
import { buildMultiInsert, buildPreparedInserts, type MultiInsert } from "./multi-insert.js";

const COLUMNS = ["k", "big", "at3", "at0", "amount", "txt", "code", "bin", "opt"];
const insertInto = (table: string, rows: unknown[][], budgetBytes = 1 << 20): MultiInsert => ({
  head: `INSERT INTO ${table} (${COLUMNS.join(", ")})`,
  columnCount: COLUMNS.length,
  tail: "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), txt = VALUES(txt), bin = VALUES(bin)",
  rows,
  budgetBytes,
});
const allBytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const sample = (k: number): unknown[] => [
  k,
  "18446744073709551615",
  new Date("2026-03-10T17:02:10.123Z"),
  new Date("2026-03-10T17:02:10.999Z"),
  "2.0000",
  `ação 😀 'quoted' \\ ${k}`,
  "ABC",
  Buffer.concat([allBytes, Buffer.from(String(k))]),
  k % 2 ? null : undefined,
];

describe("insertRows against MariaDB", () => {
  let tdb: ThrowawayDatabase;
  beforeAll(async () => {
    tdb = await createThrowawayDatabase();
    for (const t of ["via_text", "via_prepared"]) {
      await tdb.pool.query(`CREATE TABLE ${t} (id BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY, k INT NOT NULL UNIQUE,
        big BIGINT UNSIGNED NOT NULL, at3 DATETIME(3) NULL, at0 DATETIME NULL, amount DECIMAL(7,4) NULL, txt VARCHAR(100) NULL,
        code CHAR(3) CHARACTER SET ascii NULL, bin LONGBLOB NOT NULL, opt VARCHAR(5) NULL) ENGINE=InnoDB`);
    }
  });
  afterAll(async () => {
    await tdb?.drop();
  });

  const dump = async (table: string) =>
    (
      await tdb.pool.query<RowDataPacket[]>(`SELECT id, k, big, at3, at0, amount, txt, code, HEX(bin) AS bin, opt FROM ${table} ORDER BY k`)
    )[0];

  it("writes the same rows as the text protocol, upserts included, in one transaction over several statements", async () => {
    const rows = Array.from({ length: 45 }, (_, i) => sample(i));
    const again = rows.slice(0, 10).map((r) => [...r.slice(0, 5), `changed ${String(r[0])}`, ...r.slice(6)]);
    const conn = await tdb.pool.getConnection();
    try {
      for (const s of [...buildMultiInsert(insertInto("via_text", rows)), ...buildMultiInsert(insertInto("via_text", again))])
        await conn.query(s.sql, s.params);
      await conn.beginTransaction();
      // 5 prepared statements of 8 rows and a text one for the rest; then 8 prepared + 2 as text, upserting.
      await insertRows(conn, insertInto("via_prepared", rows));
      await insertRows(conn, insertInto("via_prepared", again));
      await conn.commit();
    } finally {
      conn.release();
    }
    const text = await dump("via_text");
    expect(text).toHaveLength(45);
    expect(await dump("via_prepared")).toEqual(text);
    expect(text[0]!.txt).toBe("changed 0");
    expect(text[1]!.opt).toBeNull();
  });
});

describe("insertRows when the server refuses to prepare", () => {
  function fakeConnection(refuseFrom: number, code = "ER_MAX_PREPARED_STMT_COUNT_REACHED") {
    const executed: unknown[][] = [];
    const queried: { sql: string; params: unknown[] }[] = [];
    const conn = {
      execute: async (_sql: string, params: unknown[]) => {
        if (executed.length >= refuseFrom) throw Object.assign(new Error("refused"), { code });
        executed.push(params);
        return [{}, []];
      },
      query: async (sql: string, params: unknown[]) => {
        queried.push({ sql, params });
        return [{}, []];
      },
    } as unknown as InsertConnection;
    return { conn, executed, queried };
  }
  const rows = Array.from({ length: 45 }, (_, i) => sample(i));

  it("sends the rows not yet written as text statements cut to the text budget", async () => {
    const { conn, executed, queried } = fakeConnection(1);
    // Prepared: 5 × 8 rows, then 5 as text; the second prepare is refused after the first statement ran.
    const insert = insertInto("t", rows, 1 << 20);
    await insertRows(conn, insert);
    expect(executed.map((p) => p.length / COLUMNS.length)).toEqual([8]);
    expect(queried).toEqual(buildMultiInsert({ ...insert, rows: rows.slice(8) }));
    // A budget of a few rows cuts every group short of 8 rows: all of them go as text, in order, each
    // statement cut to the text budget (where a Buffer takes twice its size).
    const small = fakeConnection(0);
    await insertRows(small.conn, insertInto("t", rows, 3000));
    expect(small.executed).toEqual([]);
    expect(small.queried.flatMap((q) => q.params)).toEqual(rows.flat());
    expect(small.queried.length).toBeGreaterThan(buildPreparedInserts({ ...insertInto("t", rows, 3000), ...STATEMENT_ROWS }).length);
  });

  it("prepares full 8-row statements only and sends a shorter rest as one text statement, in order", async () => {
    const { conn, executed, queried } = fakeConnection(Infinity);
    const insert = insertInto("t", rows, 1 << 20);
    await insertRows(conn, insert);
    expect(executed.map((p) => p.length / COLUMNS.length)).toEqual([8, 8, 8, 8, 8]);
    expect(executed.flatMap((p) => p.filter((_, i) => i % COLUMNS.length === 0))).toEqual(rows.slice(0, 40).map((r) => r[0]));
    expect(queried).toEqual(buildMultiInsert({ ...insert, rows: rows.slice(40) }));
  });

  it("lets any other error through", async () => {
    const { conn, queried } = fakeConnection(0, "ER_DUP_ENTRY");
    await expect(insertRows(conn, insertInto("t", rows))).rejects.toThrow("refused");
    expect(queried).toEqual([]);
  });
});
