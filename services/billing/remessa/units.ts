// The units of a remessa job are its sub-batches: a sub-batch task validates its títulos one by one
// (a bad título fails alone), takes the sub-batch's NSA once, writes the file (checked structurally by
// the writer), stores it immutably and completes its títulos. A round yields manifest.json (the files
// with their keys, NSAs and hashes), errors.json and remessas-<job>.zip. The lifecycle around the
// sub-batches is the job engine's (jobs/engine.ts).
import { create, fromJsonString } from "@bufbuild/protobuf";
import { CobrancaError, saoPauloDate, saoPauloDateTime, type Titulo } from "../../../libs/cobranca/index.js";
import { BoletoSchema } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { RemessaTituloSchema, SubloteState } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { ItemState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import type { Conclusion, JobUnits, UnitOutcome, UnitTask } from "../jobs/engine.js";
import type { ItemRepo, ItemRow } from "../jobs/item-repo.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import { allItems, errorsDocument, publishRound } from "../jobs/round-artifacts.js";
import type { StoredError } from "../jobs/stored.js";
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

export interface RemessaUnitsDeps {
  jobs: JobRepo;
  items: ItemRepo;
  sublotes: RemessaRepo;
  artifacts: ArtifactStore;
  artifactTtlMs: number;
}

const OPEN_ITEMS = [ItemState.PENDING, ItemState.VALIDATING, ItemState.RENDERING] as const;
const err = (code: string, message: string, retryable: boolean, field = ""): StoredError => ({ code, field, message, retryable });
const fileName = (s: SubloteRow, nsa: number) =>
  `remessas/${String(s.index + 1).padStart(3, "0")}-${s.chave.banco}-${s.chave.layout}-nsa${nsa}.rem`;

export class RemessaUnits implements JobUnits {
  readonly kind = "remessa";
  constructor(private readonly d: RemessaUnitsDeps) {}

  async openUnits(job: JobRow): Promise<UnitTask[]> {
    const open = (await this.d.sublotes.list(job.id)).filter(
      (s) => s.state === SubloteState.PENDING || s.state === SubloteState.GENERATING,
    );
    return open.map((s) => ({
      type: "sublote",
      jobId: job.id,
      index: s.index,
      attempt: Math.max(1, s.attemptCount + (s.state === SubloteState.PENDING ? 1 : 0)),
    }));
  }

  async settled(jobId: string): Promise<boolean> {
    return (await this.d.sublotes.open(jobId)) === 0;
  }

  async unitDead(task: UnitTask): Promise<boolean> {
    if (task.type !== "sublote") return false;
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
    return true;
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

  async runUnit(job: JobRow, task: UnitTask): Promise<UnitOutcome> {
    if (task.type !== "sublote") return "held";
    const { jobId, index } = task;
    const s = await this.d.sublotes.claim(jobId, index);
    if (!s) return "ran";
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
      return "ran";
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
      return "ran";
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
    return "ran";
  }

  async conclude(job: JobRow, expiresAt: Date): Promise<Conclusion> {
    const subs = await this.d.sublotes.list(job.id);
    // Títulos left open belong to sub-batches that never ran (e.g. all their títulos were refused).
    const open = await allItems(this.d.items, job.id);
    await this.d.items.markMany(
      job.id,
      open.filter((r) => (OPEN_ITEMS as readonly ItemState[]).includes(r.state)).map((r) => r.position),
      ItemState.FAILED,
      [err("SUBLOTE_FALHOU", "its sub-batch failed", true)],
      OPEN_ITEMS,
    );
    const counts = await this.d.items.counts(job.id);
    const rows = await allItems(this.d.items, job.id);
    const withFile = subs.flatMap((s) => (s.file ? [{ s, file: s.file }] : []));
    const manifest = await publishRound({
      job,
      artifacts: this.d.artifacts,
      expiresAt,
      manifest: {
        job_id: job.id,
        tenant: job.tenant,
        metadata: job.metadata,
        files: withFile.map(({ s, file }) => ({
          sublote_id: s.subloteId,
          key: s.chave,
          name: file.artifact.name,
          sha256: file.artifact.sha256,
          size_bytes: file.artifact.sizeBytes,
          registros: file.registros,
          titulos: file.titulos,
          nsa: s.nsa,
        })),
        failed_sublotes: subs.filter((s) => s.state === SubloteState.FAILED).map((s) => ({ sublote_id: s.subloteId, errors: s.errors })),
      },
      errors: errorsDocument(rows),
      zipName: `remessas-${job.id}.zip`,
      entries: withFile.map(({ file }) => file.artifact),
    });
    const files = subs.filter((s) => s.state === SubloteState.COMPLETED).length;
    const failed = (counts.get(ItemState.FAILED) ?? 0) > 0 || subs.some((s) => s.state === SubloteState.FAILED);
    return {
      produced: files,
      failed,
      counts,
      processed: (counts.get(ItemState.COMPLETED) ?? 0) + (counts.get(ItemState.FAILED) ?? 0),
      manifest,
      artifactsExpiresAt: expiresAt,
      summary: { files },
    };
  }
}
