// Billing data does not live forever: finished jobs whose last change is older than the retention period
// are deleted with every row that names them, in batches, by one replica at a time (a MySQL named lock).
// Sequences (NSA, nosso número) are never touched: a number once used is never handed out again. After the
// purge an idempotency key, a retorno file and an occurrence's fingerprint may be seen again as new
// (docs/decisions/0014-billing-retention.md).
import type { Pool, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { Logger } from "../../../libs/log/logger.js";
import { FINAL_JOB_STATES } from "./states.js";

export const RETENTION_LOCK = "malha_billing_retention";

/** Every table holding a job's rows, by job_id; billing_jobs itself goes last. */
export const JOB_TABLES = [
  "billing_item_attempts",
  "billing_boleto_items",
  "billing_remessa_sublotes",
  "billing_retorno_occurrences",
  "billing_retorno_fingerprints",
  "billing_retorno_files",
  "billing_webhook_deliveries",
  "billing_idempotency_keys",
] as const;

export interface PurgeResult {
  jobs: number;
  rows: number;
}

/**
 * Deletes finished jobs last changed before `cutoff`, `batch` at a time, until none is left or `maxJobs`
 * were deleted. Returns undefined when another replica holds the purge.
 */
export async function purgeFinishedJobs(
  pool: Pool,
  cutoff: Date,
  opts: { batch?: number; maxJobs?: number } = {},
): Promise<PurgeResult | undefined> {
  const batch = opts.batch ?? 200;
  const maxJobs = opts.maxJobs ?? 100_000;
  const conn = await pool.getConnection();
  try {
    const [got] = await conn.query<RowDataPacket[]>("SELECT GET_LOCK(?, 0) AS got", [RETENTION_LOCK]);
    if (got[0]?.["got"] !== 1) return undefined;
    try {
      const total: PurgeResult = { jobs: 0, rows: 0 };
      while (total.jobs < maxJobs) {
        // ix_billing_jobs_state_updated: final states, oldest first.
        const [rows] = await conn.query<RowDataPacket[]>(
          "SELECT id FROM billing_jobs WHERE state IN (?) AND updated_at < ? ORDER BY updated_at LIMIT ?",
          [[...FINAL_JOB_STATES], cutoff, batch],
        );
        const ids = rows.map((r) => r["id"] as string);
        if (ids.length === 0) break;
        await conn.beginTransaction();
        try {
          for (const table of JOB_TABLES) {
            const [res] = await conn.query<ResultSetHeader>(`DELETE FROM ${table} WHERE job_id IN (?)`, [ids]);
            total.rows += res.affectedRows;
          }
          // Re-checked: a job retried (RetryFailedItems) since the SELECT is running again and stays.
          const [res] = await conn.query<ResultSetHeader>("DELETE FROM billing_jobs WHERE id IN (?) AND state IN (?) AND updated_at < ?", [
            ids,
            [...FINAL_JOB_STATES],
            cutoff,
          ]);
          if (res.affectedRows !== ids.length) {
            await conn.rollback();
            continue;
          }
          await conn.commit();
          total.jobs += res.affectedRows;
          total.rows += res.affectedRows;
        } catch (err) {
          await conn.rollback().catch(() => undefined);
          throw err;
        }
      }
      return total;
    } finally {
      await conn.query("SELECT RELEASE_LOCK(?)", [RETENTION_LOCK]).catch(() => undefined);
    }
  } finally {
    conn.release();
  }
}

/** The periodic purge; a failed pass is logged and the next one tries again. */
export function startRetention(p: {
  pool: Pool;
  log: Logger;
  retentionMs: number;
  intervalMs: number;
  onPurged?: (jobs: number) => void;
}): { stop: () => void } {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const result = await purgeFinishedJobs(p.pool, new Date(Date.now() - p.retentionMs));
      if (result && result.jobs > 0) {
        p.onPurged?.(result.jobs);
        p.log.info(
          { jobs: result.jobs, rows: result.rows, retentionDays: p.retentionMs / 86_400_000 },
          "finished jobs past retention deleted",
        );
      }
    } catch (err) {
      p.log.warn({ err }, "retention pass failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), p.intervalMs);
  timer.unref();
  void tick();
  return { stop: () => clearInterval(timer) };
}
