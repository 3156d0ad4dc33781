import { randomBytes } from "node:crypto";
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { binaryLiteralLength, writeBinaryLiteral } from "./binary-literal.js";
import { queryStatements } from "./statement-bytes.js";

/** One statement sent alone, and its result. */
const queryBytes = async (conn: PoolConnection, statement: Buffer) => (await queryStatements(conn, [statement], statement.length))[0]!;

const literal = (bytes: Uint8Array) => {
  const out = Buffer.alloc(binaryLiteralLength(bytes));
  expect(writeBinaryLiteral(bytes, out, 0)).toBe(out.length);
  return out;
};

describe("statements sent as bytes (real MariaDB)", () => {
  let db: ThrowawayDatabase;
  beforeAll(async () => {
    db = await createThrowawayDatabase();
    await db.pool.query("CREATE TABLE t (id INT PRIMARY KEY, b LONGBLOB NULL, s VARCHAR(100) NULL) DEFAULT CHARSET=utf8mb4");
  });
  afterAll(async () => {
    await db.drop();
  });

  const insert = async (rows: [number, Uint8Array, string][]) => {
    const parts: Buffer[] = [Buffer.from("INSERT INTO t (id, b, s) VALUES ")];
    rows.forEach(([id, bytes, text], i) => {
      parts.push(Buffer.from(`${i > 0 ? ", " : ""}(${id}, `), literal(bytes), Buffer.from(`, ${db.pool.escape(text)})`));
    });
    const conn = await db.pool.getConnection();
    try {
      return await queryBytes(conn, Buffer.concat(parts));
    } finally {
      conn.release();
    }
  };
  const stored = async (id: number) => {
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT b, s FROM t WHERE id = ?", [id]);
    return rows[0] as { b: Buffer; s: string };
  };

  it("stores every byte value as sent, escapes and broken UTF-8 included", async () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    // A lead byte before a quote or a backslash: the lexer must not take the escape for part of a character.
    const tricky = Buffer.from([0xc3, 0x27, 0xe2, 0x5c, 0x27, 0xf0, 0x9f, 0x00, 0x5c, 0x5c, 0x27, 0x27]);
    const random = randomBytes(300_000);
    const result = await insert([
      [1, every, "São Paulo — ✓"],
      [2, tricky, "it's \\ fine"],
      [3, random, ""],
      [4, new Uint8Array(0), "empty"],
    ]);
    expect(result.affectedRows).toBe(4);
    expect((await stored(1)).b.equals(every)).toBe(true);
    expect((await stored(1)).s).toBe("São Paulo — ✓");
    expect((await stored(2)).b.equals(tricky)).toBe(true);
    expect((await stored(2)).s).toBe("it's \\ fine");
    expect((await stored(3)).b.equals(random)).toBe(true);
    expect((await stored(4)).b.length).toBe(0);
  });

  it("leaves text statements to mysql2 on the same connection, and names a failed statement by its start", async () => {
    const conn = await db.pool.getConnection();
    try {
      const [rows] = await conn.query<RowDataPacket[]>("SELECT ? AS v", ["text"]);
      expect(rows[0]!.v).toBe("text");
      const bad = Buffer.concat([
        Buffer.from("INSERT INTO no_such_table (b) VALUES ("),
        literal(Buffer.alloc(100_000, 0x61)),
        Buffer.from(")"),
      ]);
      const err = await queryBytes(conn, bad).then(
        () => undefined,
        (e: unknown) => e as Error & { code?: string; sql?: unknown },
      );
      expect(err?.code).toBe("ER_NO_SUCH_TABLE");
      expect(typeof err?.sql).toBe("string");
      expect(err?.sql).toBe(`${bad.subarray(0, 200).toString()}… (${bad.length} bytes)`);
      expect(String(err?.sql).length).toBeLessThan(250);
      const [after] = await conn.query<RowDataPacket[]>("SELECT 1 AS one");
      expect(after[0]!.one).toBe(1);
    } finally {
      conn.release();
    }
  });

  describe("several statements in one round trip (queryStatements)", () => {
    const sql = (text: string) => Buffer.from(text);
    /** The statements on a connection of a multi-statement pool, with the COM_QUERY packets it sent. */
    const onMultiConnection = async <T>(work: (conn: PoolConnection, sent: () => number) => Promise<T>) => {
      const pool = db.newPool({ connectionLimit: 1, multipleStatements: true });
      const conn = await pool.getConnection();
      let packets = 0;
      const query = conn.query.bind(conn);
      conn.query = ((...args: Parameters<typeof query>) => {
        packets++;
        return query(...args);
      }) as typeof conn.query;
      try {
        return await work(conn, () => packets);
      } finally {
        conn.release();
      }
    };

    it("sends the statements that fit the budget as one query and answers each in order", async () => {
      await onMultiConnection(async (conn, sent) => {
        const results = await queryStatements(
          conn,
          [
            sql("INSERT INTO t (id, s) VALUES (101, 'a'), (102, 'b')"),
            sql("UPDATE t SET s = 'c' WHERE id = 102"),
            sql("INSERT INTO t (id, s) VALUES (103, 'x'), (104, 'y'), (105, 'z')"),
            sql("UPDATE t SET s = 'none' WHERE id = 999"),
          ],
          1 << 20,
        );
        expect(sent()).toBe(1);
        expect(results.map((r) => r.affectedRows)).toEqual([2, 1, 3, 0]);
      });
      expect((await stored(102)).s).toBe("c");
    });

    it("cuts the statements into queries of at most the budget, a larger one alone, in order", async () => {
      const insert = (id: number, text: string) => sql(`INSERT INTO t (id, s) VALUES (${id}, '${text}')`);
      const statements = [insert(201, "a"), insert(202, "b"), insert(203, "c".repeat(90)), insert(204, "d"), insert(205, "e")];
      const short = statements[0]!.length;
      await onMultiConnection(async (conn, sent) => {
        // Two short statements and their separator fit; the long one exceeds the budget and goes alone.
        const results = await queryStatements(conn, statements, 2 * short + 1);
        expect(results.map((r) => r.affectedRows)).toEqual([1, 1, 1, 1, 1]);
        expect(sent()).toBe(3);
      });
      expect((await stored(203)).s).toBe("c".repeat(90));
      expect((await stored(205)).s).toBe("e");
    });

    it("stops at the statement the server refuses, throws its error, and runs none after it", async () => {
      await onMultiConnection(async (conn) => {
        const err = await queryStatements(
          conn,
          [
            sql("INSERT INTO t (id, s) VALUES (301, 'before')"),
            sql("INSERT INTO no_such_table (id) VALUES (1)"),
            sql("INSERT INTO t (id, s) VALUES (302, 'after')"),
          ],
          1 << 20,
        ).then(
          () => undefined,
          (e: unknown) => e as Error & { code?: string },
        );
        expect(err?.code).toBe("ER_NO_SUCH_TABLE");
        // The connection is usable afterwards: the server sent nothing more for the statements not run.
        const [rows] = await conn.query<RowDataPacket[]>("SELECT id FROM t WHERE id IN (301, 302) ORDER BY id");
        expect(rows.map((r) => r.id)).toEqual([301]);
      });
    });

    it("refuses more than one statement on a pool that does not allow them", async () => {
      const conn = await db.pool.getConnection();
      try {
        await expect(queryStatements(conn, [sql("SELECT 1"), sql("SELECT 2")], 1 << 20)).rejects.toThrow(/multipleStatements/);
        expect((await queryStatements(conn, [sql("UPDATE t SET s = s WHERE id = 0")], 1 << 20)).map((r) => r.affectedRows)).toEqual([0]);
      } finally {
        conn.release();
      }
    });
  });
});
