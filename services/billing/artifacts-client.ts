// The billing side of the artifacts service: streaming puts of whole buffers, reads back into memory
// (PDFs and the job's JSON files are small) and freshly signed links.
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Client } from "@connectrpc/connect";
import type { ArtifactsService, Artifact, PutArtifactRequest } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import type { StoredArtifact } from "./job-repo.js";

const CHUNK = 256 * 1024;

export class ArtifactsUnavailable extends Error {
  override name = "ArtifactsUnavailable";
}

export class ArtifactStore {
  constructor(private readonly client: Client<typeof ArtifactsService>) {}

  /** Puts `data` as (tenant, job, name); the same bytes again return the stored artifact (immutable names). */
  /** Without `expiresAt` the artifacts service's default retention (ARTIFACT_TTL_DIAS) applies. */
  async put(p: { tenant: string; jobId: string; name: string; contentType: string; data: Uint8Array; expiresAt?: Date }): Promise<StoredArtifact> {
    const { tenant, jobId, name, contentType, data, expiresAt } = p;
    async function* parts(): AsyncIterable<PartialMessage> {
      const expiry = expiresAt ? { case: "expiresAt", value: timestampFromDate(expiresAt) } : { case: undefined };
      yield { part: { case: "header", value: { tenant, name, contentType, jobId, expiry, expectedSizeBytes: BigInt(data.length) } } };
      for (let o = 0; o < data.length; o += CHUNK) yield { part: { case: "chunk", value: data.subarray(o, o + CHUNK) } };
    }
    const res = await guard(() => this.client.putArtifact(parts() as AsyncIterable<PutArtifactRequest>));
    const a = res.artifact;
    if (!a) throw new Error("artifacts answered a put without an artifact");
    return toStored(a);
  }

  async read(tenant: string, id: string): Promise<Buffer> {
    return guard(async () => {
      const chunks: Uint8Array[] = [];
      for await (const res of this.client.getArtifact({ tenant, id })) if (res.part.case === "chunk") chunks.push(res.part.value);
      return Buffer.concat(chunks);
    });
  }

  async link(tenant: string, id: string, ttlMs: number): Promise<{ url: string; expiresAt: Date | undefined }> {
    const seconds = Math.max(1, Math.floor(ttlMs / 1000));
    const res = await guard(() => this.client.createDownloadLink({ tenant, id, ttl: { seconds: BigInt(seconds), nanos: 0 } }));
    const exp = res.expiresAt;
    return { url: res.url, expiresAt: exp ? new Date(Number(exp.seconds) * 1000 + Math.floor(exp.nanos / 1e6)) : undefined };
  }
}

type PartialMessage = { part: PutArtifactRequest["part"] | { case: "header"; value: Record<string, unknown> } };

const toStored = (a: Artifact): StoredArtifact => ({ artifactId: a.id, name: a.name, contentType: a.contentType, sizeBytes: Number(a.sizeBytes), sha256: a.sha256 });

/** Transport trouble is transient (retry later); a refusal from artifacts is a bug or a real conflict. */
async function guard<T>(fn: () => Promise<T>): Promise<T> {
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
