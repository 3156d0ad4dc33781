// Keeps the checker honest against the server it stands in for: where MariaDB (COMPACT rows, strict
// InnoDB) refuses a definition for size, the checker must refuse it too, and vice versa.
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThrowawayDatabase } from "../../test/support/mysql.js";
import type { ThrowawayDatabase } from "../../test/support/mysql.js";
import { splitSqlStatements } from "../../libs/db/sql-split.js";
import { checkSql56 } from "./check.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

async function serverAccepts(db: ThrowawayDatabase, sql: string): Promise<boolean> {
  try {
    for (const statement of splitSqlStatements(sql)) await db.pool.query(statement.text);
    return true;
  } catch {
    return false;
  }
}

const sizeRules = (sql: string): string[] =>
  checkSql56([{ path: "x.sql", text: sql }])
    .map((f) => f.rule)
    .filter((r) => r === "index-length" || r === "row-size");

describe("checkSql56 agrees with MariaDB 10.11 (5.6-like settings)", () => {
  let db: ThrowawayDatabase;
  beforeEach(async () => {
    db = await createThrowawayDatabase();
  });
  afterEach(async () => {
    await db.drop();
  });

  it("on index key-part length at the 767-byte boundary", { timeout: 30_000 }, async () => {
    for (const [n, fits] of [
      [191, true],
      [192, false],
      [255, false],
    ] as const) {
      const sql = `CREATE TABLE k${n} (id INT NOT NULL, a VARCHAR(${n}) NOT NULL, PRIMARY KEY (id), UNIQUE KEY uq (a)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;`;
      expect([n, await serverAccepts(db, sql)]).toEqual([n, fits]);
      expect([n, sizeRules(sql)]).toEqual([n, fits ? [] : ["index-length"]]);
    }
  });

  it("on the worst-case row size at the 8126-byte boundary", { timeout: 30_000 }, async () => {
    // Ten utf8mb4 VARCHAR(300) (790 bytes each in the worst case) plus an ascii pad of k bytes.
    const make = (k: number): string =>
      `CREATE TABLE r${k} (id INT NOT NULL, ${Array.from({ length: 10 }, (_, i) => `n${i} VARCHAR(300) NULL`).join(", ")}, ` +
      `pad VARCHAR(${k}) CHARACTER SET ascii NULL, PRIMARY KEY (id)) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4;`;
    let lastAccepted = 0;
    for (let k = 150; k <= 220; k++) {
      if (await serverAccepts(db, make(k))) lastAccepted = k;
      else break;
    }
    expect(lastAccepted).toBeGreaterThan(150);
    expect(sizeRules(make(lastAccepted))).toEqual([]);
    expect(sizeRules(make(lastAccepted + 1))).toEqual(["row-size"]);
  });

  it("on the fixtures: good.sql runs, bad.sql's index is refused", { timeout: 30_000 }, async () => {
    expect(await serverAccepts(db, readFileSync(`${ROOT}/test/fixtures/sql56/good.sql`, "utf8"))).toBe(true);
    const bad = readFileSync(`${ROOT}/test/fixtures/sql56/bad.sql`, "utf8");
    const create = splitSqlStatements(bad)[0]?.text ?? "";
    // MariaDB accepts JSON and CTEs, which is why the checker exists; the 767-byte rule it does enforce.
    expect(await serverAccepts(db, create)).toBe(false);
    expect(await serverAccepts(db, create.replace("UNIQUE KEY uq_bad_payloads_email (email)", "KEY ix_id (id)"))).toBe(true);
  });
});
