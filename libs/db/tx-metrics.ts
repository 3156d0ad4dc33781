// How often a pool's transactions were run again, by the error that made them: the first sign of lock
// contention (two writers meeting on the same rows or gaps), which inTransaction otherwise hides by
// retrying. Each service counts the pool it creates (decision 0060 removed the store's known ones).
import type { Pool } from "mysql2/promise";
import { Counter, type Registry } from "prom-client";
import { onTransactionRetry } from "./tx.js";

/** Registers `malha_db_transaction_retries_total` in `registry` and counts `pool`'s retries into it. */
export function countTransactionRetries(pool: Pool, registry: Registry): void {
  const retries = new Counter({
    name: "malha_db_transaction_retries_total",
    help: "Transactions rolled back and run again, by MySQL error (ER_LOCK_DEADLOCK, ER_LOCK_WAIT_TIMEOUT).",
    labelNames: ["code"],
    registers: [registry],
  });
  onTransactionRetry(pool, (code) => retries.inc({ code }));
}
