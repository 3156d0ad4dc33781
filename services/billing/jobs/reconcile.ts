// A safety net for tasks that never reached the queue (NATS down between a commit and its publish, a
// retry round interrupted between its update and its publishes): unfinished jobs with no progress for a
// while get their job task published again, which re-enqueues whatever is left. Idempotent by design.
import type { Pool, RowDataPacket } from "mysql2/promise";
import { JobKind, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { WorkQueue } from "./queue.js";

export function startReconciler(p: {
  pool: Pool;
  queues: Partial<Record<JobKind, WorkQueue>>;
  log: Logger;
  intervalMs: number;
  staleMs: number;
}): { stop: () => void } {
  let running = false;
  const tick = async () => {
    if (running) return;
    running = true;
    try {
      const cutoff = new Date(Date.now() - p.staleMs);
      const [rows] = await p.pool.query<RowDataPacket[]>(
        `SELECT j.id, j.kind, j.retry_rounds FROM billing_jobs j
          WHERE j.state IN (?, ?, ?) AND j.updated_at < ?
            AND NOT EXISTS (SELECT 1 FROM billing_boleto_items i WHERE i.job_id = j.id AND i.updated_at >= ?)
          LIMIT 100`,
        [JobState.RECEIVED, JobState.VALIDATING, JobState.PROCESSING, cutoff, cutoff],
      );
      const bucket = Math.floor(Date.now() / p.staleMs);
      for (const r of rows) {
        // A retorno job has a single task; the others restart from their job task.
        const task =
          r["kind"] === JobKind.RETORNO
            ? ({ type: "retorno", jobId: r["id"] } as const)
            : ({ type: "job", jobId: r["id"], round: r["retry_rounds"] } as const);
        await p.queues[r["kind"] as JobKind]?.publish(task, `${r["id"]}:reconcile:${bucket}`);
      }
      if (rows.length > 0) p.log.info({ jobs: rows.length }, "re-enqueued stalled jobs");
    } catch (err) {
      p.log.warn({ err }, "reconcile pass failed");
    } finally {
      running = false;
    }
  };
  const timer = setInterval(() => void tick(), p.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
