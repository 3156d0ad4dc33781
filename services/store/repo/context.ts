import type { Pool } from "mysql2/promise";
import type { PageTokens } from "../../../libs/rpc/page-token.js";

/** What every repository function needs: the pool, the statement byte budget and the page tokens. */
export interface StoreDb {
  pool: Pool;
  /** Largest multi-row INSERT the store builds (bounded by the server's max_allowed_packet; decision 0035). */
  statementBudgetBytes: number;
  tokens: PageTokens;
}

export type Row = Record<string, unknown>;
