// Retorno job RPCs. The file is stored in artifacts first (tenant-level, named by its sha256, so a
// repeated upload is the same artifact), then the job is created; the file's sha256 makes the create
// idempotent per tenant even without a key.
import { create, fromJsonString } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import { CnabLayout, RetornoJobSchema, RetornoOccurrenceSchema, type RetornoJob } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment, JobKind } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { Logger } from "../../../libs/log/logger.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import type { PageTokens } from "../../../libs/rpc/page-token.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import { badRequest, billingError, checkTenant, jobNotFound } from "../errors.js";
import { actingTenant } from "../auth/acting-tenant.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import type { WorkQueue } from "../jobs/queue.js";
import { AlreadyParsed, type RetornoRepo } from "./repo.js";
import { retornoDetailsOf, type RetornoDetails } from "./details.js";
import { ts } from "../jobs/to-proto.js";
import { BANK_RULES_VERSION } from "../versions.js";

export interface RetornoHandlerDeps {
  jobs: JobRepo;
  retornos: RetornoRepo;
  queue: WorkQueue;
  artifacts: ArtifactStore;
  log: Logger;
  inlineMaxBytes: number;
  maxBytes: number;
  pageTokens: PageTokens;
}

const tooLarge = (size: number, max: number, how: string) =>
  billingError(`the file has ${size} bytes, above the limit of ${max} ${how}`, Code.ResourceExhausted, "FILE_TOO_LARGE", {
    max: String(max),
  });

function message(job: JobRow): RetornoJob {
  const d = retornoDetailsOf(job.detailsJson);
  return create(RetornoJobSchema, {
    jobId: job.id,
    tenant: job.tenant,
    state: job.state,
    fileName: d.fileName,
    fileSizeBytes: BigInt(d.fileSizeBytes ?? 0),
    fileSha256: d.fileSha256,
    fileArtifactId: d.fileArtifactId,
    banco: d.banco ?? "",
    layout:
      d.layout === 400 ? CnabLayout.CNAB_LAYOUT_400 : d.layout === 240 ? CnabLayout.CNAB_LAYOUT_240 : CnabLayout.CNAB_LAYOUT_UNSPECIFIED,
    convenio: d.convenio ?? "",
    nsa: d.nsa ?? 0,
    ...(d.dataGeracao ? { dataGeracao: d.dataGeracao } : {}),
    occurrencesTotal: d.occurrencesTotal ?? 0,
    duplicates: d.duplicates ?? 0,
    summary: (d.summary ?? []).map((s) => ({
      state: s.state,
      count: s.count,
      valorPagoCents: BigInt(s.valorPagoCents),
      valorLiquidoCents: BigInt(s.valorLiquidoCents),
    })),
    issues: d.issues ?? [],
    metadata: job.metadata,
    ...(job.duracaoMs !== null
      ? { metrics: { duracaoMs: BigInt(job.duracaoMs), msPorItem: job.processedItems ? job.duracaoMs / job.processedItems : 0 } }
      : {}),
    idempotencyKey: job.idempotencyKey,
    createdAt: ts(job.createdAt),
    finishedAt: ts(job.finishedAt),
  });
}

