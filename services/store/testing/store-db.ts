// The repositories' database for repo-level tests: a throwaway database with the migrations applied, seen
// through the pool a test chooses (one connection, to read its session counters; several, for races).
import { join } from "node:path";
import type { Pool } from "mysql2/promise";
import { projectRoot } from "../../../libs/config/paths.js";
import { migrate } from "../../../libs/db/migrate.js";
import { createPageTokens } from "../../../libs/rpc/page-token.js";
import type { ThrowawayDatabase } from "../../../test/support/mysql.js";
import type { StoreDb } from "../repo/context.js";

export async function migratedStoreDb(tdb: ThrowawayDatabase, opts: { pool?: Pool; statementBudgetBytes?: number } = {}): Promise<StoreDb> {
  await migrate(tdb.pool, join(projectRoot(), "migrations"));
  return {
    pool: opts.pool ?? tdb.pool,
    statementBudgetBytes: opts.statementBudgetBytes ?? 64 * 1024,
    tokens: createPageTokens({ secret: Buffer.from("k".repeat(32)), errorDomain: "malha.store" }),
  };
}
