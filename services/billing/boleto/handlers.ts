// BillingService handlers for boleto jobs. Create validates the envelope only, persists and enqueues;
// reads are scoped by tenant (another tenant's job is NOT_FOUND, like a missing one).
import { create, fromJsonString, toBinary, toJsonString } from "@bufbuild/protobuf";
import { createHash } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { ArtifactExpiredSchema } from "../../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { BoletoSchema, ItemAttemptSchema, ManifestItemSchema, type Boleto } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { CreateBoletoJobRequestSchema, JobSummarySchema, type BillingService } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import { Environment, ItemState, JobKind } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { ErrorInfoSchema } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../../libs/log/logger.js";
import { LINK_TTL } from "../../../libs/artifacts/client.js";
import { durationMsOf } from "../../../libs/rpc/duration.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import type { PageTokens } from "../../../libs/rpc/page-token.js";
import type { ArtifactStore } from "../jobs/artifacts-client.js";
import {
  badRequest,
  BILLING_ERROR_DOMAIN,
  checkTenant,
  itemNotFound,
  jobNotFinished,
  jobNotFound,
  noItems,
  tooManyItems,
} from "../errors.js";
import { actingTenant } from "../auth/acting-tenant.js";
import { assignItemIds } from "../jobs/item-ids.js";
import { allItems } from "../jobs/round-artifacts.js";
import type { ItemRepo, ItemRow } from "../jobs/item-repo.js";
import type { JobRepo, JobRow } from "../jobs/job-repo.js";
import type { WorkQueue } from "../jobs/queue.js";
import { isFinalJob, jobStateName } from "../jobs/states.js";
import { artifactRefOf, boletoJobOf, errorsOf, itemOf, resultOf, ts } from "../jobs/to-proto.js";
import { BANK_RULES_VERSION, TEMPLATE_VERSION } from "../versions.js";

export interface HandlerDeps {
  jobs: JobRepo;
  items: ItemRepo;
  queue: WorkQueue;
  artifacts: ArtifactStore;
  log: Logger;
  maxItems: number;
  artifactTtlDays: number;
  pageTokens: PageTokens;
  clock?: () => Date;
}

/** Same bank data on every item → recorded; differing → empty (JobMetadata's rule). */
function shared(items: readonly Boleto[], pick: (b: Boleto) => string): string {
  const first = pick(items[0]!);
  return items.every((b) => pick(b) === first) ? first : "";
}

/** "Same request" compares everything but requested_by; deterministic binary encoding of the rest. */
function requestSha256(kind: string, req: Parameters<typeof toBinary<typeof CreateBoletoJobRequestSchema>>[1]): string {
  const copy = create(CreateBoletoJobRequestSchema, { ...req, requestedBy: "" });
  return createHash("sha256").update(kind).update(toBinary(CreateBoletoJobRequestSchema, copy)).digest("hex");
}

