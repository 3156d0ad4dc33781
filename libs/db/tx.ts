// Transactions for every service: a deadlock or lock-wait timeout rolls back the whole transaction and
// runs it again, after a short randomized pause that grows with each attempt, so that the victims of one
// deadlock do not meet again in the same order. Connection-level failures become UNAVAILABLE (the
// caller may retry; it is not the server's bug). Errors the callback throws on purpose roll back and
// pass through unchanged. The callback must touch nothing but the connection: it may run again.
import { Code, ConnectError } from "@connectrpc/connect";
import type { Pool, PoolConnection } from "mysql2/promise";
import { inSpan, SpanKind } from "../tracing/spans.js";

const unavailable = (message: string) => new ConnectError(message, Code.Unavailable);

const RETRYABLE = new Set(["ER_LOCK_DEADLOCK", "ER_LOCK_WAIT_TIMEOUT"]);
const CONNECTION_LEVEL = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ETIMEDOUT",
  "EPIPE",
  "PROTOCOL_CONNECTION_LOST",
  "PROTOCOL_SEQUENCE_TIMEOUT",
  "ER_CON_COUNT_ERROR",
  "ER_SERVER_SHUTDOWN",
  "POOL_CLOSED",
]);

function sqlCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : undefined;
}

/** Who hears of a pool's retries (tx-metrics.ts); a pool nobody observes has none. */
const retryObservers = new WeakMap<Pool, (code: string) => void>();

/** Calls `observe` with the error code each time a transaction on `pool` is rolled back to run again. */
export function onTransactionRetry(pool: Pool, observe: (code: string) => void): void {
  retryObservers.set(pool, observe);
}

/** A statement refused for a duplicate of a unique key (the row is there already). */
export function isDuplicateKey(err: unknown): boolean {
  return sqlCode(err) === "ER_DUP_ENTRY";
}

export function isRetryable(err: unknown): boolean {
  const code = sqlCode(err);
  return code !== undefined && RETRYABLE.has(code);
}

/**
 * Whether a failed statement may still have taken effect: only an error the server answered (an SQL state
 * on a live connection) says it did not. A connection lost around a COMMIT leaves the outcome unknown, so
 * whatever would undo the statement's side effects must stay in place.
 */
export function outcomeUnknown(err: unknown): boolean {
  const e = err as { sqlState?: unknown; fatal?: unknown } | null;
  const code = sqlCode(err);
  return typeof e?.sqlState !== "string" || e.fatal === true || (code !== undefined && CONNECTION_LEVEL.has(code));
}

/** Turns infrastructure failures into UNAVAILABLE; anything else is left for the runtime (INTERNAL). */
export function mapDbError(err: unknown): unknown {
  if (err instanceof ConnectError) return err;
  const code = sqlCode(err);
  if (code !== undefined && CONNECTION_LEVEL.has(code)) return unavailable(`database unavailable (${code})`);
  if (code !== undefined && RETRYABLE.has(code)) return unavailable(`database contention did not clear (${code}); retry`);
  return err;
}

export interface TxOptions {
  /** Runs of the transaction before a deadlock is reported as UNAVAILABLE (default 10). */
  attempts?: number;
  /** Pause before the second run; doubles per attempt up to `maxRetryDelayMs`, with full jitter. */
  retryDelayMs?: number;
  maxRetryDelayMs?: number;
  /**
   * The work's first statement opens the transaction itself: a query of several statements that starts
   * with BEGIN_STATEMENT, on a pool that allows them, saving the round trip of a START TRANSACTION of its
   * own (docs/decisions/0059-a-page-s-writes-in-one-round-trip.md). Whatever it sent is rolled back on
   * an error as usual; a work that failed before it is rolled back harmlessly.
   */
  workBegins?: boolean;
}

/** What a work run with `workBegins` sends first, joined to its first statement by `;`. */
export const BEGIN_STATEMENT = "START TRANSACTION";

/**
 * What a work may send last, joined to its last statements by `;`, saving the round trip of the COMMIT the
 * transaction would send (docs/decisions/0068-a-round-commits-with-its-writes.md). The server stops a query
 * of several statements at the first one that fails, so a COMMIT behind a failed statement never runs.
 */
export const COMMIT_STATEMENT = "COMMIT";

/** Connections whose work has sent COMMIT_STATEMENT and heard it succeed, in the current transaction. */
const committedByWork = new WeakSet<PoolConnection>();

/** Tells the transaction on `conn` that its work committed it (COMMIT_STATEMENT answered OK): no COMMIT follows. */
export function workCommitted(conn: PoolConnection): void {
  committedByWork.add(conn);
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Full jitter: uniform in [0, min(max, base·2^(attempt-1))]. */
export function retryDelay(attempt: number, baseMs: number, maxMs: number): number {
  return Math.random() * Math.min(maxMs, baseMs * 2 ** (attempt - 1));
}

/** A SQL transaction (its retries included) in one span: the RPC's time in MySQL shows in its trace. */
export function inTransaction<T>(pool: Pool, work: (conn: PoolConnection) => Promise<T>, opts: TxOptions = {}): Promise<T> {
  return inSpan("mysql transaction", { kind: SpanKind.CLIENT, attributes: { "db.system.name": "mysql" } }, () =>
    transaction(pool, work, opts),
  );
}

async function transaction<T>(pool: Pool, work: (conn: PoolConnection) => Promise<T>, opts: TxOptions): Promise<T> {
  const attempts = opts.attempts ?? 10;
  const baseMs = opts.retryDelayMs ?? 5;
  const maxMs = opts.maxRetryDelayMs ?? 250;
  for (let attempt = 1; ; attempt++) {
    let conn: PoolConnection;
    try {
      conn = await pool.getConnection();
    } catch (err) {
      throw mapDbError(err);
    }
    let broken = false;
    let retry = false;
    committedByWork.delete(conn);
    try {
      if (!opts.workBegins) await conn.beginTransaction();
      const result = await work(conn);
      // A work that returned before its committing query (nothing to write) still gets its COMMIT.
      if (!committedByWork.delete(conn)) await conn.commit();
      return result;
    } catch (err) {
      try {
        await conn.rollback();
      } catch {
        broken = true;
      }
      // A lock-wait timeout already waited innodb_lock_wait_timeout: a few more runs, not ten.
      const limit = sqlCode(err) === "ER_LOCK_WAIT_TIMEOUT" ? Math.min(3, attempts) : attempts;
      retry = isRetryable(err) && attempt < limit;
      if (retry) retryObservers.get(pool)?.(sqlCode(err)!);
      if (!retry) {
        if (!(err instanceof ConnectError)) broken ||= CONNECTION_LEVEL.has(sqlCode(err) ?? "");
        throw mapDbError(err);
      }
    } finally {
      if (broken) conn.destroy();
      else conn.release();
    }
    // The connection is back in the pool while waiting: a pause must not hold one.
    if (retry) await sleep(retryDelay(attempt, baseMs, maxMs));
  }
}

/** A single statement outside an explicit transaction, with the same error mapping. */
export async function withDb<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw mapDbError(err);
  }
}
