import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import {
  ArtifactSchema,
  ArtifactState,
  type Artifact,
  type ArtifactsService,
  type GetArtifactResponseSchema,
} from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { LINK_TTL } from "../../libs/artifacts/client.js";
import { durationMsOf } from "../../libs/rpc/duration.js";
import { pageSizeOf } from "../../libs/rpc/page-size.js";
import type { PageTokens } from "../../libs/rpc/page-token.js";
import { artifactExpired, artifactNotFound, badRequest, contentMissing, unavailable } from "./errors.js";
import type { LinkSigner } from "./links.js";
import { isExpired, type ArtifactMetadataStore, type ArtifactRecord, type ListCursor } from "./metadata.js";
import { ARTIFACT_ID, checkJobId, checkTenant } from "./names.js";
import { composeZip } from "./compose-zip.js";
import type { ArtifactsMetrics } from "./metrics.js";
import { putArtifact, type UploadPart } from "./put.js";
import { putArtifacts } from "./put-many.js";
import { BlobNotFoundError, type BlobStore } from "./storage/blob-store.js";

export const READ_CHUNK_BYTES = 256 * 1024;

export interface HandlerDeps {
  blobs: BlobStore;
  meta: ArtifactMetadataStore;
  signer: LinkSigner;
  maxBytes: number;
  defaultTtlMs: number;
  pageTokens: PageTokens;
  /** Base of signed links; known only once the HTTP port is bound. */
  linkBaseUrl: () => string;
  metrics?: ArtifactsMetrics;
  now?: () => Date;
}

/** The upload stream, counting its content bytes as they arrive. */
async function* counted<T extends UploadPart>(requests: AsyncIterable<T>, add: (n: number) => void): AsyncIterable<T> {
  for await (const r of requests) {
    if (r.part.case === "chunk") add(r.part.value.byteLength);
    yield r;
  }
}

export function toArtifact(r: ArtifactRecord, now: Date): Artifact {
  return create(ArtifactSchema, {
    id: r.id,
    tenant: r.tenant,
    name: r.name,
    contentType: r.contentType,
    sizeBytes: r.sizeBytes,
    sha256: r.sha256,
    jobId: r.jobId,
    createdAt: timestampFromDate(r.createdAt),
    expiresAt: timestampFromDate(r.expiresAt),
    state: isExpired(r, now) ? ArtifactState.EXPIRED : ArtifactState.AVAILABLE,
  });
}

// Connection-level MySQL failures are "backend unreachable" in the contract; anything else stays INTERNAL.
const UNREACHABLE = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EHOSTUNREACH", "PROTOCOL_CONNECTION_LOST", "ER_CON_COUNT_ERROR"]);

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (UNREACHABLE.has((err as { code?: string }).code ?? "")) throw unavailable("artifact metadata database unreachable");
    throw err;
  }
}

/** Reads a tenant's artifact; an id that cannot be ours is as missing as another tenant's. */
async function find(deps: HandlerDeps, tenant: string, id: string): Promise<ArtifactRecord> {
  checkTenant(tenant);
  if (!ARTIFACT_ID.test(id)) throw artifactNotFound(id);
  const record = await guard(() => deps.meta.get(tenant, id));
  if (!record) throw artifactNotFound(id);
  return record;
}

function toSafeNumber(value: bigint, field: string): number {
  if (value < 0n) throw badRequest(`${field} must not be negative`);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw badRequest(`${field} is too large`);
  return Number(value);
}

/** A manifest's worth of links per call; more would make one response unboundedly large. */
export const MAX_LINKS_PER_CALL = 1000;

function signLink(deps: HandlerDeps, record: ArtifactRecord, now: Date, ttlMs: number) {
  if (isExpired(record, now)) throw artifactExpired(record.id, record.expiresAt);
  // Whole seconds, rounded down, so the link never outlives the artifact.
  const expiresSec = Math.floor(Math.min(now.getTime() + ttlMs, record.expiresAt.getTime()) / 1000);
  const path = deps.signer.pathFor({ tenant: record.tenant, id: record.id, expiresSec });
  return { url: `${deps.linkBaseUrl()}${path}`, expiresAt: timestampFromDate(new Date(expiresSec * 1000)) };
}

