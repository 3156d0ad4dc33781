import type { Pool } from "mysql2/promise";
import type { PageTokenCodec } from "../sql/page-token.js";
import type { PreparedMunicipalities } from "../sql/prepared-municipalities.js";

/** What every repository function needs: the pool, the statement byte budget and the token codec. */
export interface StoreDb {
  pool: Pool;
  /** Largest multi-row INSERT the store builds (bounded by the server's max_allowed_packet). */
  statementBudgetBytes: number;
  tokens: PageTokenCodec;
  /** Whose upserts go as prepared statements; absent: everyone's (decision 0024). */
  prepared?: PreparedMunicipalities;
}

export type Row = Record<string, unknown>;
