// The completion event of a job, as stored in the outbox and sent unchanged on every attempt.
import { create, toJsonString } from "@bufbuild/protobuf";
import type { PoolConnection } from "mysql2/promise";
import { JobKind, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { WebhookEventSchema } from "../../../libs/gen/malha/billing/v1/webhook_pb.js";
import type { FinishedJob } from "../jobs/engine.js";
import type { JobRow } from "../jobs/job-repo.js";
import { countersOf, ts } from "../jobs/to-proto.js";
import { deliveryId, type WebhookRepo } from "./repo.js";

const KIND_SEGMENT: Partial<Record<JobKind, string>> = {
  [JobKind.BOLETO]: "boletos",
  [JobKind.REMESSA]: "cnab_remessas",
  [JobKind.RETORNO]: "cnab_retornos",
};

/** "job.boletos.partially_completed" and the like (seed 003). */
export const eventType = (kind: JobKind, state: JobState) =>
  `job.${KIND_SEGMENT[kind] ?? "unknown"}.${(JobState[state] ?? "unknown").toLowerCase()}`;

export function completionEventWriter(repo: WebhookRepo, maxAttempts: number) {
  return async (c: PoolConnection, job: JobRow, f: FinishedJob): Promise<void> => {
    const id = deliveryId(job.id, job.retryRounds);
    const type = eventType(job.kind, f.state);
    const event = create(WebhookEventSchema, {
      id,
      type,
      createdAt: ts(f.finishedAt),
      tenant: job.tenant,
      kind: job.kind,
      jobId: job.id,
      state: f.state,
      counters: countersOf(job.totalItems, f.counts),
      metrics: { duracaoMs: BigInt(f.duracaoMs), msPorItem: f.processed > 0 ? f.duracaoMs / f.processed : 0 },
      environment: job.environment,
      zipArtifactId: f.manifest?.zip?.artifactId ?? "",
      artifactsExpiresAt: ts(f.artifactsExpiresAt),
    });
    await repo.enqueue(c, {
      id,
      tenant: job.tenant,
      jobId: job.id,
      round: job.retryRounds,
      eventType: type,
      body: toJsonString(WebhookEventSchema, event),
      attemptLimit: maxAttempts,
      now: f.finishedAt,
    });
  };
}
