// The billing side of the artifacts service: streaming puts of whole buffers, zips composed where the
// blobs live (ComposeZip: billing never reads a PDF back to zip it), metadata, reads of the few files
// billing parses (retorno files) and freshly signed links.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import {
  ArtifactsUnavailable,
  artifactsCall as guard,
  bufferParts,
  dateOf,
  type SignedLink,
  ttlOf,
  type UploadPart as PartialMessage,
} from "../../../libs/artifacts/client.js";
import {
  ArtifactState,
  type ArtifactsService,
  type Artifact,
  type PutArtifactRequest,
  type PutArtifactsRequest,
} from "../../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import type { StoredArtifact } from "./stored.js";
import { BATCHABLE_BYTES, PutBatcher } from "./put-batcher.js";

export { ArtifactsUnavailable, type SignedLink };

/** The artifacts service signs at most this many links per call. */
const LINKS_PER_CALL = 1000;

/** A file of a composed zip: a stored artifact of the tenant, or bytes given here (the round's documents). */
export type ZipSource = { name: string; artifactId: string } | { name: string; data: Uint8Array };

export interface ArtifactStat extends StoredArtifact {
  expired: boolean;
}

export class ArtifactStore {
  constructor(private readonly client: Client<typeof ArtifactsService>) {}

  private readonly batcher = new PutBatcher<PutInput, Artifact>(
    (batch) => this.putMany(batch),
    (one) => this.putOne(one),
  );

  /**
   * Puts `data` as (tenant, job, name); the same bytes again return the stored artifact (immutable
   * names). Without `expiresAt` the artifacts service's default retention (ARTIFACT_TTL_DIAS) applies.
   * Small blobs ride together in PutArtifacts calls (see PutBatcher); large ones stream on their own.
   */
  async put(p: PutInput): Promise<StoredArtifact> {
    const a = p.data.byteLength <= BATCHABLE_BYTES ? await this.batcher.put(p) : await this.putOne(p);
    return toStored(a);
  }

  private async putOne(p: PutInput): Promise<Artifact> {
    const res = await guard(() => this.client.putArtifact(uploadParts(p) as AsyncIterable<PutArtifactRequest>));
    if (!res.artifact) throw new Error("artifacts answered a put without an artifact");
    return res.artifact;
  }

  private async putMany(batch: readonly PutInput[]): Promise<Artifact[]> {
    async function* parts(): AsyncIterable<PartialMessage> {
      for (const p of batch) yield* uploadParts(p);
    }
    const res = await guard(() => this.client.putArtifacts(parts() as AsyncIterable<PutArtifactsRequest>));
    if (res.results.length !== batch.length || res.results.some((r) => !r.artifact)) {
      throw new Error(`artifacts answered ${res.results.length} results for a batch of ${batch.length}`);
    }
    return res.results.map((r) => r.artifact!);
  }

  /**
   * Stores (tenant, job, name) as a zip of `entries` in order, composed by the artifacts service from
   * the stored blobs; the same entries again return the same artifact (deterministic bytes).
   */
  async composeZip(p: {
    tenant: string;
    jobId: string;
    name: string;
    entries: readonly ZipSource[];
    expiresAt?: Date;
  }): Promise<StoredArtifact> {
    const res = await guard(() =>
      this.client.composeZip({
        tenant: p.tenant,
        jobId: p.jobId,
        name: p.name,
        entries: p.entries.map((e) => ({
          name: e.name,
          source: "artifactId" in e ? { case: "artifactId", value: e.artifactId } : { case: "inline", value: e.data },
        })),
        ...(p.expiresAt ? { expiresAt: timestampFromDate(p.expiresAt) } : {}),
      }),
    );
    if (!res.artifact) throw new Error("artifacts answered ComposeZip without an artifact");
    return toStored(res.artifact);
  }

  /** Metadata only (sha256, size), also of an expired artifact. */
  async stat(tenant: string, id: string): Promise<ArtifactStat> {
    const res = await guard(() => this.client.statArtifact({ tenant, id }));
    if (!res.artifact) throw new Error("artifacts answered StatArtifact without an artifact");
    return { ...toStored(res.artifact), expired: res.artifact.state === ArtifactState.EXPIRED };
  }

  async read(tenant: string, id: string): Promise<Buffer> {
    return guard(async () => {
      const chunks: Uint8Array[] = [];
      for await (const res of this.client.getArtifact({ tenant, id })) if (res.part.case === "chunk") chunks.push(res.part.value);
      return Buffer.concat(chunks);
    });
  }

  async link(tenant: string, id: string, ttlMs: number): Promise<SignedLink> {
    const res = await guard(() => this.client.createDownloadLink({ tenant, id, ttl: ttlOf(ttlMs) }));
    return { url: res.url, expiresAt: dateOf(res.expiresAt) };
  }

  /** Links for many artifacts (a manifest) in as few calls as the service allows; keyed by artifact id. */
  async links(tenant: string, ids: readonly string[], ttlMs: number): Promise<Map<string, SignedLink>> {
    const unique = [...new Set(ids)];
    const out = new Map<string, SignedLink>();
    for (let i = 0; i < unique.length; i += LINKS_PER_CALL) {
      const batch = unique.slice(i, i + LINKS_PER_CALL);
      const res = await guard(() => this.client.createDownloadLinks({ tenant, ids: batch, ttl: ttlOf(ttlMs) }));
      for (const l of res.links) out.set(l.id, { url: l.url, expiresAt: dateOf(l.expiresAt) });
    }
    return out;
  }
}

export interface PutInput {
  tenant: string;
  jobId: string;
  name: string;
  contentType: string;
  data: Uint8Array;
  expiresAt?: Date;
}

async function* uploadParts(p: PutInput): AsyncIterable<PartialMessage> {
  const { data, ...header } = p;
  yield* bufferParts(header, data);
}

const toStored = (a: Artifact): StoredArtifact => ({
  artifactId: a.id,
  name: a.name,
  contentType: a.contentType,
  sizeBytes: Number(a.sizeBytes),
  sha256: a.sha256,
});
