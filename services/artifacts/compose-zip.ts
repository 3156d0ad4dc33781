// ComposeZip: a zip of stored artifacts and small inline files, built where the blobs live and stored
// through the ordinary upload pipeline (name rule, sha256, size cap, expiry), so the content never
// travels to the caller and back. Two passes over each stored blob: the first computes its CRC-32 (a
// STORE entry's local header carries it before the data), the second streams the data into the upload.
// Memory stays at one chunk per pass; the bytes are a function of the entries only.
import { create } from "@bufbuild/protobuf";
import { ArtifactHeaderSchema, type ComposeZipRequest } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { artifactExpired, artifactNotFound, badRequest, contentMissing, invalidName } from "./errors.js";
import { isExpired, type ArtifactRecord } from "./metadata.js";
import { ARTIFACT_ID, checkJobId, checkName, checkTenant } from "./names.js";
import { putArtifact, type PutDeps, type PutResult, type UploadPart } from "./put.js";
import { BlobNotFoundError } from "./storage/blob-store.js";
import { Crc32, centralDirectory, localHeader, type ZipFile } from "../../libs/zip/index.js";

/** The most a zip without ZIP64 holds. */
export const MAX_ZIP_ENTRIES = 0xffff;
export const MAX_INLINE_BYTES = 4 * 1024 * 1024;
const CHUNK = 256 * 1024;

type Source = { kind: "stored"; record: ArtifactRecord } | { kind: "inline"; data: Uint8Array };

interface Planned extends ZipFile {
  source: Source;
}

function checkEntries(req: ComposeZipRequest): { names: string[]; inlineBytes: number } {
  if (req.entries.length === 0) throw badRequest("entries must name at least one file");
  if (req.entries.length > MAX_ZIP_ENTRIES) throw badRequest(`entries has ${req.entries.length} files; at most ${MAX_ZIP_ENTRIES}`);
  const seen = new Map<string, number>();
  let inlineBytes = 0;
  const names = req.entries.map((e, i) => {
    let name: string;
    try {
      name = checkName(e.name);
    } catch {
      throw invalidName(e.name, `entries[${i}].name must be a relative path of [A-Za-z0-9._-] segments`);
    }
    const earlier = seen.get(name);
    if (earlier !== undefined) throw badRequest(`entries[${i}].name repeats entries[${earlier}].name ${JSON.stringify(name)}`);
    seen.set(name, i);
    if (e.source.case === undefined) throw badRequest(`entries[${i}] has neither artifact_id nor inline content`);
    if (e.source.case === "inline") inlineBytes += e.source.value.byteLength;
    return name;
  });
  if (inlineBytes > MAX_INLINE_BYTES) throw badRequest(`inline content of ${inlineBytes} bytes; at most ${MAX_INLINE_BYTES} per call`);
  return { names, inlineBytes };
}

async function blobChunks(deps: PutDeps, record: ArtifactRecord): Promise<AsyncIterable<Uint8Array>> {
  try {
    return await deps.blobs.read(record.storageKey, { offset: 0 }, CHUNK);
  } catch (err) {
    if (!(err instanceof BlobNotFoundError)) throw err;
    // Swept by another replica since the look-up: that is expiry, not loss.
    if (isExpired(record, (deps.now ?? (() => new Date()))())) throw artifactExpired(record.id, record.expiresAt);
    throw contentMissing(record.id);
  }
}

async function* contentOf(deps: PutDeps, s: Source): AsyncIterable<Uint8Array> {
  if (s.kind === "inline") {
    for (let o = 0; o < s.data.byteLength; o += CHUNK) yield s.data.subarray(o, o + CHUNK);
    return;
  }
  yield* await blobChunks(deps, s.record);
}

async function plan(deps: PutDeps, tenant: string, req: ComposeZipRequest, names: string[]): Promise<Planned[]> {
  const ids = req.entries.flatMap((e, i) => {
    if (e.source.case !== "artifactId") return [];
    if (!ARTIFACT_ID.test(e.source.value)) throw artifactNotFound(e.source.value);
    return [{ id: e.source.value, index: i }];
  });
  const records = new Map((await deps.meta.getMany(tenant, [...new Set(ids.map((x) => x.id))])).map((r) => [r.id, r]));
  const now = (deps.now ?? (() => new Date()))();
  const out: Planned[] = [];
  for (const [i, e] of req.entries.entries()) {
    let source: Source;
    if (e.source.case === "artifactId") {
      const record = records.get(e.source.value);
      if (!record) throw artifactNotFound(e.source.value);
      if (isExpired(record, now)) throw artifactExpired(record.id, record.expiresAt);
      source = { kind: "stored", record };
    } else if (e.source.case === "inline") {
      source = { kind: "inline", data: e.source.value };
    } else {
      throw badRequest(`entries[${i}] has neither artifact_id nor inline content`);
    }
    const crc = new Crc32();
    let size = 0;
    for await (const chunk of contentOf(deps, source)) {
      crc.update(chunk);
      size += chunk.byteLength;
    }
    if (source.kind === "stored" && BigInt(size) !== source.record.sizeBytes) throw contentMissing(source.record.id);
    out.push({ name: names[i]!, size, crc: crc.digest(), source });
  }
  return out;
}

export async function composeZip(deps: PutDeps, req: ComposeZipRequest): Promise<PutResult> {
  const tenant = checkTenant(req.tenant);
  const jobId = checkJobId(req.jobId);
  const name = checkName(req.name);
  const { names } = checkEntries(req);
  const files = await plan(deps, tenant, req, names);
  const central = centralDirectory(files);
  const total = files.reduce((n, f) => n + localHeader(f).byteLength + f.size, 0) + central.byteLength;
  async function* upload(): AsyncIterable<UploadPart> {
    yield {
      part: {
        case: "header",
        value: create(ArtifactHeaderSchema, {
          tenant,
          name,
          contentType: "application/zip",
          jobId,
          expiry: req.expiresAt ? { case: "expiresAt", value: req.expiresAt } : { case: undefined },
          expectedSizeBytes: BigInt(total),
        }),
      },
    };
    for (const f of files) {
      yield { part: { case: "chunk", value: localHeader(f) } };
      for await (const chunk of contentOf(deps, f.source)) yield { part: { case: "chunk", value: chunk } };
    }
    yield { part: { case: "chunk", value: central } };
  }
  return putArtifact(deps, upload());
}
