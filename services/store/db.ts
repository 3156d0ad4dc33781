// Builds the repositories' shared context. The statement budget is settled once the server can be asked
// for max_allowed_packet (in ready()), leaving room for the statement text around the rows.
import type { Pool, RowDataPacket } from "mysql2/promise";
import type { StoreConfig } from "./config.js";
import type { StoreDb } from "./repo/context.js";
import { createPageTokenCodec } from "./sql/page-token.js";

/**
 * Prepared statements kept per pooled connection. ApplyBatch prepares up to 11 texts per table (see
 * sql/insert-rows.ts), two tables per municipality, so 256 hold about a dozen busy municipalities. The
 * whole pool stays within half the server's default max_prepared_stmt_count (16 382), which every client
 * of the server shares; past the server's limit the store falls back to text statements.
 */
export function preparedStatementsPerConnection(connectionLimit: number): number {
  return Math.max(24, Math.min(256, Math.floor(8192 / connectionLimit)));
}

export function createStoreDb(pool: Pool, config: StoreConfig): StoreDb {
  return {
    pool,
    statementBudgetBytes: config.maxStatementBytes,
    tokens: createPageTokenCodec(config.pageTokenSecret),
  };
}

export async function fitStatementBudget(db: StoreDb, config: StoreConfig): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT @@max_allowed_packet AS m");
  const packet = Number(rows[0]!.m);
  db.statementBudgetBytes = Math.max(16 * 1024, Math.min(config.maxStatementBytes, Math.floor(packet * 0.9) - 64 * 1024));
  return db.statementBudgetBytes;
}
