// Stored rows → contract messages. Links are signed per response and never stored.
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import {
  BoletoJobItemSchema,
  BoletoJobSchema,
  BoletoResultSchema,
  type BoletoJob,
  type BoletoJobItem,
  type BoletoResult,
} from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import {
  ArtifactRefSchema,
  ItemState,
  JobCountersSchema,
  type ArtifactRef,
  type JobCounters,
} from "../../../libs/gen/malha/billing/v1/types_pb.js";
import type { ItemRow } from "./item-repo.js";
import type { JobRow } from "./job-repo.js";
import type { StoredArtifact, StoredError, StoredResult } from "./stored.js";

export const ts = (d: Date | null | undefined) => (d ? timestampFromDate(d) : undefined);

export function countersOf(total: number, counts: Map<ItemState, number>): JobCounters {
  const n = (s: ItemState) => counts.get(s) ?? 0;
  return create(JobCountersSchema, {
    total,
    pending: n(ItemState.PENDING),
    inProgress: n(ItemState.VALIDATING) + n(ItemState.RENDERING),
    completed: n(ItemState.COMPLETED),
    failed: n(ItemState.FAILED),
    skipped: n(ItemState.SKIPPED),
  });
}

export function boletoJobOf(job: JobRow, counts: Map<ItemState, number>): BoletoJob {
  const done = job.duracaoMs !== null;
  return create(BoletoJobSchema, {
    jobId: job.id,
    tenant: job.tenant,
    state: job.state,
    counters: countersOf(job.totalItems, counts),
    metadata: job.metadata,
    ...(done
      ? { metrics: { duracaoMs: BigInt(job.duracaoMs!), msPorItem: job.processedItems ? job.duracaoMs! / job.processedItems : 0 } }
      : {}),
    idempotencyKey: job.idempotencyKey,
    createdAt: ts(job.createdAt),
    startedAt: ts(job.startedAt),
    finishedAt: ts(job.finishedAt),
    updatedAt: ts(job.updatedAt),
    retryRounds: job.retryRounds,
    artifactsExpiresAt: ts(job.artifactsExpiresAt),
  });
}

export function artifactRefOf(
  a: StoredArtifact,
  link?: { url: string; expiresAt: Date | undefined },
  expiresAt?: Date | null,
): ArtifactRef {
  return create(ArtifactRefSchema, {
    artifactId: a.artifactId,
    name: a.name,
    contentType: a.contentType,
    sizeBytes: BigInt(a.sizeBytes),
    sha256: a.sha256,
    downloadUrl: link?.url ?? "",
    downloadUrlExpiresAt: ts(link?.expiresAt),
    expiresAt: ts(expiresAt),
  });
}

export function resultOf(r: StoredResult, pdf?: ArtifactRef): BoletoResult {
  return create(BoletoResultSchema, {
    nossoNumero: r.nossoNumero,
    nossoNumeroDv: r.nossoNumeroDv,
    nossoNumeroFormatado: r.nossoNumeroFormatado,
    linhaDigitavel: r.linhaDigitavel,
    linhaDigitavelFormatada: r.linhaDigitavelFormatada,
    codigoBarras: r.codigoBarras,
    pixPayload: r.pixPayload,
    ...(pdf ? { pdf } : r.pdf ? { pdf: artifactRefOf(r.pdf) } : {}),
  });
}

export const errorsOf = (errors: readonly StoredError[]) => errors.map((e) => ({ ...e }));

export function itemOf(r: ItemRow): BoletoJobItem {
  return create(BoletoJobItemSchema, {
    itemId: r.itemId,
    position: r.position,
    state: r.state,
    ...(r.result && r.state === ItemState.COMPLETED ? { result: resultOf(r.result) } : {}),
    errors: r.state === ItemState.COMPLETED ? [] : errorsOf(r.errors),
    attemptCount: r.attemptCount,
    createdAt: ts(r.createdAt),
    updatedAt: ts(r.updatedAt),
  });
}