export function createHandlers(d: HandlerDeps): Partial<ServiceImpl<typeof BillingService>> {
  const clock = d.clock ?? (() => new Date());

  async function loadJob(tenant: string, jobId: string): Promise<JobRow> {
    checkTenant(tenant);
    if (jobId === "") throw badRequest("job_id is required");
    const job = await d.jobs.get(tenant, jobId);
    if (!job || job.kind !== JobKind.BOLETO) throw jobNotFound(jobId);
    return job;
  }

  const jobMessage = async (job: JobRow) => boletoJobOf(job, await d.items.counts(job.id));

  return {
    async createBoletoJob(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      if (req.environment === Environment.UNSPECIFIED) throw badRequest("environment is required (PRODUCTION or SANDBOX)");
      if (req.items.length === 0) throw noItems();
      if (req.items.length > d.maxItems) throw tooManyItems(req.items.length, d.maxItems);
      if (req.idempotencyKey.length > 255) throw badRequest("idempotency_key is longer than 255 characters");
      if (req.requestedBy.length > 255) throw badRequest("requested_by is longer than 255 characters");
      const ids = assignItemIds(req.items);
      const metadata = {
        templateVersion: TEMPLATE_VERSION,
        bankRulesVersion: BANK_RULES_VERSION,
        banco: shared(req.items, (b) => b.conta?.banco ?? ""),
        carteira: shared(req.items, (b) => b.conta?.carteira ?? ""),
        convenio: shared(req.items, (b) => b.conta?.convenio ?? ""),
        tenant,
        requestedBy: req.requestedBy,
        environment: req.environment,
      };
      const { jobId, replay } = await d.jobs.create({
        tenant,
        kind: JobKind.BOLETO,
        environment: req.environment,
        idempotencyKey: req.idempotencyKey,
        requestSha256: requestSha256("boleto", { ...req, tenant }),
        requestedBy: req.requestedBy,
        metadata,
        items: ids.map((a, i) => ({
          position: a.position,
          itemId: a.itemId,
          state: a.skipped ? ItemState.SKIPPED : ItemState.PENDING,
          inputJson: toJsonString(BoletoSchema, req.items[i]!),
          errorsJson: a.preError ? JSON.stringify([{ ...a.preError, retryable: false }]) : null,
        })),
      });
      // Read before enqueueing: the answer is the job as committed, not whatever state a fast worker has
      // already moved it to.
      const job = await d.jobs.get(tenant, jobId);
      if (!job) throw new Error("created job not found");
      const answer = { job: await jobMessage(job), idempotentReplay: replay };
      if (!replay) {
        // The job is committed: if NATS is down now, the reconciler enqueues it later.
        await d.queue
          .publish({ type: "job", jobId, round: 0 })
          .catch((err: unknown) => d.log.warn({ err, jobId }, "enqueue failed; the reconciler will retry"));
      }
      return answer;
    },

    async getBoletoJob(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      return { job: await jobMessage(await loadJob(tenant, req.jobId)) };
    },

    async listBoletoJobItems(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await loadJob(tenant, req.jobId);
      const size = pageSizeOf(req.pageSize);
      const filter = { tenant: job.tenant, jobId: job.id, state: req.state };
      const [after] = d.pageTokens.decode("ListBoletoJobItems", filter, req.pageToken, ["int"]) ?? [0];
      const rows = await d.items.page(job.id, { ...(req.state ? { state: req.state } : {}), afterPosition: after, limit: size + 1 });
      const page = rows.slice(0, size);
      return {
        items: page.map(itemOf),
        nextPageToken: rows.length > size ? d.pageTokens.encode("ListBoletoJobItems", filter, [page.at(-1)!.position]) : "",
      };
    },

    async getBoletoJobItem(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await loadJob(tenant, req.jobId);
      if (req.itemId === "") throw badRequest("item_id is required");
      const row = await d.items.byItemId(job.id, req.itemId);
      if (!row) throw itemNotFound(job.id, req.itemId);
      const ttl = durationMsOf("link_ttl", req.linkTtl, LINK_TTL);
      const signed = async (r: NonNullable<typeof row.result>) => {
        if (!r.pdf) return resultOf(r);
        const link = await d.artifacts.link(job.tenant, r.pdf.artifactId, ttl).catch(() => undefined);
        return resultOf(r, artifactRefOf(r.pdf, link, job.artifactsExpiresAt));
      };
      const item = itemOf(row);
      item.input = fromJsonString(BoletoSchema, row.inputJson);
      if (row.result && row.state === ItemState.COMPLETED) item.result = await signed(row.result);
      const attempts = await d.items.attempts(job.id, row.position);
      item.attempts = attempts.map((a) =>
        create(ItemAttemptSchema, {
          number: a.number,
          state: a.state,
          startedAt: ts(a.startedAt),
          finishedAt: ts(a.finishedAt),
          errors: errorsOf(a.errors),
          ...(a.result ? { result: resultOf(a.result) } : {}),
        }),
      );
      return { item };
    },

    async getBoletoJobArtifacts(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await loadJob(tenant, req.jobId);
      if (!isFinalJob(job.state) || !job.manifest) throw jobNotFinished(job.id, jobStateName(job.state));
      const now = clock();
      if (job.artifactsExpiresAt && job.artifactsExpiresAt.getTime() <= now.getTime()) {
        const id = job.manifest.manifestJson.artifactId;
        throw new ConnectError(
          `the artifacts of job ${job.id} expired at ${job.artifactsExpiresAt.toISOString()}`,
          Code.FailedPrecondition,
          undefined,
          [
            {
              desc: ErrorInfoSchema,
              value: {
                reason: "ARTIFACTS_EXPIRED",
                domain: BILLING_ERROR_DOMAIN,
                metadata: { job_id: job.id, expired_at: job.artifactsExpiresAt.toISOString() },
              },
            },
            { desc: ArtifactExpiredSchema, value: { artifactId: id, expiredAt: ts(job.artifactsExpiresAt) } },
          ] as never,
        );
      }
      const ttl = Math.min(
        durationMsOf("link_ttl", req.linkTtl, LINK_TTL),
        job.artifactsExpiresAt ? job.artifactsExpiresAt.getTime() - now.getTime() : Infinity,
      );
      const rows = await allItems(d.items, job.id);
      const pdfOf = (r: ItemRow) => (r.state === ItemState.COMPLETED ? r.result?.pdf : undefined);
      const { zip, manifestJson, errorsJson } = job.manifest;
      const refs = [...rows.flatMap((r) => pdfOf(r) ?? []), ...(zip ? [zip] : []), manifestJson, errorsJson];
      // One call signs the whole manifest's links instead of one round trip per item.
      const links = await d.artifacts.links(
        job.tenant,
        refs.map((a) => a.artifactId),
        ttl,
      );
      const ref = (a: Parameters<typeof artifactRefOf>[0]) => artifactRefOf(a, links.get(a.artifactId), job.artifactsExpiresAt);
      const items = rows.map((r) => {
        const pdf = pdfOf(r);
        return create(ManifestItemSchema, {
          itemId: r.itemId,
          state: r.state,
          ...(pdf ? { pdf: ref(pdf) } : {}),
          errorCodes: r.state === ItemState.COMPLETED ? [] : r.errors.map((e) => e.code),
        });
      });
      return {
        items,
        ...(zip ? { zip: ref(zip) } : {}),
        manifestJson: ref(manifestJson),
        errorsJson: ref(errorsJson),
        expiresAt: ts(job.artifactsExpiresAt),
        retentionDays: d.artifactTtlDays,
      };
    },

    async retryFailedItems(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const job = await loadJob(tenant, req.jobId);
      if (!isFinalJob(job.state)) throw jobNotFinished(job.id, jobStateName(job.state));
      const named = new Set(req.itemIds);
      const positions: number[] = [];
      const skipped: string[] = [];
      const rows = await allItems(d.items, job.id);
      const byId = new Map(rows.map((r) => [r.itemId, r] as const));
      for (const id of named) if (!byId.has(id)) throw itemNotFound(job.id, id);
      for (const r of rows) {
        if (named.size > 0 && !named.has(r.itemId)) continue;
        const retryable = r.errors.length > 0 && r.errors.every((e) => e.retryable);
        if (r.state === ItemState.FAILED && (retryable || req.includeNonRetryable)) positions.push(r.position);
        else if (named.has(r.itemId)) skipped.push(r.itemId);
      }
      if (positions.length === 0) return { job: await jobMessage(job), requeued: 0, skippedItemIds: skipped };
      const moved = await d.jobs.startRetryRound(job.id, job.state, job.retryRounds);
      if (!moved) throw jobNotFinished(job.id, "changing state");
      const requeued = await d.items.requeueFailed(job.id, positions);
      const answer = await jobMessage((await d.jobs.get(job.tenant, job.id))!);
      for (const r of requeued) await d.queue.publish({ type: "item", jobId: job.id, position: r.position, attempt: r.attempt });
      // With every named item taken by a concurrent retry, the new round still has to finish.
      if (requeued.length === 0) await d.queue.publish({ type: "finalize", jobId: job.id, round: job.retryRounds + 1 });
      d.log.info({ jobId: job.id, requeued: requeued.length, requestedBy: req.requestedBy }, "failed items re-queued");
      return { job: answer, requeued: requeued.length, skippedItemIds: skipped };
    },

    async listJobs(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const size = pageSizeOf(req.pageSize);
      const { kind, state, created, jobId, idempotencyKey, itemId } = req;
      const filter = { tenant, kind, state, created, jobId, idempotencyKey, itemId };
      const [before] = d.pageTokens.decode("ListJobs", filter, req.pageToken, ["string"]) ?? [];
      const from = req.created?.start ? timestampDate(req.created.start) : undefined;
      const to = req.created?.end ? timestampDate(req.created.end) : undefined;
      const rows = await d.jobs.list(tenant, {
        ...(req.kind ? { kind: req.kind } : {}),
        ...(req.state ? { state: req.state } : {}),
        ...(before ? { before } : {}),
        ...(from ? { from } : {}),
        ...(to ? { to } : {}),
        ...(req.jobId ? { jobId: req.jobId } : {}),
        ...(req.idempotencyKey ? { idempotencyKey: req.idempotencyKey } : {}),
        ...(req.itemId ? { itemId: req.itemId } : {}),
        limit: size + 1,
      });
      const page = rows.slice(0, size);
      const jobs = [];
      for (const j of page) {
        jobs.push(
          create(JobSummarySchema, {
            jobId: j.id,
            kind: j.kind,
            state: j.state,
            // Retorno jobs count occurrences, not items.
            counters:
              j.kind === JobKind.RETORNO
                ? { total: j.totalItems, completed: j.totalItems }
                : boletoJobOf(j, await d.items.counts(j.id)).counters,
            idempotencyKey: j.idempotencyKey,
            requestedBy: j.requestedBy,
            environment: j.environment,
            createdAt: ts(j.createdAt),
            finishedAt: ts(j.finishedAt),
          }),
        );
      }
      return { jobs, nextPageToken: rows.length > size ? d.pageTokens.encode("ListJobs", filter, [page.at(-1)!.id]) : "" };
    },

    async countJobs(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const from = req.created?.start ? timestampDate(req.created.start) : undefined;
      const to = req.created?.end ? timestampDate(req.created.end) : undefined;
      const counts = await d.jobs.countByState(tenant, { ...(from ? { from } : {}), ...(to ? { to } : {}) });
      return { counts };
    },
  };
}
