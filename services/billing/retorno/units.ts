// The single unit of a retorno job is its file: the task reads the stored file, parses it with
// libs/cobranca (canonical states, idempotency keys), stores the occurrences and concludes the job with
// the header, per-state summary and issues in its details. An unreadable file fails the job (nothing
// could be produced), with the checker's findings. The lifecycle around it is the job engine's.
import type { JsonObject } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { CobrancaError, lerRetorno, type CalendarDate, type EventoRetorno } from "../../../libs/cobranca/index.js";
import { IssueSeverity, OcorrenciaState } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { ItemState, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import type { Conclusion, JobUnits, UnitOutcome, UnitTask } from "../jobs/engine.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import { retornoDetailsOf, type RetornoDetails, type RetornoSummary } from "./details.js";
import type { OccurrenceInsert, RetornoRepo } from "./repo.js";

export interface RetornoUnitsDeps {
  jobs: JobRepo;
  retornos: RetornoRepo;
  artifacts: ArtifactStore;
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

const dateJson = (d: CalendarDate): JsonObject => ({ year: d.year, month: d.month, day: d.day });

const lineOf = (field: string) => Number(/linha (\d+)/.exec(field)?.[1] ?? 0);

function occurrence(e: EventoRetorno, banco: string): OccurrenceInsert {
  const fp = createHash("sha256").update(e.chaveIdempotencia).digest("hex");
  const state = STATE[e.estado] ?? OcorrenciaState.UNKNOWN;
  const cents = (v: number | undefined) => String(v ?? 0);
  const body: JsonObject = {
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
    motivos: [...e.motivos],
    valorTituloCents: cents(e.valorCentavos),
    valorPagoCents: cents(e.valorPagoCentavos),
    valorLiquidoCents: cents(e.valorLiquidoCentavos),
    valorTarifaCents: cents(e.tarifaCentavos),
    valorJurosCents: cents(e.jurosCentavos),
    valorDescontoCents: cents(e.descontoCentavos),
    valorAbatimentoCents: cents(e.abatimentoCentavos),
    valorIofCents: cents(e.iofCentavos),
    ...(e.vencimento ? { vencimento: dateJson(e.vencimento) } : {}),
    ...(e.dataOcorrencia ? { dataOcorrencia: dateJson(e.dataOcorrencia) } : {}),
    ...(e.dataCredito ? { dataCredito: dateJson(e.dataCredito) } : {}),
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

/** The job's conclusion from the file's outcome: its occurrences are the job's items. */
function concluded(details: RetornoDetails, failed: boolean): UnitOutcome {
  const total = details.occurrencesTotal ?? 0;
  const c: Conclusion = {
    produced: total,
    failed,
    counts: new Map<ItemState, number>([[ItemState.COMPLETED, total]]),
    processed: total,
    detailsJson: JSON.stringify(details),
    totalItems: total,
    summary: { occurrences: total },
  };
  return { concluded: c };
}

export class RetornoUnits implements JobUnits {
  readonly kind = "retorno";
  readonly singleUnit = true;
  constructor(private readonly d: RetornoUnitsDeps) {}

  async openUnits(job: JobRow): Promise<UnitTask[]> {
    return [{ type: "retorno", jobId: job.id }];
  }

  /** The file is the job's only unit, and its outcome concludes the job directly. */
  async settled(): Promise<boolean> {
    return false;
  }

  async unitDead(): Promise<boolean> {
    return false;
  }

  async conclude(): Promise<Conclusion> {
    throw new Error("a retorno job concludes with its file's unit");
  }

  async runUnit(job: JobRow, task: UnitTask): Promise<UnitOutcome> {
    if (task.type !== "retorno") return "held";
    const details = retornoDetailsOf(job.detailsJson);
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
      return concluded({ ...details, occurrencesTotal: 0, duplicates: 0, summary: [], issues }, true);
    }
    if (details.bancoHint && details.bancoHint !== parsed.banco) {
      return concluded(
        {
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
        },
        true,
      );
    }
    await this.d.jobs.transition(job.id, [JobState.VALIDATING], JobState.PROCESSING);
    const occ = parsed.eventos.map((e) => occurrence(e, parsed.banco));
    const duplicates = await this.d.retornos.store(job.tenant, job.id, occ);
    const summary = new Map<number, RetornoSummary>();
    for (const e of parsed.eventos) {
      const st = STATE[e.estado] ?? OcorrenciaState.UNKNOWN;
      const s = summary.get(st) ?? { state: st, count: 0, valorPagoCents: 0, valorLiquidoCents: 0 };
      s.count++;
      s.valorPagoCents += e.valorPagoCentavos ?? 0;
      s.valorLiquidoCents += e.valorLiquidoCentavos ?? 0;
      summary.set(st, s);
    }
    const first = parsed.eventos[0];
    return concluded(
      {
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
      },
      false,
    );
  }
}
