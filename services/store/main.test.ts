import type { RowDataPacket } from "mysql2/promise";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { spawnService, startService, EPHEMERAL_ENV } from "../../test/support/service-process.js";

let db: ThrowawayDatabase;
beforeEach(async () => {
  db = await createThrowawayDatabase();
});
afterEach(async () => {
  await db.drop();
});

async function appliedVersions(): Promise<number[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT version FROM schema_migrations ORDER BY version");
  return rows.map((r) => Number(r.version));
}

describe("store start-up", () => {
  it("applies migrations before SERVING, and a restart finds nothing to do", async () => {
    const first = await startService("store", { MYSQL_URL: db.url });
    expect(await appliedVersions()).toContain(1);
    const [tables] = await db.pool.query<RowDataPacket[]>("SHOW TABLES LIKE 'nfse_sync_state'");
    expect(tables).toHaveLength(1);
    first.kill("SIGTERM");
    expect((await first.exited).code).toBe(0);

    const second = await startService("store", { MYSQL_URL: db.url });
    const before = await appliedVersions();
    second.kill("SIGTERM");
    expect((await second.exited).code).toBe(0);
    expect(await appliedVersions()).toEqual(before);
    expect(second.lines.some((l) => l.includes('"msg":"schema up to date"') && l.includes('"applied":0'))).toBe(true);
  });

  it("exits 1 and says why when MySQL cannot be reached, without ever reporting SERVING", async () => {
    const { lines, exited } = spawnService("store", {
      ...EPHEMERAL_ENV,
      MYSQL_URL: "mysql://malha:malha@127.0.0.1:1/malha",
    });
    expect((await exited).code).toBe(1);
    expect(lines.some((l) => l.includes('"msg":"serving"'))).toBe(false);
    const failure = lines.find((l) => l.includes("failed to become ready"));
    expect(failure).toMatch(/ECONNREFUSED/);
  });
});
