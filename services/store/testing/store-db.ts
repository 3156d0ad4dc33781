// The repositories' database for repo-level tests: a throwaway database with the migrations applied, seen
// through the pool a test chooses (one connection, to read its session counters; several, for races).
import { join } from "node:path";
import { projectRoot } from "../../../libs/config/paths.js";
import { migrate } from "../../../libs/db/migrate.js";
import { createPageTokens } from "../../../libs/rpc/page-token.js";
import type { ThrowawayDatabase } from "../../../test/support/mysql.js";
import type { StoreDb } from "../repo/context.js";
import { STORE_POOL } from "../db.js";

export async function migratedStoreDb(
  tdb: ThrowawayDatabase,
  opts: { connectionLimit?: number; statementBudgetBytes?: number } = {},
): Promise<StoreDb> {
  await migrate(tdb.pool, join(projectRoot(), "migrations"));
  return {
    // The store's own pool options (db.ts), so that its statements run as they do in the service.
    pool: tdb.newPool({ ...STORE_POOL, ...(opts.connectionLimit !== undefined ? { connectionLimit: opts.connectionLimit } : {}) }),
    statementBudgetBytes: opts.statementBudgetBytes ?? 64 * 1024,
    tokens: createPageTokens({ secret: Buffer.from("k".repeat(32)), errorDomain: "malha.store" }),
  };
}
