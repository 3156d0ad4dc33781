// What every caller of the artifacts service shares: the header + chunks upload stream (whole buffers or
// streamed content of unknown size), signed links, and one reading of its errors (transport trouble is
// transient; a refusal is the caller's bug or a real conflict).
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { Artifact, ArtifactsService, PutArtifactRequest } from "../gen/malha/artifacts/v1/artifacts_pb.js";
import { durationOfMs, type DurationRule } from "../rpc/duration.js";

/** Chunk size of uploads (the service takes up to 1 MiB per message). */
export const UPLOAD_CHUNK = 256 * 1024;

export class ArtifactsUnavailable extends Error {
  override name = "ArtifactsUnavailable";
}

export interface UploadHeader {
  tenant: string;
  jobId: string;
  name: string;
  contentType: string;
  expiresAt?: Date;
  /** Known for whole buffers; the service then refuses a different size (DATA_LOSS). */
  expectedSizeBytes?: number;
}

export type UploadPart = { part: PutArtifactRequest["part"] | { case: "header"; value: Record<string, unknown> } };

export function headerPart(h: UploadHeader): UploadPart {
  const expiry = h.expiresAt ? { case: "expiresAt", value: timestampFromDate(h.expiresAt) } : { case: undefined };
  return {
    part: {
      case: "header",
      value: {
        tenant: h.tenant,
        name: h.name,
        contentType: h.contentType,
        jobId: h.jobId,
        expiry,
        ...(h.expectedSizeBytes !== undefined ? { expectedSizeBytes: BigInt(h.expectedSizeBytes) } : {}),
      },
    },
  };
}

/** The messages of one whole-buffer upload. */
export function* bufferParts(h: Omit<UploadHeader, "expectedSizeBytes">, data: Uint8Array): Iterable<UploadPart> {
  yield headerPart({ ...h, expectedSizeBytes: data.length });
  for (let o = 0; o < data.length; o += UPLOAD_CHUNK) yield { part: { case: "chunk", value: data.subarray(o, o + UPLOAD_CHUNK) } };
}

/**
 * Uploads content produced while it is sent (a zip written entry by entry): pieces are gathered into
 * chunks of UPLOAD_CHUNK bytes, and the producer is only asked for more as HTTP/2 flow control lets the
 * previous chunk go, so memory stays at a few chunks whatever the size.
 */
export async function putStreamed(
  client: Client<typeof ArtifactsService>,
  h: Omit<UploadHeader, "expectedSizeBytes">,
  content: AsyncIterable<Uint8Array>,
  /** The whole upload's deadline: as long as producing the content may take, not a single call's. */
  opts: { timeoutMs?: number } = {},
): Promise<Artifact> {
  async function* parts(): AsyncIterable<UploadPart> {
    yield headerPart(h);
    let pending: Uint8Array[] = [];
    let size = 0;
    for await (const piece of content) {
      pending.push(piece);
      size += piece.length;
      if (size < UPLOAD_CHUNK) continue;
      yield { part: { case: "chunk", value: Buffer.concat(pending) } };
      pending = [];
      size = 0;
    }
    if (size > 0) yield { part: { case: "chunk", value: Buffer.concat(pending) } };
  }
  const res = await artifactsCall(() =>
    client.putArtifact(parts() as AsyncIterable<PutArtifactRequest>, opts.timeoutMs !== undefined ? { timeoutMs: opts.timeoutMs } : {}),
  );
  if (!res.artifact) throw new Error("artifacts answered a put without an artifact");
  return res.artifact;
}

export interface SignedLink {
  url: string;
  expiresAt: Date | undefined;
}

export async function signLink(client: Client<typeof ArtifactsService>, tenant: string, id: string, ttlMs: number): Promise<SignedLink> {
  const res = await artifactsCall(() => client.createDownloadLink({ tenant, id, ttl: ttlOf(ttlMs) }));
  return { url: res.url, expiresAt: dateOf(res.expiresAt) };
}

/** Lifetime of a signed link as CreateDownloadLink(s) takes it: absent = 15 minutes, at most 7 days. */
export const LINK_TTL: DurationRule = { defaultMs: 15 * 60_000, maxMs: 7 * 86_400_000 };

/** At least a second: a link for an artifact about to expire is still asked for (and answered ARTIFACT_EXPIRED). */
export const ttlOf = (ttlMs: number) => durationOfMs(Math.max(1000, Math.floor(ttlMs)));
export const dateOf = (t: Timestamp | undefined) => (t ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)) : undefined);

/** Transport trouble becomes ArtifactsUnavailable (retry later); a refusal from artifacts stays as it is. */
export async function artifactsCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    const ce = ConnectError.from(err);
    if ([Code.Unavailable, Code.DeadlineExceeded, Code.Canceled, Code.ResourceExhausted, Code.Unknown].includes(ce.code)) {
      throw new ArtifactsUnavailable(`artifacts unavailable: ${ce.message}`);
    }
    throw ce;
  }
}
