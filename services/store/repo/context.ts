import type { Pool } from "mysql2/promise";
import type { PageTokens } from "../../../libs/rpc/page-token.js";
import type { PreparedMunicipalities } from "../sql/prepared-municipalities.js";

/** What every repository function needs: the pool, the statement byte budget and the page tokens. */
export interface StoreDb {
  pool: Pool;
  /** Largest multi-row INSERT the store builds (bounded by the server's max_allowed_packet). */
  statementBudgetBytes: number;
  tokens: PageTokens;
  /** Whose upserts go as prepared statements; absent: everyone's (decision 0024). */
  prepared?: PreparedMunicipalities;
}

export type Row = Record<string, unknown>;