export function createHandlers(deps: HandlerDeps): Partial<ServiceImpl<typeof ArtifactsService>> {
  const clock = deps.now ?? (() => new Date());
  const bytes = (method: string, direction: "received" | "sent") => (n: number) => deps.metrics?.contentBytes.inc({ method, direction }, n);
  return {
    async putArtifact(requests) {
      const { record, created } = await guard(() =>
        putArtifact({ ...deps, now: clock }, counted(requests, bytes("PutArtifact", "received"))),
      );
      return { artifact: toArtifact(record, clock()), created };
    },

    async putArtifacts(requests) {
      const results = await guard(() => putArtifacts({ ...deps, now: clock }, counted(requests, bytes("PutArtifacts", "received"))));
      const now = clock();
      return { results: results.map(({ record, created }) => ({ artifact: toArtifact(record, now), created })) };
    },

    async *getArtifact(req): AsyncGenerator<MessageInitShape<typeof GetArtifactResponseSchema>> {
      const record = await find(deps, req.tenant, req.id);
      const now = clock();
      if (isExpired(record, now)) throw artifactExpired(record.id, record.expiresAt);
      const offset = toSafeNumber(req.offset, "offset");
      const length = req.length === undefined ? undefined : toSafeNumber(req.length, "length");
      if (BigInt(offset) > record.sizeBytes) throw badRequest(`offset ${offset} is beyond the size ${record.sizeBytes}`);
      let content: AsyncIterable<Uint8Array>;
      try {
        content = await deps.blobs.read(record.storageKey, { offset, ...(length !== undefined ? { length } : {}) }, READ_CHUNK_BYTES);
      } catch (err) {
        if (!(err instanceof BlobNotFoundError)) throw err;
        // The sweep of another replica may have just removed it: that is expiry, not loss.
        if (isExpired(record, clock())) throw artifactExpired(record.id, record.expiresAt);
        throw contentMissing(record.id);
      }
      yield { part: { case: "metadata", value: toArtifact(record, now) } };
      const sent = bytes("GetArtifact", "sent");
      for await (const chunk of content) {
        sent(chunk.byteLength);
        yield { part: { case: "chunk", value: chunk } };
      }
    },

    async composeZip(req) {
      bytes("ComposeZip", "received")(req.entries.reduce((n, e) => n + (e.source.case === "inline" ? e.source.value.byteLength : 0), 0));
      const { record, created } = await guard(() => composeZip({ ...deps, now: clock }, req));
      return { artifact: toArtifact(record, clock()), created };
    },

    async statArtifact(req) {
      const record = await find(deps, req.tenant, req.id);
      return { artifact: toArtifact(record, clock()) };
    },

    async listArtifacts(req) {
      const tenant = checkTenant(req.tenant);
      const jobId = checkJobId(req.jobId);
      const pageSize = pageSizeOf(req.pageSize);
      const filter = { tenant, jobId, includeExpired: req.includeExpired };
      const position = deps.pageTokens.decode("ListArtifacts", filter, req.pageToken, ["int", "string"]);
      const after: ListCursor | undefined = position && { createdAt: new Date(position[0]), id: position[1] };
      const now = clock();
      const rows = await guard(() =>
        deps.meta.list({ tenant, jobId, includeExpired: req.includeExpired, now, limit: pageSize + 1, ...(after ? { after } : {}) }),
      );
      const page = rows.slice(0, pageSize);
      const last = page[page.length - 1];
      const nextPageToken =
        rows.length > pageSize && last ? deps.pageTokens.encode("ListArtifacts", filter, [last.createdAt.getTime(), last.id]) : "";
      return { artifacts: page.map((r) => toArtifact(r, now)), nextPageToken };
    },

    async createDownloadLink(req) {
      const ttlMs = durationMsOf("ttl", req.ttl, LINK_TTL);
      const record = await find(deps, req.tenant, req.id);
      return signLink(deps, record, clock(), ttlMs);
    },

    async createDownloadLinks(req) {
      const ttlMs = durationMsOf("ttl", req.ttl, LINK_TTL);
      checkTenant(req.tenant);
      if (req.ids.length === 0) throw badRequest("ids must name at least one artifact");
      if (req.ids.length > MAX_LINKS_PER_CALL)
        throw badRequest(`ids names ${req.ids.length} artifacts; at most ${MAX_LINKS_PER_CALL} per call`);
      const seen = new Set<string>();
      for (const id of req.ids) {
        if (seen.has(id)) throw badRequest(`ids repeats ${JSON.stringify(id.slice(0, 80))}`);
        seen.add(id);
      }
      const malformed = req.ids.find((id) => !ARTIFACT_ID.test(id));
      if (malformed !== undefined) throw artifactNotFound(malformed);
      const records = new Map((await guard(() => deps.meta.getMany(req.tenant, req.ids))).map((r) => [r.id, r]));
      const now = clock();
      const links = req.ids.map((id) => {
        const record = records.get(id);
        if (!record) throw artifactNotFound(id);
        return { id, ...signLink(deps, record, now, ttlMs) };
      });
      return { links };
    },
  };
}
