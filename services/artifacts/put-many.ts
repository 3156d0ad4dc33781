// PutArtifacts: many small uploads in one stream. Each artifact is read whole into memory (the call's
// content is capped), then all of them go through putArtifact concurrently: one round trip for the
// caller instead of one per artifact, and concurrent publishes share their directory fsyncs.
import { ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { badRequest, tooLarge } from "./errors.js";
import { MAX_CHUNK_BYTES, putArtifact, type PutDeps, type PutResult, type UploadPart } from "./put.js";

export const MAX_ARTIFACTS_PER_CALL = 100;
export const MAX_BATCH_BYTES = 16 * 1024 * 1024;

interface Pending {
  header: UploadPart;
  chunks: UploadPart[];
}

async function readAll(requests: AsyncIterable<UploadPart>): Promise<Pending[]> {
  const out: Pending[] = [];
  let bytes = 0;
  for await (const msg of requests) {
    if (msg.part.case === "header") {
      if (out.length === MAX_ARTIFACTS_PER_CALL) throw badRequest(`more than ${MAX_ARTIFACTS_PER_CALL} artifacts in one call`);
      out.push({ header: msg, chunks: [] });
      continue;
    }
    const current = out.at(-1);
    if (!current) throw badRequest("the first message must be a header");
    if (msg.part.case !== "chunk") throw badRequest("a message with neither header nor chunk");
    if (msg.part.value.byteLength > MAX_CHUNK_BYTES) throw badRequest(`chunk of ${msg.part.value.byteLength} bytes exceeds 1 MiB`);
    bytes += msg.part.value.byteLength;
    if (bytes > MAX_BATCH_BYTES) throw tooLarge(MAX_BATCH_BYTES);
    current.chunks.push(msg);
  }
  if (out.length === 0) throw badRequest("empty stream: the first message must be a header");
  return out;
}

async function* replay(p: Pending): AsyncIterable<UploadPart> {
  yield p.header;
  yield* p.chunks;
}

/** The refusal of one artifact, saying which one: its index in the message and in ErrorInfo metadata. */
function forArtifact(err: unknown, index: number, name: string): ConnectError {
  const e = ConnectError.from(err);
  const details = e.details.map((d) => {
    if (!("desc" in d) || d.desc.typeName !== ErrorInfoSchema.typeName) return d;
    const info = d.value as { reason: string; domain: string; metadata: Record<string, string> };
    return { desc: ErrorInfoSchema, value: { ...info, metadata: { ...info.metadata, artifact_index: String(index) } } };
  });
  return new ConnectError(
    `artifact ${index} (${JSON.stringify(name.slice(0, 80))}): ${e.rawMessage}`,
    e.code,
    e.metadata,
    details as never,
    e.cause,
  );
}

export async function putArtifacts(deps: PutDeps, requests: AsyncIterable<UploadPart>): Promise<PutResult[]> {
  const pending = await readAll(requests);
  const settled = await Promise.allSettled(pending.map((p) => putArtifact(deps, replay(p))));
  const failed = settled.findIndex((s) => s.status === "rejected");
  if (failed >= 0) {
    const header = pending[failed]!.header.part;
    throw forArtifact((settled[failed] as PromiseRejectedResult).reason, failed, header.case === "header" ? header.value.name : "");
  }
  return settled.map((s) => (s as PromiseFulfilledResult<PutResult>).value);
}