export function retornoHandlers(d: RetornoHandlerDeps): Partial<ServiceImpl<typeof BillingService>> {
  async function load(tenant: string, jobId: string): Promise<JobRow> {
    checkTenant(tenant);
    if (jobId === "") throw badRequest("job_id is required");
    const job = await d.jobs.get(tenant, jobId);
    if (!job || job.kind !== JobKind.RETORNO) throw jobNotFound(jobId);
    return job;
  }

  return {
    async createRetornoJob(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      if (req.idempotencyKey.length > 255) throw badRequest("idempotency_key is longer than 255 characters");
      if (req.fileName.length > 255) throw badRequest("file_name is longer than 255 characters");
      if (req.banco !== "" && !/^\d{3}$/.test(req.banco)) throw badRequest("banco must be a 3-digit COMPE code");
      // The file's identity: hashed here when inline, from the artifacts service's metadata when stored
      // (no download of up to BILLING_RETORNO_MAX_BYTES just to hash it; the worker reads it once).
      let file: { sha: string; size: number } & ({ bytes: Buffer } | { artifactId: string });
      if (req.source.case === "file") {
        if (req.source.value.length === 0) throw badRequest("the file is empty");
        if (req.source.value.length > d.inlineMaxBytes)
          throw tooLarge(req.source.value.length, d.inlineMaxBytes, "for inline files (upload to artifacts and pass artifact_id)");
        const bytes = Buffer.from(req.source.value);
        file = { sha: createHash("sha256").update(bytes).digest("hex"), size: bytes.length, bytes };
      } else if (req.source.case === "artifactId") {
        let stat;
        try {
          stat = await d.artifacts.stat(tenant, req.source.value);
        } catch (err) {
          if (err instanceof ConnectError && (err.code === Code.NotFound || err.code === Code.InvalidArgument))
            throw badRequest(`unknown artifact ${JSON.stringify(req.source.value.slice(0, 64))}`);
          throw err;
        }
        if (stat.expired)
          throw billingError(`artifact_id ${JSON.stringify(stat.artifactId)} has expired`, Code.FailedPrecondition, "ARTIFACTS_EXPIRED");
        if (stat.sizeBytes === 0) throw badRequest("the file is empty");
        if (stat.sizeBytes > d.maxBytes) throw tooLarge(stat.sizeBytes, d.maxBytes, "for retorno files");
        file = { sha: stat.sha256, size: stat.sizeBytes, artifactId: stat.artifactId };
      } else {
        throw badRequest("file or artifact_id is required");
      }
      const sha = file.sha;
      const environment = req.environment === Environment.UNSPECIFIED ? Environment.PRODUCTION : req.environment;
      // The cheap path for the common replay; the unique key below settles races.
      const known = await d.retornos.jobForFile(tenant, sha);
      if (known && req.idempotencyKey === "") return { job: message((await d.jobs.get(tenant, known))!), idempotentReplay: true };
      const stored =
        "artifactId" in file
          ? { artifactId: file.artifactId }
          : await d.artifacts.put({
              tenant,
              jobId: "",
              name: `retornos/${sha}.ret`,
              contentType: "text/plain",
              data: file.bytes,
            });
      const details: RetornoDetails = {
        fileName: req.fileName,
        fileSha256: sha,
        fileSizeBytes: file.size,
        fileArtifactId: stored.artifactId,
        bancoHint: req.banco,
        layoutHint: req.layout,
      };
      const requestSha256 = createHash("sha256")
        .update(`retorno|${sha}|${req.fileName}|${req.banco}|${req.layout}|${environment}`)
        .digest("hex");
      let created: { jobId: string; replay: boolean };
      try {
        created = await d.jobs.create({
          tenant,
          kind: JobKind.RETORNO,
          environment,
          idempotencyKey: req.idempotencyKey,
          requestSha256,
          requestedBy: req.requestedBy,
          metadata: {
            templateVersion: "",
            bankRulesVersion: BANK_RULES_VERSION,
            banco: req.banco,
            carteira: "",
            convenio: "",
            tenant,
            requestedBy: req.requestedBy,
            environment,
          },
          detailsJson: JSON.stringify(details),
          items: [],
          also: (c, jobId) => d.retornos.claimFile(c, tenant, sha, jobId),
        });
      } catch (err) {
        if (err instanceof AlreadyParsed) return { job: message((await d.jobs.get(tenant, err.jobId))!), idempotentReplay: true };
        throw err;
      }
      // Read before enqueueing: the answer is the job as committed, not a fast worker's later state.
      const answer = { job: message((await d.jobs.get(tenant, created.jobId))!), idempotentReplay: created.replay };
      if (!created.replay)
        await d.queue
          .publish({ type: "retorno", jobId: created.jobId })
          .catch((err: unknown) => d.log.warn({ err, jobId: created.jobId }, "enqueue failed; the reconciler will retry"));
      return answer;
    },

    async getRetornoJob(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      return { job: message(await load(tenant, req.jobId)) };
    },

    async listRetornoOccurrences(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await load(tenant, req.jobId);
      const size = pageSizeOf(req.pageSize, { default: 100, max: 1000 });
      const { state, nossoNumero, boletoId, excludeDuplicates } = req;
      const filter = { tenant: job.tenant, jobId: job.id, state, nossoNumero, boletoId, excludeDuplicates };
      const [after] = d.pageTokens.decode("ListRetornoOccurrences", filter, req.pageToken, ["int"]) ?? [0];
      const rows = await d.retornos.page(job.id, {
        ...(req.state ? { state: req.state } : {}),
        ...(req.nossoNumero ? { nossoNumero: req.nossoNumero } : {}),
        ...(req.boletoId ? { boletoId: req.boletoId } : {}),
        excludeDuplicates: req.excludeDuplicates,
        afterLine: after,
        limit: size + 1,
      });
      const occurrences = rows.slice(0, size).map((b) => fromJsonString(RetornoOccurrenceSchema, b));
      const last = occurrences.at(-1);
      return {
        occurrences,
        nextPageToken: rows.length > size && last ? d.pageTokens.encode("ListRetornoOccurrences", filter, [last.lineNumber]) : "",
      };
    },
  };
}
