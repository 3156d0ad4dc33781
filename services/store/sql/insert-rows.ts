// Runs the multi-row upserts of a batch over the binary protocol. Prepared statements count against the
// server-wide max_prepared_stmt_count, shared with every other client of the server; should it be
// reached, the rows still go, as text statements within the text budget, so no batch fails for it.
import type { PoolConnection } from "mysql2/promise";
import { buildMultiInsert, buildPreparedInserts, type MultiInsert } from "./multi-insert.js";

export type InsertConnection = Pick<PoolConnection, "execute" | "query">;
type ExecuteValues = NonNullable<Parameters<PoolConnection["execute"]>[1]>;

/**
 * Statement shapes per table: 8, 16, 24 or 32 rows, then 1–7 for the rest: 11 texts, at most two
 * statements for a group of up to 32 rows (an ADN page has 50 items, documents and events together).
 * Preparing the widest one returns a parameter definition per placeholder, a one-off cost per connection.
 */
export const STATEMENT_ROWS = { maxRows: 32, rowStep: 8 } as const;

const PREPARED_LIMIT = "ER_MAX_PREPARED_STMT_COUNT_REACHED";

function preparedLimitReached(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === PREPARED_LIMIT;
}

export async function insertRows(conn: InsertConnection, insert: MultiInsert, shapes: { maxRows: number; rowStep: number } = STATEMENT_ROWS): Promise<void> {
  const statements = buildPreparedInserts({ ...insert, ...shapes });
  for (let i = 0; i < statements.length; i++) {
    try {
      await conn.execute(statements[i]!.sql, statements[i]!.params as ExecuteValues);
    } catch (err) {
      // A refused prepare has run nothing and leaves the transaction as it was.
      if (!preparedLimitReached(err)) throw err;
      await insertAsText(conn, { ...insert, rows: statements.slice(i).flatMap((s) => s.rows) });
      return;
    }
  }
}

async function insertAsText(conn: InsertConnection, insert: MultiInsert): Promise<void> {
  for (const stmt of buildMultiInsert(insert)) await conn.query(stmt.sql, stmt.params);
}
