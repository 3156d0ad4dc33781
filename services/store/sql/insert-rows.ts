// Runs the multi-row upserts of a batch: full 8-row statements over the binary protocol, the rest as text.
// Prepared statements count against the server-wide max_prepared_stmt_count, shared with every other
// client of the server; should it be reached, the rows still go, as text statements within the text
// budget, so no batch fails for it.
import type { PoolConnection } from "mysql2/promise";
import { buildMultiInsert, buildPreparedInserts, type MultiInsert } from "./multi-insert.js";

export type InsertConnection = Pick<PoolConnection, "execute" | "query">;
type ExecuteValues = NonNullable<Parameters<PoolConnection["execute"]>[1]>;

/**
 * Prepared statements carry 8 rows; a group cut shorter (the rest of a batch, or rows the byte budget
 * cut early) goes as one text statement. So each table has one statement text, prepared once per
 * connection. Width is memory: mysql2 keeps a parameter definition per placeholder of every prepared
 * statement, ≈ 13 KB per nfse_documentos row (measured), and a pool caches statements on every
 * connection; 32-row statements made the store's live heap grow past 100 MB with ten municipalities.
 */
export const STATEMENT_ROWS = { maxRows: 8, rowStep: 8 } as const;

const PREPARED_LIMIT = "ER_MAX_PREPARED_STMT_COUNT_REACHED";

function preparedLimitReached(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === PREPARED_LIMIT;
}

/**
 * `mayPrepare` is asked once, and only when the rows fill at least one full statement: false sends
 * them all as text (a municipality without a place among the prepared ones, decision 0024).
 */
export async function insertRows(
  conn: InsertConnection,
  insert: MultiInsert,
  shapes: { maxRows: number; rowStep: number } = STATEMENT_ROWS,
  mayPrepare: () => boolean = () => true,
): Promise<void> {
  if (insert.rows.length >= shapes.rowStep && !mayPrepare()) {
    await insertAsText(conn, insert);
    return;
  }
  const statements = buildPreparedInserts({ ...insert, ...shapes });
  for (let i = 0; i < statements.length; i++) {
    const stmt = statements[i]!;
    if (stmt.rows.length < shapes.rowStep) {
      await insertAsText(conn, { ...insert, rows: stmt.rows });
      continue;
    }
    try {
      await conn.execute(stmt.sql, stmt.params as ExecuteValues);
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
