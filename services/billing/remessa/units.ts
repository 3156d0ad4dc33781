// The CNAB queue's consumers: a remessa job task enqueues its open sub-batches; a sub-batch task
// validates its títulos one by one (a bad título fails alone), takes the sub-batch's NSA once, writes
// the file (checked structurally by the writer), stores it immutably and completes; the finalize task
// zips every published file with a manifest and moves the job to its final state with its webhook.
import { create, fromJsonString } from "@bufbuild/protobuf";
import type { PoolConnection } from "mysql2/promise";
import { CobrancaError, saoPauloDate, saoPauloDateTime, type Titulo } from "../../../libs/cobranca/index.js";
import { BoletoSchema } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { RemessaTituloSchema, SubloteState } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { ItemState, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import type { FinishedJob } from "../boleto/units.js";
import type { ItemRepo, ItemRow, StoredError } from "../jobs/item-repo.js";
import { allItems } from "../jobs/round-artifacts.js";
import type { JobRepo, JobRow, StoredManifest } from "../jobs/job-repo.js";
import type { WorkQueue, Task } from "../jobs/queue.js";
import {
  BENEFICIARIO_FIELD,
  beneficiarioDivergente,
  beneficiarioDoSublote,
  beneficiarioOf,
  codigosDoBanco400,
  gerarArquivoSublote,
  tituloOf,
  validarTitulo,
} from "./input.js";
import type { RemessaRepo, SubloteRow } from "./repo.js";
import type { BillingMetrics } from "../metrics.js";
import { isFinalJob, RUNNING_JOB_STATES } from "../jobs/states.js";
import { buildZip } from "../jobs/zip.js";

export interface RemessaWorkerDeps {
  jobs: JobRepo;
  items: ItemRepo;
  sublotes: RemessaRepo;
  queue: WorkQueue;
  artifacts: ArtifactStore;
  log: Logger;
  tenantMaxRunningJobs: number;
  artifactTtlMs: number;
  completionEvent?: (c: PoolConnection, job: JobRow, finished: FinishedJob) => Promise<void>;
  onFinished?: (jobId: string) => void;
  metrics?: BillingMetrics;
  clock?: () => Date;
}

const OPEN_ITEMS = [ItemState.PENDING, ItemState.VALIDATING, ItemState.RENDERING] as const;
const err = (code: string, message: string, retryable: boolean, field = ""): StoredError => ({ code, field, message, retryable });
const fileName = (s: SubloteRow, nsa: number) =>
  `remessas/${String(s.index + 1).padStart(3, "0")}-${s.chave.banco}-${s.chave.layout}-nsa${nsa}.rem`;

export class RemessaWorker {
  private readonly clock: () => Date;
  constructor(private readonly d: RemessaWorkerDeps) {
    this.clock = d.clock ?? (() => new Date());
  }

  handle = async (task: Task): Promise<void | { retryInMs: number }> => {
    if (task.type === "job") return this.job(task.jobId);
    if (task.type === "sublote") return this.sublote(task.jobId, task.index);
    if (task.type === "finalize") return this.finalize(task.jobId);
  };

  onDead = async (task: Task): Promise<void> => {
    if (task.type !== "sublote") return;
    const e = [err("TENTATIVAS_ESGOTADAS", "the sub-batch kept failing on transient faults (storage unavailable); retry it later", true)];
    if (await this.d.sublotes.finish(task.jobId, task.index, SubloteState.FAILED, { errors: e })) {
      const rows = await this.subloteItems(task.jobId, task.index);
      await this.d.items.markMany(
        task.jobId,
        rows.filter((r) => (OPEN_ITEMS as readonly ItemState[]).includes(r.state)).map((r) => r.position),
        ItemState.FAILED,
        e,
        OPEN_ITEMS,
      );
    }
    await this.maybeFinalize(task.jobId);
  };

  private async job(jobId: string): Promise<void | { retryInMs: number }> {
    let job = await this.d.jobs.byId(jobId);
    if (!job || isFinalJob(job.state)) return;
    if (job.state === JobState.RECEIVED) {
      if ((await this.d.jobs.start(jobId, job.tenant, this.d.tenantMaxRunningJobs)) === "busy") return { retryInMs: 1000 };
      job = await this.d.jobs.byId(jobId);
      if (!job || isFinalJob(job.state)) return;
    }
    const open = (await this.d.sublotes.list(jobId)).filter((s) => s.state === SubloteState.PENDING || s.state === SubloteState.GENERATING);
    for (const s of open)
      await this.d.queue.publish({
        type: "sublote",
        jobId,
        index: s.index,
        attempt: Math.max(1, s.attemptCount + (s.state === SubloteState.PENDING ? 1 : 0)),
      });
    await this.d.jobs.transition(jobId, [JobState.VALIDATING], JobState.PROCESSING);
    if (open.length === 0) await this.d.queue.publish({ type: "finalize", jobId, round: job.retryRounds });
  }

  private async subloteItems(jobId: string, index: number): Promise<ItemRow[]> {
    const out: ItemRow[] = [];
    for (;;) {
      const page = await this.d.items.page(jobId, {
        subloteIndex: index,
        afterPosition: out.at(-1)?.position ?? 0,
        limit: 1000,
        withInput: true,
      });
      out.push(...page);
      if (page.length < 1000) return out;
    }
  }

  private async sublote(jobId: string, index: number): Promise<void> {
    const job = await this.d.jobs.byId(jobId);
    if (!job || !(RUNNING_JOB_STATES as readonly JobState[]).includes(job.state)) return;
    const s = await this.d.sublotes.claim(jobId, index);
    if (!s) return this.maybeFinalize(jobId);
    const rows = await this.subloteItems(jobId, index);
    const emissao = saoPauloDate(job.createdAt);
    // Validation uses the job's creation time: a título's verdict must not depend on when it runs.
    const probeTime = saoPauloDateTime(job.createdAt);
    const good: { row: ItemRow; titulo: Titulo }[] = [];
    const inputs = rows.map((row) => {
      const t = fromJsonString(RemessaTituloSchema, row.inputJson);
      const b = t.boleto ?? create(BoletoSchema);
      if (b.nossoNumero === "" && row.nossoNumero) b.nossoNumero = row.nossoNumero;
      return { row, b, movimento: t.movimento, beneficiario: beneficiarioOf(b) };
    });
    // Of every título, failed or not, so that a retry of the sub-batch writes the same header.
    const beneficiario = beneficiarioDoSublote(inputs.map((i) => i.beneficiario));
    for (const { row, b, movimento, beneficiario: proprio } of inputs) {
      if (row.state === ItemState.FAILED && row.errors.some((e) => !e.retryable)) continue;
      try {
        const febraban = tituloOf(b, row.itemId, movimento, emissao);
        const titulo = s.chave.layout === 400 ? codigosDoBanco400(febraban, s.chave.banco) : febraban;
        if (!beneficiario) throw new CobrancaError("CAMPO_OBRIGATORIO", "the sub-batch has no beneficiário", "beneficiario");
        const diverge = beneficiarioDivergente(beneficiario, proprio);
        if (diverge)
          throw new CobrancaError(
            "CAMPO_INVALIDO",
            `the file of this sub-batch (same banco, convênio, conta) is written for the beneficiário most of its títulos name; this título's ${diverge} differs (${JSON.stringify(proprio[diverge] ?? "")} vs ${JSON.stringify(beneficiario[diverge] ?? "")})`,
            BENEFICIARIO_FIELD[diverge],
          );
        const bad = validarTitulo(s.chave, beneficiario, titulo, probeTime);
        if (bad) throw bad;
        good.push({ row, titulo });
      } catch (e) {
        if (!(e instanceof CobrancaError)) throw e;
        const field = (e.field ?? "").replace(/^titulos\[\d+\]\./, "");
        await this.d.items.markMany(
          jobId,
          [row.position],
          ItemState.FAILED,
          [err(e.code, e.message.replace(/^[A-Z_]+(?: \([^)]*\))?: /, ""), false, field)],
          [...OPEN_ITEMS, ItemState.FAILED],
        );
      }
    }
    if (good.length === 0 || !beneficiario) {
      await this.d.sublotes.finish(jobId, index, SubloteState.FAILED, {
        errors: [err("SUBLOTE_SEM_TITULOS_VALIDOS", "every título of the sub-batch failed validation", false)],
      });
      return this.maybeFinalize(jobId);
    }
    const { nsa, generatedAt } = await this.d.sublotes.allocateNsa(jobId, index, {
      tenant: job.tenant,
      environment: job.environment,
      banco: s.chave.banco,
      convenio: (s.chave.convenio || `${s.chave.agencia}/${s.chave.conta}`).slice(0, 64),
    });
    let out;
    try {
      out = gerarArquivoSublote({
        chave: s.chave,
        nsa,
        geradoEm: saoPauloDateTime(generatedAt),
        beneficiario,
        titulos: good.map((g) => g.titulo),
      });
    } catch (e) {
      if (!(e instanceof CobrancaError)) throw e;
      const errors = [err(e.code, e.message, false, e.field ?? "")];
      await this.d.sublotes.finish(jobId, index, SubloteState.FAILED, { errors });
      await this.d.items.markMany(
        jobId,
        good.map((g) => g.row.position),
        ItemState.FAILED,
        errors,
        OPEN_ITEMS,
      );
      return this.maybeFinalize(jobId);
    }
    const expiresAt = new Date((job.roundStartedAt ?? job.createdAt).getTime() + this.d.artifactTtlMs);
    const artifact = await this.d.artifacts.put({
      tenant: job.tenant,
      jobId,
      name: fileName(s, nsa),
      contentType: "text/plain",
      data: out.bytes,
      expiresAt,
    });
    const valor = good.reduce((n, g) => n + g.titulo.valorCentavos, 0);
    await this.d.sublotes.finish(jobId, index, SubloteState.COMPLETED, {
      file: { artifact, registros: out.records, titulos: good.length, valorTotalCents: valor },
    });
    await this.d.items.markMany(
      jobId,
      good.map((g) => g.row.position),
      ItemState.COMPLETED,
      null,
      [...OPEN_ITEMS, ItemState.FAILED],
    );
    await this.maybeFinalize(jobId);
  }

  private async maybeFinalize(jobId: string): Promise<void> {
    if ((await this.d.sublotes.open(jobId)) > 0) return;
    const job = await this.d.jobs.byId(jobId);
    if (job && !isFinalJob(job.state)) await this.d.queue.publish({ type: "finalize", jobId, round: job.retryRounds });
  }

  private async finalize(jobId: string): Promise<void> {
    const job = await this.d.jobs.byId(jobId);
    if (!job || !(RUNNING_JOB_STATES as readonly JobState[]).includes(job.state)) return;
    if ((await this.d.sublotes.open(jobId)) > 0) return;
    const subs = await this.d.sublotes.list(jobId);
    // Títulos left open belong to sub-batches that never ran (e.g. all their títulos were refused).
    const rows = await allItems(this.d.items, jobId);
    await this.d.items.markMany(
      jobId,
      rows.filter((r) => (OPEN_ITEMS as readonly ItemState[]).includes(r.state)).map((r) => r.position),
      ItemState.FAILED,
      [err("SUBLOTE_FALHOU", "its sub-batch failed", true)],
      OPEN_ITEMS,
    );
    const counts = await this.d.items.counts(jobId);
    const expiresAt = new Date((job.roundStartedAt ?? job.createdAt).getTime() + this.d.artifactTtlMs);
    const manifest = await this.buildArtifacts(job, subs, expiresAt);
    const files = subs.filter((s) => s.state === SubloteState.COMPLETED).length;
    const failed = (counts.get(ItemState.FAILED) ?? 0) > 0 || subs.some((s) => s.state === SubloteState.FAILED);
    const state = files === 0 ? JobState.FAILED : failed ? JobState.PARTIALLY_COMPLETED : JobState.COMPLETED;
    const now = this.clock();
    const startedAt = job.startedAt ?? job.createdAt;
    const processed = (counts.get(ItemState.COMPLETED) ?? 0) + (counts.get(ItemState.FAILED) ?? 0);
    const finished: FinishedJob = {
      state,
      counts,
      finishedAt: now,
      duracaoMs: Math.max(0, now.getTime() - startedAt.getTime()),
      processed,
      manifest,
      artifactsExpiresAt: expiresAt,
    };
    const moved = await this.d.jobs.finish(
      jobId,
      RUNNING_JOB_STATES,
      state,
      {
        finished_at: now,
        manifest: JSON.stringify(manifest),
        duracao_ms: finished.duracaoMs,
        processed_items: processed,
        artifacts_expires_at: expiresAt,
      },
      async (c) => this.d.completionEvent?.(c, job, finished),
    );
    if (moved) {
      this.d.log.info({ jobId, files, state: JobState[state] }, "remessa job finished");
      this.d.metrics?.jobsFinished.inc({ kind: "remessa", state: JobState[state] });
      this.d.onFinished?.(jobId);
    }
  }

  private async buildArtifacts(job: JobRow, subs: SubloteRow[], expiresAt: Date): Promise<StoredManifest> {
    const dir = job.retryRounds === 0 ? "" : `rounds/${job.retryRounds}/`;
    const put = (name: string, contentType: string, data: Uint8Array) =>
      this.d.artifacts.put({ tenant: job.tenant, jobId: job.id, name: `${dir}${name}`, contentType, data, expiresAt });
    const doc = {
      job_id: job.id,
      tenant: job.tenant,
      metadata: job.metadata,
      files: subs
        .filter((s) => s.file)
        .map((s) => ({
          sublote_id: s.subloteId,
          key: s.chave,
          name: s.file!.artifact.name,
          sha256: s.file!.artifact.sha256,
          size_bytes: s.file!.artifact.sizeBytes,
          registros: s.file!.registros,
          titulos: s.file!.titulos,
          nsa: s.nsa,
        })),
      failed_sublotes: subs.filter((s) => s.state === SubloteState.FAILED).map((s) => ({ sublote_id: s.subloteId, errors: s.errors })),
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, "utf8");
    const rows = await allItems(this.d.items, job.id);
    const errorsBytes = Buffer.from(
      `${JSON.stringify({ items: rows.filter((r) => r.state === ItemState.FAILED || r.state === ItemState.SKIPPED).map((r) => ({ item_id: r.itemId, position: r.position, state: ItemState[r.state], errors: r.errors })) }, null, 2)}\n`,
      "utf8",
    );
    const manifestJson = await put("manifest.json", "application/json", manifestBytes);
    const errorsJson = await put("errors.json", "application/json", errorsBytes);
    const entries = [];
    for (const s of subs)
      if (s.file) entries.push({ name: s.file.artifact.name, data: await this.d.artifacts.read(job.tenant, s.file.artifact.artifactId) });
    if (entries.length === 0) return { manifestJson, errorsJson };
    entries.push({ name: "manifest.json", data: manifestBytes }, { name: "errors.json", data: errorsBytes });
    return { manifestJson, errorsJson, zip: await put(`remessas-${job.id}.zip`, "application/zip", buildZip(entries)) };
  }
}
