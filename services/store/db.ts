// Builds the repositories' shared context. The statement budget is settled once the server can be asked
// for max_allowed_packet (in ready()), leaving room for the statement text around the rows.
import type { Pool, RowDataPacket } from "mysql2/promise";
import type { StoreConfig } from "./config.js";
import type { StoreDb } from "./repo/context.js";
import type { Logger } from "../../libs/log/logger.js";
import { servicePageTokens } from "../../libs/rpc/page-token.js";
import { STORE_ERROR_DOMAIN } from "./errors.js";
import { PreparedMunicipalities } from "./sql/prepared-municipalities.js";

/** What the pool's cached prepared statements may hold in the store's heap, all connections together. */
export const STATEMENT_CACHE_BYTES = 48 * 1024 * 1024;
/** The widest statement: 8 rows of nfse_documentos, 416 placeholders (measured: ≈ 105 KB in mysql2). */
const WIDEST_STATEMENT_BYTES = 110 * 1024;

/**
 * Prepared statements kept per pooled connection (mysql2 evicts the least recently used). ApplyBatch
 * prepares one text per table, two tables per municipality, and any connection may serve any
 * municipality, so the cache is sized by memory across the pool: 22 per connection for the default 20
 * connections, about eleven busy municipalities before statements are prepared again. Never fewer than
 * one municipality's two; always far below the server's max_prepared_stmt_count (16 382 by default,
 * shared by every client; past it the store falls back to text statements).
 * docs/decisions/0005-prepared-statements-of-eight-rows.md.
 */
export function preparedStatementsPerConnection(connectionLimit: number): number {
  const fit = Math.floor(STATEMENT_CACHE_BYTES / WIDEST_STATEMENT_BYTES / connectionLimit);
  return Math.max(2, Math.min(256, fit));
}

/** Statements every municipality shares: the NSU aliases' and the quarantine's upserts. */
const SHARED_STATEMENTS = 2;
/** A prepared municipality that wrote nothing for this long lets the next one in (a bootstrap writes every second or so). */
export const PREPARED_IDLE_MS = 30_000;

/**
 * How many municipalities write as prepared statements at once: as many as one connection's cache holds
 * next to the shared statements (10 for the default 20 connections), so that no connection ever evicts a
 * statement that is still in use (decision 0024).
 */
export function preparedMunicipalities(connectionLimit: number): number {
  return Math.max(1, Math.floor((preparedStatementsPerConnection(connectionLimit) - SHARED_STATEMENTS) / 2));
}

export function createStoreDb(pool: Pool, config: StoreConfig, log: Pick<Logger, "info">): StoreDb {
  return {
    pool,
    statementBudgetBytes: config.maxStatementBytes,
    tokens: servicePageTokens(config.pageTokenSecret, STORE_ERROR_DOMAIN, log),
    prepared: new PreparedMunicipalities(preparedMunicipalities(config.mysqlConnectionLimit), PREPARED_IDLE_MS),
  };
}

export async function fitStatementBudget(db: StoreDb, config: StoreConfig): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT @@max_allowed_packet AS m");
  const packet = Number(rows[0]!.m);
  db.statementBudgetBytes = Math.max(16 * 1024, Math.min(config.maxStatementBytes, Math.floor(packet * 0.9) - 64 * 1024));
  return db.statementBudgetBytes;
}
