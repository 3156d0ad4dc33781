// The upload pipeline: header, then chunks hashed and counted as they are written to an invisible temp
// upload; checks; publish under a fresh key; one INSERT makes it visible. Every refusal aborts the upload
// so that nothing is stored, and a process killed midway leaves only a temp file the sweep removes.
import { outcomeUnknown } from "../../libs/db/tx.js";
import { createHash, randomBytes } from "node:crypto";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { ArtifactHeader, PutArtifactRequest } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { durationMsOf } from "../../libs/rpc/duration.js";
import { DAY_MS } from "./config.js";
import { artifactExpired, badRequest, checksumMismatch, nameTaken, sizeMismatch, storageFull, tooLarge, unavailable } from "./errors.js";
import { isExpired, type ArtifactMetadataStore, type ArtifactRecord } from "./metadata.js";
import { checkContentType, checkJobId, checkName, checkTenant } from "./names.js";
import { StorageFullError, type BlobStore, type BlobWriter } from "./storage/blob-store.js";

/** The contract's largest chunk; bigger ones are refused so that memory per upload stays bounded. */
export const MAX_CHUNK_BYTES = 1024 * 1024;
/** Upper bound for any expiry a caller may ask for (and far inside DATETIME's range). */
export const MAX_EXPIRY_MS = 3650 * DAY_MS;

export interface PutDeps {
  blobs: BlobStore;
  meta: ArtifactMetadataStore;
  maxBytes: number;
  defaultTtlMs: number;
  now?: () => Date;
}

export interface PutResult {
  record: ArtifactRecord;
  created: boolean;
}

interface Checked {
  tenant: string;
  jobId: string;
  name: string;
  contentType: string;
  expectedSha256?: string;
  expectedSize?: bigint;
  /** Absolute expiry, or a TTL counted from upload completion. */
  expiry: { at: Date } | { ttlMs: number };
}

export const newArtifactId = () => `art_${randomBytes(16).toString("hex")}`;

function checkHeader(h: ArtifactHeader, deps: PutDeps, now: Date): Checked {
  const tenant = checkTenant(h.tenant);
  const name = checkName(h.name);
  const jobId = checkJobId(h.jobId);
  const contentType = checkContentType(h.contentType);
  let expectedSha256: string | undefined;
  if (h.expectedSha256 !== "") {
    if (!/^[0-9a-fA-F]{64}$/.test(h.expectedSha256)) throw badRequest("expected_sha256 must be 64 hex digits");
    expectedSha256 = h.expectedSha256.toLowerCase();
  }
  if (h.expectedSizeBytes !== undefined) {
    if (h.expectedSizeBytes < 0n) throw badRequest("expected_size_bytes must not be negative");
    if (h.expectedSizeBytes > BigInt(deps.maxBytes)) throw tooLarge(deps.maxBytes);
  }
  let expiry: Checked["expiry"];
  switch (h.expiry.case) {
    case "expiresAt": {
      const at = timestampDate(h.expiry.value as Timestamp);
      if (!(at.getTime() > now.getTime())) throw badRequest("expires_at must be in the future");
      if (at.getTime() - now.getTime() > MAX_EXPIRY_MS) throw badRequest("expires_at is more than 3650 days away");
      expiry = { at };
      break;
    }
    case "ttl": {
      expiry = { ttlMs: durationMsOf("ttl", h.expiry.value, { defaultMs: deps.defaultTtlMs, maxMs: MAX_EXPIRY_MS }) };
      break;
    }
    default:
      expiry = { ttlMs: deps.defaultTtlMs };
  }
  return {
    tenant,
    jobId,
    name,
    contentType,
    ...(expectedSha256 !== undefined ? { expectedSha256 } : {}),
    ...(h.expectedSizeBytes !== undefined ? { expectedSize: h.expectedSizeBytes } : {}),
    expiry,
  };
}

