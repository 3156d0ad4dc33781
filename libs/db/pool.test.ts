import type { RowDataPacket } from "mysql2/promise";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThrowawayDatabase } from "../../test/support/mysql.js";
import type { ThrowawayDatabase } from "../../test/support/mysql.js";
import { MysqlUrlError, parseMysqlUrl, SESSION_SETUP, withDatabase } from "./pool.js";

describe("parseMysqlUrl", () => {
  it("reads user, password, host, port and database, decoding escapes", () => {
    expect(parseMysqlUrl("mysql://malha:p%40ss%3Aw@127.0.0.1:33306/malha_x")).toEqual({
      host: "127.0.0.1",
      port: 33306,
      user: "malha",
      password: "p@ss:w",
      database: "malha_x",
    });
    expect(parseMysqlUrl("mysql://u@db.internal/app").port).toBe(3306);
  });

  it("refuses what it cannot use, without echoing the password", () => {
    const bad = [
      "not a url",
      "postgres://u:secret@h/db",
      "mysql://u:secret@h:3306",
      "mysql://u:secret@h:3306/",
      "mysql://:secret@h/db",
      "mysql://u:secret@h/db?multipleStatements=true",
    ];
    for (const url of bad) {
      expect(() => parseMysqlUrl(url)).toThrow(MysqlUrlError);
      try {
        parseMysqlUrl(url);
      } catch (err) {
        expect((err as Error).message).not.toContain("secret");
      }
    }
  });

  it("withDatabase swaps only the database", () => {
    expect(withDatabase("mysql://u:p@h:1/a", "malha_t_1")).toBe("mysql://u:p@h:1/malha_t_1");
  });
});

describe("createMysqlPool session (real MariaDB)", () => {
  let db: ThrowawayDatabase;
  beforeEach(async () => {
    db = await createThrowawayDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  it("keeps the server's sql_mode (no IGNORE_SPACE), UTC session zone and utf8mb4_unicode_ci", { timeout: 20_000 }, async () => {
    const [rows] = await db.pool.query<RowDataPacket[]>(
      "SELECT @@SESSION.sql_mode AS session_mode, @@GLOBAL.sql_mode AS global_mode, @@SESSION.time_zone AS tz, " +
        "@@SESSION.collation_connection AS coll, @@SESSION.character_set_client AS cs",
    );
    const row = rows[0] as RowDataPacket;
    expect(row["session_mode"]).toBe(row["global_mode"]);
    expect(row["session_mode"]).not.toContain("IGNORE_SPACE");
    expect(row["tz"]).toBe("+00:00");
    expect(row["coll"]).toBe("utf8mb4_unicode_ci");
    expect(row["cs"]).toBe("utf8mb4");
  });

  it("drops NO_BACKSLASH_ESCAPES from the session, wherever it stands, and keeps the other modes", { timeout: 20_000 }, async () => {
    const conn = await db.pool.getConnection();
    try {
      for (const mode of [
        "NO_BACKSLASH_ESCAPES",
        "NO_BACKSLASH_ESCAPES,STRICT_TRANS_TABLES",
        "STRICT_TRANS_TABLES,NO_BACKSLASH_ESCAPES,NO_ENGINE_SUBSTITUTION",
        "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION",
      ]) {
        await conn.query(`SET SESSION sql_mode = '${mode}'`);
        await conn.query(SESSION_SETUP);
        const [rows] = await conn.query<RowDataPacket[]>("SELECT @@SESSION.sql_mode AS m, ? AS quoted", ["it's \\ fine"]);
        expect(rows[0]!.m, mode).toBe(
          mode
            .split(",")
            .filter((m) => m !== "NO_BACKSLASH_ESCAPES")
            .join(","),
        );
        expect(rows[0]!.quoted).toBe("it's \\ fine");
      }
    } finally {
      conn.destroy();
    }
  });

  it("returns BIGINT UNSIGNED as exact strings and round-trips DATETIME as UTC", { timeout: 20_000 }, async () => {
    await db.pool.query(
      "CREATE TABLE t (id BIGINT UNSIGNED NOT NULL, at DATETIME(3) NOT NULL, dflt DATETIME(3) NOT NULL DEFAULT CURRENT_TIMESTAMP(3), " +
        "name VARCHAR(20) NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB",
    );
    const at = new Date("2026-03-10T17:02:10.123Z");
    const before = Date.now();
    await db.pool.execute("INSERT INTO t (id, at, name) VALUES (?, ?, ?)", ["18446744073709551615", at, "ação 😀"]);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT id, at, dflt, name, DATE_FORMAT(at, '%Y-%m-%d %H:%i:%s') AS stored FROM t");
    const row = rows[0] as RowDataPacket;
    expect(row["id"]).toBe("18446744073709551615");
    expect((row["at"] as Date).toISOString()).toBe(at.toISOString());
    expect(row["stored"]).toBe("2026-03-10 17:02:10");
    // The column default is evaluated in the session zone, which must be UTC.
    expect(Math.abs((row["dflt"] as Date).getTime() - before)).toBeLessThan(5_000);
    expect(row["name"]).toBe("ação 😀");
  });

  it("closes the least recently used prepared statement beyond maxPreparedStatements", { timeout: 20_000 }, async () => {
    const conn = await db.newPool({ connectionLimit: 1, maxPreparedStatements: 2 }).getConnection();
    try {
      const closes = async () => Number((await conn.query<RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Com_stmt_close'"))[0][0]!["Value"]);
      const before = await closes();
      for (const sql of ["SELECT ? AS a", "SELECT ? AS b", "SELECT ? AS a", "SELECT ? AS c"]) await conn.execute(sql, [1]);
      // The repeated text reused its statement; the third distinct one evicted "SELECT ? AS b".
      expect((await closes()) - before).toBe(1);
    } finally {
      conn.release();
    }
  });

  it("refuses multiple statements in one query", { timeout: 20_000 }, async () => {
    await expect(db.pool.query("SELECT 1; SELECT 2")).rejects.toThrow(/syntax/i);
  });
});
