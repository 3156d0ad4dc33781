// Builds the repositories' shared context. The statement budget is settled once the server can be asked
// for max_allowed_packet (in ready()), leaving room for the statement text around the rows.
import type { Pool, RowDataPacket } from "mysql2/promise";
import type { StoreConfig } from "./config.js";
import type { StoreDb } from "./repo/context.js";
import type { Logger } from "../../libs/log/logger.js";
import { servicePageTokens } from "../../libs/rpc/page-token.js";
import { STORE_ERROR_DOMAIN } from "./errors.js";

/** What the store's pool needs beyond the defaults: a round's writes go in one round trip (decision 0059). */
export const STORE_POOL = { multipleStatements: true } as const;

export function createStoreDb(pool: Pool, config: StoreConfig, log: Pick<Logger, "info">): StoreDb {
  return {
    pool,
    statementBudgetBytes: config.maxStatementBytes,
    tokens: servicePageTokens(config.pageTokenSecret, STORE_ERROR_DOMAIN, log),
  };
}

export async function fitStatementBudget(db: StoreDb, config: StoreConfig): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT @@max_allowed_packet AS m");
  const packet = Number(rows[0]!.m);
  db.statementBudgetBytes = Math.max(16 * 1024, Math.min(config.maxStatementBytes, Math.floor(packet * 0.9) - 64 * 1024));
  return db.statementBudgetBytes;
}
