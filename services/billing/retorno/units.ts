// The retorno queue's consumer: reads the stored file, parses it with libs/cobranca (canonical states,
// idempotency keys), stores the occurrences, and finishes the job with its header, per-state summary and
// issues. An unreadable file fails the job (nothing could be produced), with the checker's findings.
import { createHash } from "node:crypto";
import type { PoolConnection } from "mysql2/promise";
import { CobrancaError, lerRetorno, type CalendarDate, type EventoRetorno } from "../../../libs/cobranca/index.js";
import { IssueSeverity, OcorrenciaState } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { ItemState, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import type { FinishedJob } from "../boleto/units.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import type { Task } from "../jobs/queue.js";
import type { OccurrenceInsert, RetornoRepo } from "./repo.js";
import type { BillingMetrics } from "../metrics.js";
import { isFinalJob } from "../jobs/states.js";

export interface RetornoWorkerDeps {
  jobs: JobRepo;
  retornos: RetornoRepo;
  artifacts: ArtifactStore;
  log: Logger;
  tenantMaxRunningJobs: number;
  completionEvent?: (c: PoolConnection, job: JobRow, finished: FinishedJob) => Promise<void>;
  onFinished?: (jobId: string) => void;
  metrics?: BillingMetrics;
  clock?: () => Date;
}

export interface RetornoDetails {
  fileName: string;
  fileSha256: string;
  fileSizeBytes: number;
  fileArtifactId: string;
  bancoHint: string;
  layoutHint: number;
  banco?: string;
  layout?: number;
  convenio?: string;
  nsa?: number;
  dataGeracao?: CalendarDate;
  occurrencesTotal?: number;
  duplicates?: number;
  summary?: { state: number; count: number; valorPagoCents: number; valorLiquidoCents: number }[];
  issues?: { lineNumber: number; severity: number; code: string; message: string }[];
}

const STATE: Record<string, OcorrenciaState> = {
  REGISTERED: OcorrenciaState.REGISTERED,
  REJECTED: OcorrenciaState.REJECTED,
  PAID: OcorrenciaState.PAID,
  PARTIALLY_PAID: OcorrenciaState.PARTIALLY_PAID,
  WRITTEN_OFF: OcorrenciaState.WRITTEN_OFF,
  PROTESTED: OcorrenciaState.PROTESTED,
  CHANGED: OcorrenciaState.CHANGED,
  FEE: OcorrenciaState.FEE,
  UNKNOWN: OcorrenciaState.UNKNOWN,
};

/** DDMMAA or DDMMAAAA from the header. */
function headerDate(s: string | undefined): CalendarDate | undefined {
  if (!s || !/^\d{6}(\d{2})?$/.test(s)) return undefined;
  const day = Number(s.slice(0, 2));
  const month = Number(s.slice(2, 4));
  const year = s.length === 8 ? Number(s.slice(4)) : 2000 + Number(s.slice(4));
  return month >= 1 && month <= 12 && day >= 1 && day <= 31 ? { year, month, day } : undefined;
}

const lineOf = (field: string) => Number(/linha (\d+)/.exec(field)?.[1] ?? 0);

function occurrence(e: EventoRetorno, banco: string): OccurrenceInsert {
  const fp = createHash("sha256").update(e.chaveIdempotencia).digest("hex");
  const state = STATE[e.estado] ?? OcorrenciaState.UNKNOWN;
  const cents = (v: number | undefined) => String(v ?? 0);
  const body: Record<string, unknown> = {
    occurrenceId: `${fp.slice(0, 16)}-${e.linha}`,
    lineNumber: e.linha,
    banco,
    convenio: e.convenio ?? e.conta ?? "",
    nossoNumero: e.nossoNumero ?? "",
    boletoId: e.id?.trim() ?? "",
    seuNumero: e.numeroDocumento?.trim() ?? "",
    state: OcorrenciaState[state] ? `OCORRENCIA_STATE_${OcorrenciaState[state]}` : "OCORRENCIA_STATE_UNKNOWN",
    codigoOcorrencia: e.ocorrencia,
    descricaoOcorrencia: e.descricao,
    motivos: e.motivos,
    valorTituloCents: cents(e.valorCentavos),
    valorPagoCents: cents(e.valorPagoCentavos),
    valorLiquidoCents: cents(e.valorLiquidoCentavos),
    valorTarifaCents: cents(e.tarifaCentavos),
    valorJurosCents: cents(e.jurosCentavos),
    valorDescontoCents: cents(e.descontoCentavos),
    valorAbatimentoCents: cents(e.abatimentoCentavos),
    valorIofCents: cents(e.iofCentavos),
    ...(e.vencimento ? { vencimento: e.vencimento } : {}),
    ...(e.dataOcorrencia ? { dataOcorrencia: e.dataOcorrencia } : {}),
    ...(e.dataCredito ? { dataCredito: e.dataCredito } : {}),
    fingerprint: fp,
    pixPayload: e.pix?.emv ?? "",
    pixLocation: e.pix?.url ?? "",
    pixTxid: e.pix?.txid ?? "",
  };
  return {
    line: e.linha,
    state,
    nossoNumero: (e.nossoNumero ?? "").slice(0, 32),
    boletoId: e.id?.trim() ?? "",
    fingerprintSha256: fp,
    body,
  };
}

export class RetornoWorker {
  private readonly clock: () => Date;
  constructor(private readonly d: RetornoWorkerDeps) {
    this.clock = d.clock ?? (() => new Date());
  }

  handle = async (task: Task): Promise<void | { retryInMs: number }> => {
    if (task.type !== "retorno") return;
    let job = await this.d.jobs.byId(task.jobId);
    if (!job || isFinalJob(job.state)) return;
    if (job.state === JobState.RECEIVED) {
      if ((await this.d.jobs.start(job.id, job.tenant, this.d.tenantMaxRunningJobs)) === "busy") return { retryInMs: 1000 };
      job = (await this.d.jobs.byId(task.jobId))!;
    }
    const details = job.details as unknown as RetornoDetails;
    const bytes = await this.d.artifacts.read(job.tenant, details.fileArtifactId);
    let parsed;
    try {
      parsed = lerRetorno(bytes);
    } catch (e) {
      if (!(e instanceof CobrancaError)) throw e;
      const findings = (e.details?.["errors"] as { line?: number; rule?: string; message?: string }[] | undefined) ?? [];
      const issues = findings.length
        ? findings.slice(0, 100).map((f) => ({
            lineNumber: f.line ?? 0,
            severity: IssueSeverity.ERROR,
            code: f.rule ?? e.code,
            message: f.message ?? e.message,
          }))
        : [{ lineNumber: 0, severity: IssueSeverity.ERROR, code: e.code, message: e.message }];
      return this.finish(job, JobState.FAILED, { ...details, occurrencesTotal: 0, duplicates: 0, summary: [], issues });
    }
    if (details.bancoHint && details.bancoHint !== parsed.banco) {
      return this.finish(job, JobState.FAILED, {
        ...details,
        occurrencesTotal: 0,
        duplicates: 0,
        summary: [],
        issues: [
          {
            lineNumber: 1,
            severity: IssueSeverity.ERROR,
            code: "BANCO_DIVERGENTE",
            message: `the header says bank ${parsed.banco}, the request said ${details.bancoHint}`,
          },
        ],
      });
    }
    await this.d.jobs.transition(job.id, [JobState.VALIDATING], JobState.PROCESSING);
    const occ = parsed.eventos.map((e) => occurrence(e, parsed.banco));
    const duplicates = await this.d.retornos.store(job.tenant, job.id, occ);
    const summary = new Map<number, { state: number; count: number; valorPagoCents: number; valorLiquidoCents: number }>();
    for (const e of parsed.eventos) {
      const st = STATE[e.estado] ?? OcorrenciaState.UNKNOWN;
      const s = summary.get(st) ?? { state: st, count: 0, valorPagoCents: 0, valorLiquidoCents: 0 };
      s.count++;
      s.valorPagoCents += e.valorPagoCentavos ?? 0;
      s.valorLiquidoCents += e.valorLiquidoCentavos ?? 0;
      summary.set(st, s);
    }
    const first = parsed.eventos[0];
    await this.finish(job, JobState.COMPLETED, {
      ...details,
      banco: parsed.banco,
      layout: parsed.layout,
      ...(first?.convenio || first?.conta ? { convenio: first.convenio ?? first.conta } : {}),
      ...(parsed.nsa !== undefined ? { nsa: parsed.nsa } : {}),
      ...(headerDate(parsed.dataArquivo) ? { dataGeracao: headerDate(parsed.dataArquivo) } : {}),
      occurrencesTotal: occ.length,
      duplicates,
      summary: [...summary.values()].sort((a, b) => a.state - b.state),
      issues: parsed.warnings.map((w) => ({
        lineNumber: lineOf(w.field),
        severity: IssueSeverity.WARNING,
        code: w.code,
        message: w.message,
      })),
    });
  };

  onDead = async (): Promise<void> => undefined;

  private async finish(job: JobRow, state: JobState, details: RetornoDetails): Promise<void> {
    const now = this.clock();
    const started = job.startedAt ?? job.createdAt;
    const total = details.occurrencesTotal ?? 0;
    const counts = new Map<ItemState, number>([[ItemState.COMPLETED, total]]);
    const duracaoMs = Math.max(0, now.getTime() - started.getTime());
    const finished: FinishedJob = {
      state,
      counts,
      finishedAt: now,
      duracaoMs,
      processed: total,
    };
    const moved = await this.d.jobs.finish(
      job.id,
      [JobState.VALIDATING, JobState.PROCESSING],
      state,
      { finished_at: now, details: JSON.stringify(details), duracao_ms: duracaoMs, processed_items: total, total_items: total },
      async (c) => this.d.completionEvent?.(c, { ...job, totalItems: total }, finished),
    );
    if (moved) {
      this.d.log.info({ jobId: job.id, state: JobState[state], occurrences: total }, "retorno job finished");
      this.d.metrics?.jobsFinished.inc({ kind: "retorno", state: JobState[state] });
      this.d.onFinished?.(job.id);
    }
  }
}
