// A throwaway MariaDB database per test: created on the server named by MYSQL_URL, dropped afterwards.
// Tests that need MySQL fail loudly without it; they are never skipped, so a green run means they ran.
import { randomBytes } from "node:crypto";
import type { Pool } from "mysql2/promise";
import { createMysqlPool, parseMysqlUrl, withDatabase } from "../../libs/db/pool.js";
import type { MysqlPoolOptions } from "../../libs/db/pool.js";

export interface ThrowawayDatabase {
  name: string;
  /** MYSQL_URL pointing at the throwaway database. */
  url: string;
  /** A pool on it, closed by drop(). */
  pool: Pool;
  /** Extra pools on the same database (e.g. to play a second process), also closed by drop(). */
  newPool(options?: MysqlPoolOptions): Pool;
  drop(): Promise<void>;
}

export function requireMysqlUrl(): string {
  const url = process.env["MYSQL_URL"];
  if (url === undefined || url.trim() === "") {
    throw new Error(
      "MYSQL_URL is not set: start the local stack with `bash scripts/stack.sh start` and export its env " +
        '(`set -a; eval "$(bash scripts/stack.sh env)"; set +a`)',
    );
  }
  parseMysqlUrl(url);
  return url;
}

// The stack grants the app user every database named malha_*.
export async function createThrowawayDatabase(): Promise<ThrowawayDatabase> {
  const adminUrl = requireMysqlUrl();
  const name = `malha_t_${randomBytes(6).toString("hex")}`;
  const admin = createMysqlPool(adminUrl, { connectionLimit: 1 });
  try {
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci`);
  } finally {
    await admin.end();
  }
  const url = withDatabase(adminUrl, name);
  const pools: Pool[] = [];
  const newPool = (options: MysqlPoolOptions = {}): Pool => {
    const pool = createMysqlPool(url, { connectionLimit: 4, ...options });
    pools.push(pool);
    return pool;
  };
  const pool = newPool();
  return {
    name,
    url,
    pool,
    newPool,
    async drop(): Promise<void> {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
      const dropper = createMysqlPool(adminUrl, { connectionLimit: 1 });
      try {
        await dropper.query(`DROP DATABASE IF EXISTS \`${name}\``);
      } finally {
        await dropper.end();
      }
    },
  };
}

/** A database someone else made (a private server the test restarts): drop() only closes the pools. */
export function externalDatabase(url: string): ThrowawayDatabase {
  const pools = [createMysqlPool(url, { connectionLimit: 4 })];
  return {
    name: new URL(url).pathname.slice(1),
    url,
    pool: pools[0]!,
    newPool(options) {
      const pool = createMysqlPool(url, { connectionLimit: 4, ...options });
      pools.push(pool);
      return pool;
    },
    async drop() {
      await Promise.all(pools.map((p) => p.end().catch(() => undefined)));
    },
  };
}