/** What an upload whose name is taken gets: the same artifact, or a refusal. */
function resolveExisting(existing: ArtifactRecord, sha256: string, size: bigint, now: Date): PutResult {
  if (existing.sha256 !== sha256 || existing.sizeBytes !== size) throw nameTaken(existing.name, existing.id);
  // The name stays taken after expiry (the metadata is kept for audit); the caller must know the content
  // it believes stored is not served.
  if (isExpired(existing, now)) throw artifactExpired(existing.id, existing.expiresAt);
  return { record: existing, created: false };
}

/** A message of an upload stream: PutArtifact's, or PutArtifacts' (same shape). */
export type UploadPart = Pick<PutArtifactRequest, "part">;

export async function putArtifact(deps: PutDeps, requests: AsyncIterable<UploadPart>): Promise<PutResult> {
  const clock = deps.now ?? (() => new Date());
  const iterator = requests[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done) throw badRequest("empty stream: the first message must be a header");
  if (first.value.part.case !== "header") throw badRequest("the first message must be a header");
  const header = checkHeader(first.value.part.value, deps, clock());

  let writer: BlobWriter | undefined;
  try {
    writer = await deps.blobs.begin();
    const hash = createHash("sha256");
    let size = 0;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      const part = next.value.part;
      if (part.case === "header") throw badRequest("a second header: only the first message may be a header");
      if (part.case !== "chunk") throw badRequest("a message with neither header nor chunk");
      const chunk = part.value;
      if (chunk.byteLength > MAX_CHUNK_BYTES) throw badRequest(`chunk of ${chunk.byteLength} bytes exceeds 1 MiB`);
      size += chunk.byteLength;
      if (size > deps.maxBytes) throw tooLarge(deps.maxBytes);
      if (header.expectedSize !== undefined && BigInt(size) > header.expectedSize) {
        throw sizeMismatch(header.expectedSize, BigInt(size));
      }
      hash.update(chunk);
      await writer.write(chunk);
    }
    const sha256 = hash.digest("hex");
    const sizeBytes = BigInt(size);
    if (header.expectedSize !== undefined && sizeBytes !== header.expectedSize) throw sizeMismatch(header.expectedSize, sizeBytes);
    if (header.expectedSha256 !== undefined && sha256 !== header.expectedSha256) throw checksumMismatch(header.expectedSha256, sha256);

    // No look-up of the name first: new names are the common case, and the unique key settles both a
    // retry and a race below (a taken name costs a blob written and deleted, a new one a round trip less).
    const id = newArtifactId();
    const storageKey = `${header.tenant}/${id}`;
    await writer.commit(storageKey);
    const createdAt = clock();
    const record: ArtifactRecord = {
      id,
      tenant: header.tenant,
      jobId: header.jobId,
      name: header.name,
      contentType: header.contentType,
      sizeBytes,
      sha256,
      storageKey,
      createdAt,
      expiresAt: "at" in header.expiry ? header.expiry.at : new Date(createdAt.getTime() + header.expiry.ttlMs),
      sweptAt: null,
    };
    let outcome: "inserted" | "duplicate";
    try {
      outcome = await deps.meta.insert(record);
    } catch (err) {
      // The row may have been committed when the connection dropped: its blob must then stay, or the
      // artifact would exist without content (DATA_LOSS for every reader). An orphan blob costs disk only,
      // until the sweep's orphan scan removes it (sweep.ts, after ARTIFACT_STALE_TEMP_SECONDS).
      if (!outcomeUnknown(err)) await deps.blobs.delete(storageKey).catch(() => undefined);
      throw err;
    }
    if (outcome === "inserted") return { record, created: true };
    // The name was taken (a retry, or another upload won the race): ours was never visible, so it goes.
    await deps.blobs.delete(storageKey);
    const winner = await deps.meta.findByName(header.tenant, header.jobId, header.name);
    if (!winner) throw unavailable("a concurrent upload of the same name is in an inconsistent state; retry");
    return resolveExisting(winner, sha256, sizeBytes, clock());
  } catch (err) {
    if (err instanceof StorageFullError) throw storageFull();
    throw err;
  } finally {
    await writer?.abort();
  }
}
