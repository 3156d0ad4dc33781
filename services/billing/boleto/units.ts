// The units of a boleto job are its items: an item task claims its attempt in MySQL before working
// (a redelivery resumes it, a stale duplicate is dropped), allocates a missing nosso número once,
// renders the PDF in the render pool and stores it immutably, then ends the attempt with a conditional
// update. A round yields manifest.json, errors.json and boletos-<job>.zip. The lifecycle around the
// items is the job engine's (jobs/engine.ts).
import { fromJsonString } from "@bufbuild/protobuf";
import type { JsMsg } from "@nats-io/jetstream";
import { checkpoint } from "../../../libs/checkpoint/index.js";
import { bancoAtribuiNossoNumero, CobrancaError, saoPauloDate } from "../../../libs/cobranca/index.js";
import { BoletoSchema } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { Environment, ItemState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import type { Conclusion, JobUnits, UnitOutcome, UnitTask } from "../jobs/engine.js";
import type { ItemRepo } from "../jobs/item-repo.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import { allItems, errorsDocument, publishRound } from "../jobs/round-artifacts.js";
import type { StoredError, StoredResult } from "../jobs/stored.js";
import type { BillingMetrics } from "../metrics.js";
import { prepareItem } from "./item.js";
import { manifestDocument } from "./manifest.js";
import { RenderFailure, RenderTimeoutError, type RenderPool } from "./render-pool.js";

export interface BoletoUnitsDeps {
  jobs: JobRepo;
  items: ItemRepo;
  pool: RenderPool;
  artifacts: ArtifactStore;
  ackWaitMs: number;
  jobTimeoutMs: number;
  artifactTtlMs: number;
  metrics?: BillingMetrics;
  clock?: () => Date;
}

const err = (code: string, message: string, retryable: boolean, field = ""): StoredError => ({ code, field, message, retryable });
const OPEN_ITEMS: readonly ItemState[] = [ItemState.PENDING, ItemState.VALIDATING, ItemState.RENDERING];

export class BoletoUnits implements JobUnits {
  readonly kind = "boleto";
  private readonly clock: () => Date;
  constructor(private readonly d: BoletoUnitsDeps) {
    this.clock = d.clock ?? (() => new Date());
  }

  async openUnits(job: JobRow): Promise<UnitTask[]> {
    const unfinished = await this.d.items.unfinished(job.id);
    return unfinished.map((u) => ({ type: "item", jobId: job.id, position: u.position, attempt: u.attempt }));
  }

  async settled(jobId: string): Promise<boolean> {
    const counts = await this.d.items.counts(jobId);
    return OPEN_ITEMS.every((s) => (counts.get(s) ?? 0) === 0);
  }

  /** Last delivery of an item task failed: the item ends FAILED (retryable) so the job can still finish. */
  async unitDead(task: UnitTask): Promise<boolean> {
    if (task.type !== "item") return false;
    const job = await this.d.jobs.byId(task.jobId);
    const item = job && (await this.d.items.page(task.jobId, { afterPosition: task.position - 1, limit: 1 }))[0];
    if (!item || item.position !== task.position) return false;
    await this.d.items.finish(task.jobId, task.position, item.attemptCount, ItemState.FAILED, {
      errors: [err("TENTATIVAS_ESGOTADAS", "the item kept failing on transient faults (storage unavailable); retry it later", true)],
    });
    return true;
  }

  async runUnit(job: JobRow, task: UnitTask, msg: JsMsg): Promise<UnitOutcome> {
    if (task.type !== "item") return "held";
    const { jobId, position } = task;
    const claim = await this.d.items.claim(jobId, position, msg.seq, this.d.ackWaitMs);
    if (claim.kind === "held-elsewhere") return "held";
    if (claim.kind === "finished") return "ran";
    const { item, attempt } = claim;
    const finish = async (state: ItemState, out: { result?: StoredResult; errors?: StoredError[] }): Promise<UnitOutcome> => {
      if (await this.d.items.finish(jobId, position, attempt, state, out))
        this.d.metrics?.itemsFinished.inc({ kind: "boleto", state: ItemState[state] });
      return "ran";
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
    // Inter and C6 number their títulos: a number of ours would print a boleto they do not know (decision 0023)
    if (input.nossoNumero === "" && nossoNumero === undefined && input.conta && !bancoAtribuiNossoNumero(input.conta.banco.slice(0, 3))) {
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
    return finish(ItemState.COMPLETED, { result: { ...prepared.result, pdf: stored } });
  }

  async conclude(job: JobRow, expiresAt: Date): Promise<Conclusion> {
    const counts = await this.d.items.counts(job.id);
    const rows = await allItems(this.d.items, job.id);
    const manifest = await publishRound({
      job,
      artifacts: this.d.artifacts,
      expiresAt,
      manifest: manifestDocument(job, rows),
      errors: errorsDocument(rows),
      zipName: `boletos-${job.id}.zip`,
      entries: rows.flatMap((r) => (r.state === ItemState.COMPLETED && r.result?.pdf ? [r.result.pdf] : [])),
    });
    const completed = counts.get(ItemState.COMPLETED) ?? 0;
    const failed = counts.get(ItemState.FAILED) ?? 0;
    const skipped = counts.get(ItemState.SKIPPED) ?? 0;
    return {
      produced: completed,
      failed: failed > 0,
      counts,
      processed: completed + failed,
      manifest,
      artifactsExpiresAt: expiresAt,
      summary: { completed, failed, skipped },
    };
  }
}
