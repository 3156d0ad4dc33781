// What the boleto queue's consumers do. Every step is idempotent against redelivery: the job task
// (re-)enqueues whatever items are unfinished, an item task claims its attempt in MySQL before working
// and ends it with a conditional update, and the finalize task builds deterministic artifacts under
// names that are immutable in the artifacts service, then moves the job to its final state once.
import { checkpoint } from "../../../libs/checkpoint/index.js";
import { fromJsonString } from "@bufbuild/protobuf";
import type { JsMsg } from "@nats-io/jetstream";
import { CobrancaError, saoPauloDate } from "../../../libs/cobranca/index.js";
import { BoletoSchema } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { Environment, ItemState, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import { prepareItem } from "./item.js";
import { buildJobArtifacts } from "../jobs/round-artifacts.js";
import type { JobRepo, JobRow, StoredManifest } from "../jobs/job-repo.js";
import type { PoolConnection } from "mysql2/promise";
import type { ItemRepo, StoredError } from "../jobs/item-repo.js";
import type { WorkQueue, Task } from "../jobs/queue.js";
import { RenderFailure, RenderTimeoutError, type RenderPool } from "./render-pool.js";
import type { BillingMetrics } from "../metrics.js";
import { finalJobState, isFinalJob, RUNNING_JOB_STATES } from "../jobs/states.js";

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

export interface WorkerDeps {
  jobs: JobRepo;
  items: ItemRepo;
  queue: WorkQueue;
  pool: RenderPool;
  artifacts: ArtifactStore;
  log: Logger;
  ackWaitMs: number;
  jobTimeoutMs: number;
  tenantMaxRunningJobs: number;
  artifactTtlMs: number;
  /** Writes the completion event into the outbox, inside the transaction that finishes the job. */
  completionEvent?: (c: PoolConnection, job: JobRow, finished: FinishedJob) => Promise<void>;
  metrics?: BillingMetrics;
  /** Told after a job finished (wakes the webhook sender). */
  onFinished?: (jobId: string) => void;
  clock?: () => Date;
}

const err = (code: string, message: string, retryable: boolean, field = ""): StoredError => ({ code, field, message, retryable });

export class BoletoWorker {
  private readonly clock: () => Date;
  constructor(private readonly d: WorkerDeps) {
    this.clock = d.clock ?? (() => new Date());
  }

  handle = async (task: Task, msg: JsMsg): Promise<void | { retryInMs: number }> => {
    if (task.type === "job") return this.job(task.jobId);
    if (task.type === "item") return this.item(task.jobId, task.position, msg.seq);
    return this.finalize(task.jobId);
  };

  /** Last delivery of a task failed: its item ends FAILED (retryable) so the job can still finish. */
  onDead = async (task: Task): Promise<void> => {
    if (task.type !== "item") return;
    const job = await this.d.jobs.byId(task.jobId);
    const item = job && (await this.d.items.page(task.jobId, { afterPosition: task.position - 1, limit: 1 }))[0];
    if (!item || item.position !== task.position) return;
    await this.d.items.finish(task.jobId, task.position, item.attemptCount, ItemState.FAILED, {
      errors: [err("TENTATIVAS_ESGOTADAS", "the item kept failing on transient faults (storage unavailable); retry it later", true)],
    });
    await this.maybeFinalize(task.jobId);
  };

  private async job(jobId: string): Promise<void | { retryInMs: number }> {
    let job = await this.d.jobs.byId(jobId);
    if (!job || isFinalJob(job.state)) return;
    if (job.state === JobState.RECEIVED) {
      const started = await this.d.jobs.start(jobId, job.tenant, this.d.tenantMaxRunningJobs);
      // The tenant is at its limit: the job waits in RECEIVED and the task comes back later.
      if (started === "busy") return { retryInMs: 1000 };
      job = await this.d.jobs.byId(jobId);
      if (!job || isFinalJob(job.state)) return;
    }
    const unfinished = await this.d.items.unfinished(jobId);
    for (const u of unfinished) await this.d.queue.publish({ type: "item", jobId, position: u.position, attempt: u.attempt });
    await this.d.jobs.transition(jobId, [JobState.VALIDATING], JobState.PROCESSING);
    if (unfinished.length === 0) await this.d.queue.publish({ type: "finalize", jobId, round: job.retryRounds });
  }

  private async item(jobId: string, position: number, seq: number): Promise<void> {
    const job = await this.d.jobs.byId(jobId);
    if (!job || !(RUNNING_JOB_STATES as readonly JobState[]).includes(job.state)) return;
    const claim = await this.d.items.claim(jobId, position, seq, this.d.ackWaitMs);
    if (claim.kind === "held-elsewhere") return;
    if (claim.kind === "finished") return this.maybeFinalize(jobId);
    const { item, attempt } = claim;
    const finish = async (state: ItemState, out: Parameters<ItemRepo["finish"]>[4]) => {
      if (await this.d.items.finish(jobId, position, attempt, state, out))
        this.d.metrics?.itemsFinished.inc({ kind: "boleto", state: ItemState[state] });
      await this.maybeFinalize(jobId);
    };
    const now = this.clock();
    if (job.roundStartedAt && now.getTime() - job.roundStartedAt.getTime() > this.d.jobTimeoutMs) {
      return finish(ItemState.FAILED, {
        errors: [err("JOB_TIMEOUT", `the job exceeded its time limit of ${this.d.jobTimeoutMs} ms`, true)],
      });
    }
    // Refusals decided at creation (an unusable external_id) end the item at its first pick-up.
    if (item.errors.length > 0 && attempt === 1) return finish(ItemState.FAILED, { errors: item.errors });

    const input = fromJsonString(BoletoSchema, item.inputJson);
    let nossoNumero = item.nossoNumero ?? undefined;
    if (input.nossoNumero === "" && nossoNumero === undefined && input.conta) {
      nossoNumero = await this.d.items.allocateNossoNumero(jobId, position, {
        tenant: job.tenant,
        environment: job.environment,
        banco: input.conta.banco.slice(0, 3),
        convenio: (input.conta.convenio || `${input.conta.agencia}/${input.conta.conta}`).slice(0, 32),
      });
    }
    let prepared: ReturnType<typeof prepareItem>;
    try {
      prepared = prepareItem(input, {
        itemId: item.itemId,
        dataProcessamento: saoPauloDate(job.createdAt),
        sandbox: job.environment === Environment.SANDBOX,
        ...(nossoNumero !== undefined ? { nossoNumero } : {}),
      });
    } catch (e) {
      if (e instanceof CobrancaError) return finish(ItemState.FAILED, { errors: [err(e.code, e.message, false, e.field ?? "")] });
      throw e;
    }
    await this.d.items.setState(jobId, position, attempt, ItemState.RENDERING);
    let pdf: Uint8Array;
    const endTimer = this.d.metrics?.renderSeconds.startTimer();
    try {
      pdf = await this.d.pool.render(prepared.ficha);
      endTimer?.();
    } catch (e) {
      if (e instanceof RenderTimeoutError) return finish(ItemState.FAILED, { errors: [err("RENDER_TIMEOUT", e.message, true)] });
      if (e instanceof RenderFailure) {
        const field = e.field.replace(/^avalista\./, "sacador_avalista.");
        return finish(ItemState.FAILED, { errors: [err(e.code, e.message, !e.deterministic, field)] });
      }
      throw e;
    }
    const expiresAt = new Date((job.roundStartedAt ?? now).getTime() + this.d.artifactTtlMs);
    const stored = await this.d.artifacts.put({
      tenant: job.tenant,
      jobId,
      name: `items/${item.itemId}.pdf`,
      contentType: "application/pdf",
      data: pdf,
      expiresAt,
    });
    checkpoint("billing.after-item-artifact");
    await finish(ItemState.COMPLETED, { result: { ...prepared.result, pdf: stored } });
  }

  private async maybeFinalize(jobId: string): Promise<void> {
    const counts = await this.d.items.counts(jobId);
    const open = (counts.get(ItemState.PENDING) ?? 0) + (counts.get(ItemState.VALIDATING) ?? 0) + (counts.get(ItemState.RENDERING) ?? 0);
    if (open > 0) return;
    const job = await this.d.jobs.byId(jobId);
    if (job && !isFinalJob(job.state)) await this.d.queue.publish({ type: "finalize", jobId, round: job.retryRounds });
  }

  private async finalize(jobId: string): Promise<void> {
    const job = await this.d.jobs.byId(jobId);
    if (!job || !(RUNNING_JOB_STATES as readonly JobState[]).includes(job.state)) return;
    const counts = await this.d.items.counts(jobId);
    const open = (counts.get(ItemState.PENDING) ?? 0) + (counts.get(ItemState.VALIDATING) ?? 0) + (counts.get(ItemState.RENDERING) ?? 0);
    if (open > 0) return;
    const expiresAt = new Date((job.roundStartedAt ?? job.createdAt).getTime() + this.d.artifactTtlMs);
    const manifest = await buildJobArtifacts({ job, items: this.d.items, artifacts: this.d.artifacts, expiresAt });
    checkpoint("billing.after-zip");
    const completed = counts.get(ItemState.COMPLETED) ?? 0;
    const failed = counts.get(ItemState.FAILED) ?? 0;
    const skipped = counts.get(ItemState.SKIPPED) ?? 0;
    const now = this.clock();
    const startedAt = job.startedAt ?? job.createdAt;
    const finished: FinishedJob = {
      state: finalJobState({ completed, failed, skipped }),
      counts,
      finishedAt: now,
      duracaoMs: Math.max(0, now.getTime() - startedAt.getTime()),
      processed: completed + failed,
      manifest,
      artifactsExpiresAt: expiresAt,
    };
    const moved = await this.d.jobs.finish(
      jobId,
      RUNNING_JOB_STATES,
      finished.state,
      {
        finished_at: now,
        manifest: JSON.stringify(manifest),
        duracao_ms: finished.duracaoMs,
        processed_items: finished.processed,
        artifacts_expires_at: expiresAt,
      },
      async (c) => this.d.completionEvent?.(c, job, finished),
    );
    if (moved) {
      this.d.log.info({ jobId, completed, failed, skipped }, "boleto job finished");
      this.d.metrics?.jobsFinished.inc({ kind: "boleto", state: JobState[finished.state] });
      this.d.onFinished?.(jobId);
    }
  }
}
