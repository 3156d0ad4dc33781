// `billing remessas create|status|download` and `billing retornos upload|occurrences`: CNAB jobs of the
// billing service. Remessa files come down through their signed links, checked against the manifest.
import { readFileSync, mkdirSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { CreateRemessaJobRequestSchema } from "../libs/gen/malha/billing/v1/billing_pb.js";
import {
  CnabLayout,
  OcorrenciaState,
  SubloteState,
  type RemessaJob,
  type RetornoJob,
  type RetornoOccurrence,
  type Sublote,
} from "../libs/gen/malha/billing/v1/cnab_pb.js";
import { JobState } from "../libs/gen/malha/billing/v1/types_pb.js";
import { ArtifactsService } from "../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { billing, enumFlag, follow, readCreateRequest, tenantOf, tenantOption, waitOptions, waitPacing } from "./billing-common.js";
import { downloadVerified } from "./billing-download.js";
import { str, type Command } from "./command.js";
import { CliFailure, EXIT, UsageError } from "./exit-codes.js";
import { allPages, enumName, iso, json, when } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

const money = (cents: bigint | number) => (Number(cents) / 100).toFixed(2);
const layoutName = (l: CnabLayout) => enumName(CnabLayout, l).replace("CNAB_LAYOUT_", "");
const lower = (e: Record<number, string>, v: number) => enumName(e, v).toLowerCase();

// ---------------------------------------------------------------- remessas

function remessaLine(j: RemessaJob): string {
  const files = j.sublotes.filter((s) => s.state === SubloteState.COMPLETED).length;
  const failed = j.sublotes.filter((s) => s.state === SubloteState.FAILED).length;
  const c = j.counters;
  return `${j.jobId}: ${lower(JobState, j.state)}, ${files} of ${j.sublotes.length} files${failed ? `, ${failed} sub-batches failed` : ""}; títulos ${c?.completed ?? 0} written, ${c?.failed ?? 0} refused of ${c?.total ?? 0}`;
}

function subloteRow(s: Sublote) {
  return {
    subloteId: s.subloteId,
    banco: s.key?.banco ?? "",
    layout: layoutName(s.key?.layout ?? CnabLayout.CNAB_LAYOUT_UNSPECIFIED),
    convenio: s.key?.convenio ?? "",
    carteira: s.key?.carteira ?? "",
    pix: s.key?.pix ?? false,
    titulos: s.titulos,
    valorTotal: money(s.valorTotalCents),
    state: enumName(SubloteState, s.state),
    attempts: s.attemptCount,
    nsa: s.file ? s.file.nsa : null,
    file: s.file?.name ?? null,
    sha256: s.file?.sha256 ?? null,
    errors: s.errors.map((e) => ({ code: e.code, field: e.field || null, message: e.message })),
  };
}

function remessaRow(j: RemessaJob) {
  return {
    jobId: j.jobId,
    tenant: j.tenant,
    state: enumName(JobState, j.state),
    layout: layoutName(j.layout),
    counters: { total: j.counters?.total ?? 0, completed: j.counters?.completed ?? 0, failed: j.counters?.failed ?? 0 },
    idempotencyKey: j.idempotencyKey || null,
    createdAt: iso(j.createdAt),
    finishedAt: iso(j.finishedAt),
    sublotes: j.sublotes.map(subloteRow),
  };
}

function sublotesTable(j: RemessaJob): string {
  return table(
    ["sub-batch", "bank", "layout", "convênio", "carteira", "títulos", "total", "state", "NSA", "file / errors"],
    j.sublotes.map((s) => {
      const r = subloteRow(s);
      const errors = r.errors.map((e) => `${e.code}${e.field ? ` (${e.field})` : ""}`).join(", ");
      return [
        r.subloteId,
        r.banco,
        r.layout + (r.pix ? " pix" : ""),
        r.convenio || "-",
        r.carteira || "-",
        String(r.titulos),
        r.valorTotal,
        r.state.toLowerCase(),
        r.nsa === null ? "-" : String(r.nsa),
        r.file ?? (errors || "-"),
      ];
    }),
  );
}

export const billingRemessasCreate: Command = {
  usage: "billing remessas create <file.json> [--idempotency-key <k>] [--environment <e>] [--wait]",
  summary:
    "create a CNAB remessa job from a CreateRemessaJobRequest JSON file and show its sub-batches; --wait follows it to its end, exit 7 if it FAILED",
  options: { ...tenantOption, "idempotency-key": { type: "string" }, environment: { type: "string" }, ...waitOptions },
  positionals: [1, 1],
  async run(ctx) {
    const wait = waitPacing(ctx);
    const req = readCreateRequest(ctx, ctx.positionals[0]!, CreateRemessaJobRequestSchema);
    const client = billing(ctx);
    const res = await client.createRemessaJob(req);
    if (!ctx.json) {
      write(ctx.io.out, `${res.idempotentReplay ? "already created (same key and request)" : "created"}: ${remessaLine(res.job!)}`);
      ctx.io.out.write(sublotesTable(res.job!));
    }
    const job = await follow(
      ctx,
      wait,
      res.job!,
      async () => (await client.getRemessaJob({ tenant: req.tenant, jobId: res.job!.jobId })).job!,
      remessaLine,
    );
    if (ctx.json) write(ctx.io.out, json({ ...remessaRow(job), idempotentReplay: res.idempotentReplay }));
    else if (ctx.values.wait) ctx.io.out.write(sublotesTable(job));
    if (ctx.values.wait && job.state === JobState.FAILED)
      throw new CliFailure(
        `job ${job.jobId} FAILED: no file could be written (\`malha billing remessas status ${job.jobId}\`)`,
        EXIT.RUN_FAILED,
      );
  },
};

export const billingRemessasStatus: Command = {
  usage: "billing remessas status <job>",
  summary: "a remessa job's state and its sub-batches: key, títulos, NSA, file or errors",
  options: tenantOption,
  positionals: [1, 1],
  async run(ctx) {
    const job = (await billing(ctx).getRemessaJob({ tenant: tenantOf(ctx), jobId: ctx.positionals[0]! })).job!;
    if (ctx.json) return write(ctx.io.out, json(remessaRow(job)));
    write(ctx.io.out, remessaLine(job));
    ctx.io.out.write(sublotesTable(job));
  },
};

export const billingRemessasDownload: Command = {
  usage: "billing remessas download <job> [--out <dir>]",
  summary: "download every file of a remessa job to <dir>, each checked against its sha256 and size",
  options: { ...tenantOption, out: { type: "string" } },
  positionals: [1, 1],
  async run(ctx) {
    const jobId = ctx.positionals[0]!;
    const tenant = tenantOf(ctx);
    const client = billing(ctx);
    let expiresAt: Timestamp | undefined;
    const files = await allPages(async (pageToken) => {
      const page = await client.listRemessaFiles({ tenant, jobId, pageSize: 500, pageToken });
      expiresAt = page.expiresAt;
      return { items: page.files, nextPageToken: page.nextPageToken };
    });
    if (files.length === 0)
      throw new CliFailure(`job ${jobId} has no files yet (\`malha billing remessas status ${jobId}\`)`, EXIT.NOT_FOUND);
    const dir = str(ctx.values, "out") ?? ".";
    mkdirSync(dir, { recursive: true });
    const got = [];
    for (const f of files) {
      // The service names files; only their last component, with safe characters, reaches the disk.
      const name = basename(f.name).replace(/[^A-Za-z0-9._-]/g, "_") || `${f.subloteId}.rem`;
      const d = await downloadVerified(
        { downloadUrl: f.artifact?.downloadUrl ?? "", sha256: f.sha256, sizeBytes: f.sizeBytes },
        join(dir, name),
        ctx.targets.timeoutMs,
      );
      got.push({ ...d, nsa: f.nsa, banco: f.key?.banco ?? "", registros: f.registros, titulos: f.titulos });
      if (!ctx.json)
        write(
          ctx.io.out,
          `${d.path}: bank ${f.key?.banco}, NSA ${f.nsa}, ${f.registros} records, ${f.titulos} títulos, sha256 ${d.sha256} (verified)`,
        );
    }
    if (ctx.json) write(ctx.io.out, json({ jobId, files: got, expiresAt: iso(expiresAt) }));
    else write(ctx.io.out, `${got.length} file(s); artifacts expire ${when(expiresAt)}`);
  },
};

// ---------------------------------------------------------------- retornos

/** Files up to this size go inline in the request; larger ones through the artifacts service. */
export const RETORNO_INLINE_BYTES = 4 * 1024 * 1024;

function retornoLine(j: RetornoJob): string {
  const issues = j.issues.length ? `, ${j.issues.length} issue(s)` : "";
  return `${j.jobId}: ${lower(JobState, j.state)}, ${j.fileName || "retorno"} (bank ${j.banco || "?"}, ${layoutName(j.layout)}), ${j.occurrencesTotal} occurrences, ${j.duplicates} duplicates${issues}`;
}

function retornoRow(j: RetornoJob) {
  return {
    jobId: j.jobId,
    state: enumName(JobState, j.state),
    fileName: j.fileName,
    fileSha256: j.fileSha256,
    banco: j.banco,
    layout: layoutName(j.layout),
    convenio: j.convenio || null,
    nsa: j.nsa || null,
    occurrences: j.occurrencesTotal,
    duplicates: j.duplicates,
    summary: j.summary.map((s) => ({
      state: enumName(OcorrenciaState, s.state),
      count: s.count,
      valorPago: money(s.valorPagoCents),
      valorLiquido: money(s.valorLiquidoCents),
    })),
    issues: j.issues.map((i) => ({ line: i.lineNumber, code: i.code, message: i.message })),
  };
}

function retornoSummary(j: RetornoJob): string {
  const rows = j.summary.map((s) => [
    lower(OcorrenciaState, s.state),
    String(s.count),
    money(s.valorPagoCents),
    money(s.valorLiquidoCents),
  ]);
  const issues = j.issues.map((i) => `line ${i.lineNumber}: ${i.code} ${i.message}\n`).join("");
  return (rows.length ? table(["state", "occurrences", "valor pago", "valor líquido"], rows) : "") + issues;
}

export const billingRetornosUpload: Command = {
  usage: "billing retornos upload <file> [--idempotency-key <k>] [--wait]",
  summary:
    "send a bank's CNAB retorno file for parsing (the same file twice is the same job); --wait follows it and prints occurrences per state, exit 7 if it FAILED",
  options: { ...tenantOption, "idempotency-key": { type: "string" }, ...waitOptions },
  positionals: [1, 1],
  async run(ctx) {
    const wait = waitPacing(ctx);
    const path = ctx.positionals[0]!;
    let size: number;
    try {
      size = statSync(path).size;
    } catch (err) {
      throw new UsageError(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
    }
    const tenant = tenantOf(ctx);
    const bytes = readFileSync(path);
    const fileName = basename(path);
    let source: { case: "file"; value: Uint8Array } | { case: "artifactId"; value: string } = { case: "file", value: bytes };
    if (size > RETORNO_INLINE_BYTES) {
      if (tenant === "")
        throw new UsageError(
          `files over ${RETORNO_INLINE_BYTES} bytes go through the artifacts service, which needs --tenant or MALHA_TENANT`,
        );
      // Too large to travel inline: stored first (in chunks), then named by its artifact id.
      const artifacts = ctx.targets.client("artifacts", ArtifactsService);
      const put = await artifacts.putArtifact(
        (async function* () {
          yield {
            part: {
              case: "header" as const,
              value: {
                tenant,
                name: `retornos/upload-${Date.now()}-${fileName.replace(/[^A-Za-z0-9._-]/g, "_")}`,
                contentType: "text/plain",
              },
            },
          };
          for (let i = 0; i < bytes.length; i += 1 << 20)
            yield { part: { case: "chunk" as const, value: bytes.subarray(i, i + (1 << 20)) } };
        })(),
      );
      source = { case: "artifactId", value: put.artifact!.id };
    }
    const client = billing(ctx);
    const res = await client.createRetornoJob({
      tenant,
      idempotencyKey: str(ctx.values, "idempotency-key") ?? "",
      requestedBy: ctx.io.env.USER ?? "malha-cli",
      fileName,
      source,
    });
    if (!ctx.json) write(ctx.io.out, `${res.idempotentReplay ? "already received (same file)" : "received"}: ${retornoLine(res.job!)}`);
    const job = await follow(
      ctx,
      wait,
      res.job!,
      async () => (await client.getRetornoJob({ tenant, jobId: res.job!.jobId })).job!,
      retornoLine,
    );
    if (ctx.json) write(ctx.io.out, json({ ...retornoRow(job), idempotentReplay: res.idempotentReplay }));
    else if (ctx.values.wait) ctx.io.out.write(retornoSummary(job));
    if (ctx.values.wait && job.state === JobState.FAILED)
      throw new CliFailure(`job ${job.jobId} FAILED: the file could not be read (issues above)`, EXIT.RUN_FAILED);
  },
};

function occurrenceRow(o: RetornoOccurrence) {
  return {
    line: o.lineNumber,
    banco: o.banco,
    nossoNumero: o.nossoNumero,
    boletoId: o.boletoId || null,
    codigo: o.codigoOcorrencia,
    descricao: o.descricaoOcorrencia,
    state: enumName(OcorrenciaState, o.state),
    motivos: o.motivos,
    valorPago: money(o.valorPagoCents),
    valorLiquido: money(o.valorLiquidoCents),
    dataOcorrencia: o.dataOcorrencia
      ? `${o.dataOcorrencia.year}-${String(o.dataOcorrencia.month).padStart(2, "0")}-${String(o.dataOcorrencia.day).padStart(2, "0")}`
      : null,
    duplicate: o.duplicate,
  };
}

export const billingRetornosOccurrences: Command = {
  usage: "billing retornos occurrences <job> [--state <s>]",
  summary:
    "a retorno job's occurrences in line order; --state registered|rejected|paid|partially-paid|written-off|protested|changed|fee|unknown",
  options: { ...tenantOption, state: { type: "string" } },
  positionals: [1, 1],
  async run(ctx) {
    const state = enumFlag(ctx, "state", OcorrenciaState) ?? OcorrenciaState.UNSPECIFIED;
    const tenant = tenantOf(ctx);
    const client = billing(ctx);
    const all = await allPages(async (pageToken) => {
      const page = await client.listRetornoOccurrences({ tenant, jobId: ctx.positionals[0]!, state, pageSize: 1000, pageToken });
      return { items: page.occurrences, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) return write(ctx.io.out, json(all.map(occurrenceRow)));
    ctx.io.out.write(
      table(
        ["line", "nosso número", "boleto", "code", "state", "valor pago", "date", ""],
        all.map((o) => {
          const r = occurrenceRow(o);
          return [
            String(r.line),
            r.nossoNumero,
            r.boletoId ?? "-",
            r.codigo,
            r.state.toLowerCase(),
            r.valorPago,
            r.dataOcorrencia ?? "-",
            r.duplicate ? "duplicate" : "",
          ];
        }),
      ),
    );
  },
};
