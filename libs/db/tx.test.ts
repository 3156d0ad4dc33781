// The transaction helper against real InnoDB: a deadlock victim is rolled back and run again, and
// infrastructure failures surface as UNAVAILABLE, never as a raw driver error.
import { Code, ConnectError } from "@connectrpc/connect";
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { createMysqlPool } from "./pool.js";
import { Registry } from "prom-client";
import { BEGIN_STATEMENT, COMMIT_STATEMENT, inTransaction, mapDbError, workCommitted } from "./tx.js";
import { countTransactionRetries } from "./tx-metrics.js";

let db: ThrowawayDatabase;
beforeAll(async () => {
  db = await createThrowawayDatabase();
  await db.pool.query("CREATE TABLE t (id INT NOT NULL PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
  await db.pool.query("INSERT INTO t VALUES (1, 0), (2, 0)");
});
afterAll(async () => {
  await db?.drop();
});

describe("inTransaction", () => {
  it("retries the deadlock victim so that both transactions commit exactly once, and counts the retry", async () => {
    const registry = new Registry();
    countTransactionRetries(db.pool, registry);
    let arrived = 0;
    let open!: () => void;
    const bothLocked = new Promise<void>((r) => (open = r));
    const attempts = { a: 0, b: 0 };
    const work = (name: "a" | "b", first: number, second: number) =>
      inTransaction(db.pool, async (conn) => {
        attempts[name]++;
        await conn.query("UPDATE t SET v = v + 1 WHERE id = ?", [first]);
        if (++arrived === 2) open();
        await bothLocked; // only the first attempts wait: the crossing order guarantees a deadlock
        await conn.query("UPDATE t SET v = v + 1 WHERE id = ?", [second]);
      });
    await Promise.all([work("a", 1, 2), work("b", 2, 1)]);
    expect(attempts.a + attempts.b).toBe(3);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT v FROM t ORDER BY id");
    expect(rows.map((r) => r.v)).toEqual([2, 2]);
    const counted = (await registry.getSingleMetric("malha_db_transaction_retries_total")!.get()).values;
    expect(counted.map((v) => [v.labels.code, v.value])).toEqual([["ER_LOCK_DEADLOCK", 1]]);
  });

  it("rolls back on a deliberate error and passes it through unchanged", async () => {
    const refusal = new ConnectError("no", Code.FailedPrecondition);
    await expect(
      inTransaction(db.pool, async (conn) => {
        await conn.query("UPDATE t SET v = 100");
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT MAX(v) AS m FROM t");
    expect(rows[0]!.m).toBe(2);
  });

  it("lets a work open the transaction with its first query, and still rolls back all it wrote on an error", async () => {
    const multi = db.newPool({ connectionLimit: 1, multipleStatements: true });
    const refusal = new ConnectError("no", Code.FailedPrecondition);
    await expect(
      inTransaction(
        multi,
        async (conn) => {
          await conn.query(`${BEGIN_STATEMENT}; UPDATE t SET v = 100 WHERE id = 1`);
          await conn.query("UPDATE t SET v = 100 WHERE id = 2");
          throw refusal;
        },
        { workBegins: true },
      ),
    ).rejects.toBe(refusal);
    const [rolledBack] = await db.pool.query<RowDataPacket[]>("SELECT MAX(v) AS m FROM t");
    expect(rolledBack[0]!.m).toBe(2);
    await inTransaction(multi, async (conn) => void (await conn.query(`${BEGIN_STATEMENT}; UPDATE t SET v = v + 1`)), { workBegins: true });
    const [committed] = await db.pool.query<RowDataPacket[]>("SELECT v FROM t ORDER BY id");
    expect(committed.map((r) => r.v)).toEqual([3, 3]);
    await db.pool.query("UPDATE t SET v = 2");
  });

  it("sends no COMMIT of its own after a work that committed, and one after a work that returned before committing (decision 0068)", async () => {
    const multi = db.newPool({ connectionLimit: 1, multipleStatements: true });
    const commits: string[] = [];
    const counted = (conn: PoolConnection) => {
      const commit = conn.commit.bind(conn);
      conn.commit = () => {
        commits.push("commit()");
        return commit();
      };
      return conn;
    };
    await inTransaction(
      multi,
      async (raw) => {
        const conn = counted(raw);
        await conn.query(`${BEGIN_STATEMENT}; UPDATE t SET v = v + 1 WHERE id = 1; ${COMMIT_STATEMENT}`);
        workCommitted(conn);
      },
      { workBegins: true },
    );
    expect(commits).toEqual([]);
    // The same connection's next transaction: its work writes and returns without committing.
    await inTransaction(
      multi,
      async (raw) => {
        const conn = counted(raw);
        await conn.query(`${BEGIN_STATEMENT}; UPDATE t SET v = v + 1 WHERE id = 2`);
      },
      { workBegins: true },
    );
    expect(commits).toEqual(["commit()"]);
    // Both committed: a second connection sees them.
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT v FROM t ORDER BY id");
    expect(rows.map((r) => r.v)).toEqual([3, 3]);
    await db.pool.query("UPDATE t SET v = 2");
    await multi.end();
  });

  it("reports an unreachable server as UNAVAILABLE", async () => {
    const dead = createMysqlPool("mysql://malha:malha@127.0.0.1:1/malha", { connectionLimit: 1, connectTimeoutMs: 2000 });
    try {
      const err = await inTransaction(dead, async () => undefined).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConnectError);
      expect((err as ConnectError).code).toBe(Code.Unavailable);
    } finally {
      await dead.end();
    }
    expect(mapDbError(Object.assign(new Error("x"), { code: "ER_PARSE_ERROR" }))).not.toBeInstanceOf(ConnectError);
  });
});
