// The lifecycle every billing job shares, written once: the job task starts the job under the tenant's
// cap and fans its open units out to the queue; each unit task runs one unit (an item, a sub-batch, a
// file) and, when none is left open, asks for the finalize task; finalize has the kind conclude the
// round (counts, manifest, errors document, zip) and moves the job to its final state together with
// its completion event in the outbox. What a unit is, how one runs and what a round yields is the
// kind's (JobUnits). Every step is idempotent against redelivery and against a second process.
import type { JsMsg } from "@nats-io/jetstream";
import type { PoolConnection } from "mysql2/promise";
import { checkpoint } from "../../../libs/checkpoint/index.js";
import { type ItemState, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { BillingMetrics } from "../metrics.js";
import type { JobRepo, JobRow } from "./job-repo.js";
import type { Task, WorkQueue } from "./queue.js";
import { finalJobState, isFinalJob, RUNNING_JOB_STATES } from "./states.js";
import type { StoredManifest } from "./stored.js";

/** A task that runs one unit of a job. */
export type UnitTask = Extract<Task, { type: "item" | "sublote" | "retorno" }>;

/** How a finished round ended: what the kind reports, and what the engine stores and announces. */
export interface Conclusion {
  /** Units that produced their output (PDFs, files, occurrences). */
  produced: number;
  /** Whether any unit failed. With `produced` this decides the final state (finalJobState). */
  failed: boolean;
  counts: Map<ItemState, number>;
  /** Items processed in the round, for ms_por_item. */
  processed: number;
  manifest?: StoredManifest;
  artifactsExpiresAt?: Date;
  /** The kind's details document as it should be stored on the finished job. */
  detailsJson?: string;
  /** The job's total when the kind learns it only while running (a retorno's occurrences). */
  totalItems?: number;
  /** Figures for the "job finished" log line. */
  summary: Record<string, number>;
}

/** A unit ran and closed (or found itself already closed); a held one belongs to another live delivery. */
export type UnitOutcome = "ran" | "held" | { concluded: Conclusion };

export interface JobUnits {
  readonly kind: "boleto" | "remessa" | "retorno";
  /**
   * The job has a single unit whose task also starts it (a retorno file): no job or finalize task, and
   * the unit's outcome concludes the job at once.
   */
  readonly singleUnit?: boolean;
  /** Tasks of the units still open, published when the job (re)starts. */
  openUnits(job: JobRow): Promise<UnitTask[]>;
  /** No unit of the current round is open any more. */
  settled(jobId: string): Promise<boolean>;
  runUnit(job: JobRow, task: UnitTask, msg: JsMsg): Promise<UnitOutcome>;
  /** The last delivery of a unit's task failed: close the unit as failed; true when the job may now finish. */
  unitDead(task: UnitTask): Promise<boolean>;
  /** Once settled: the round's documents and counts. Deterministic, so a repeated finalize yields the same. */
  conclude(job: JobRow, artifactsExpiresAt: Date): Promise<Conclusion>;
}

export interface FinishedJob {
  state: JobState;
  counts: Map<ItemState, number>;
  finishedAt: Date;
  duracaoMs: number;
  processed: number;
  /** Absent for retorno jobs, which produce no artifacts. */
  manifest?: StoredManifest;
  artifactsExpiresAt?: Date;
}

export interface EngineDeps {
  jobs: JobRepo;
  queue: WorkQueue;
  log: Logger;
  tenantMaxRunningJobs: number;
  artifactTtlMs: number;
  /** Writes the completion event into the outbox, inside the transaction that finishes the job. */
  completionEvent?: (c: PoolConnection, job: JobRow, finished: FinishedJob) => Promise<void>;
  metrics?: BillingMetrics;
  /** Told after a job finished (wakes the webhook sender). */
  onFinished?: (jobId: string) => void;
  clock?: () => Date;
}

const isRunning = (s: JobState) => (RUNNING_JOB_STATES as readonly JobState[]).includes(s);
const isUnit = (t: Task): t is UnitTask => t.type === "item" || t.type === "sublote" || t.type === "retorno";

/** Until a running job frees a slot, a job of a tenant at its cap waits in RECEIVED and its task comes back. */
const BUSY_RETRY_MS = 1000;

export class JobEngine {
  private readonly clock: () => Date;

  constructor(
    private readonly units: JobUnits,
    private readonly d: EngineDeps,
  ) {
    this.clock = d.clock ?? (() => new Date());
  }

  handle = async (task: Task, msg: JsMsg): Promise<void | { retryInMs: number }> => {
    if (task.type === "job") return this.start(task.jobId);
    if (task.type === "finalize") return this.finalize(task.jobId);
    return this.unit(task, msg);
  };

  onDead = async (task: Task): Promise<void> => {
    if (isUnit(task) && (await this.units.unitDead(task))) await this.maybeFinalize(task.jobId);
  };

  /** RECEIVED → VALIDATING under the tenant's cap; undefined when the tenant is busy or the job is gone. */
  private async started(job: JobRow): Promise<JobRow | "busy" | undefined> {
    if (job.state !== JobState.RECEIVED) return job;
    if ((await this.d.jobs.start(job.id, job.tenant, this.d.tenantMaxRunningJobs)) === "busy") return "busy";
    const now = await this.d.jobs.byId(job.id);
    return now && !isFinalJob(now.state) ? now : undefined;
  }

  private async start(jobId: string): Promise<void | { retryInMs: number }> {
    const found = await this.d.jobs.byId(jobId);
    if (!found || isFinalJob(found.state)) return;
    const job = await this.started(found);
    if (job === "busy") return { retryInMs: BUSY_RETRY_MS };
    if (!job) return;
    const open = await this.units.openUnits(job);
    for (const t of open) await this.d.queue.publish(t);
    await this.d.jobs.transition(jobId, [JobState.VALIDATING], JobState.PROCESSING);
    if (open.length === 0) await this.d.queue.publish({ type: "finalize", jobId, round: job.retryRounds });
  }

  private async unit(task: UnitTask, msg: JsMsg): Promise<void | { retryInMs: number }> {
    let job = await this.d.jobs.byId(task.jobId);
    if (!job || isFinalJob(job.state)) return;
    if (this.units.singleUnit) {
      const started = await this.started(job);
      if (started === "busy") return { retryInMs: BUSY_RETRY_MS };
      if (!started) return;
      job = started;
    }
    if (!isRunning(job.state)) return;
    const outcome = await this.units.runUnit(job, task, msg);
    if (outcome === "held") return;
    if (outcome === "ran") return this.maybeFinalize(task.jobId);
    await this.finish(job, outcome.concluded);
  }

  private async maybeFinalize(jobId: string): Promise<void> {
    if (!(await this.units.settled(jobId))) return;
    const job = await this.d.jobs.byId(jobId);
    if (job && !isFinalJob(job.state)) await this.d.queue.publish({ type: "finalize", jobId, round: job.retryRounds });
  }

  private async finalize(jobId: string): Promise<void> {
    const job = await this.d.jobs.byId(jobId);
    if (!job || !isRunning(job.state)) return;
    if (!(await this.units.settled(jobId))) return;
    // Round 0 and each retry round keep their artifacts until the round's start plus the TTL.
    const expiresAt = new Date((job.roundStartedAt ?? job.createdAt).getTime() + this.d.artifactTtlMs);
    const concluded = await this.units.conclude(job, expiresAt);
    checkpoint("billing.after-zip");
    await this.finish(job, concluded);
  }

  private async finish(job: JobRow, c: Conclusion): Promise<void> {
    const now = this.clock();
    const startedAt = job.startedAt ?? job.createdAt;
    const finished: FinishedJob = {
      state: finalJobState(c),
      counts: c.counts,
      finishedAt: now,
      duracaoMs: Math.max(0, now.getTime() - startedAt.getTime()),
      processed: c.processed,
      ...(c.manifest ? { manifest: c.manifest } : {}),
      ...(c.artifactsExpiresAt ? { artifactsExpiresAt: c.artifactsExpiresAt } : {}),
    };
    const announced = c.totalItems === undefined ? job : { ...job, totalItems: c.totalItems };
    const moved = await this.d.jobs.finish(
      job.id,
      job.retryRounds,
      finished.state,
      {
        finishedAt: now,
        duracaoMs: finished.duracaoMs,
        processedItems: finished.processed,
        ...(c.manifest ? { manifest: c.manifest } : {}),
        ...(c.artifactsExpiresAt ? { artifactsExpiresAt: c.artifactsExpiresAt } : {}),
        ...(c.detailsJson !== undefined ? { detailsJson: c.detailsJson } : {}),
        ...(c.totalItems !== undefined ? { totalItems: c.totalItems } : {}),
      },
      async (conn) => this.d.completionEvent?.(conn, announced, finished),
    );
    if (!moved) return;
    this.d.log.info({ jobId: job.id, state: JobState[finished.state], ...c.summary }, `${this.units.kind} job finished`);
    this.d.metrics?.jobsFinished.inc({ kind: this.units.kind, state: JobState[finished.state] });
    this.d.onFinished?.(job.id);
  }
}
