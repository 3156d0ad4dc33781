// `billing jobs download`: the consolidated zip of a finished boleto job, fetched through the signed
// link of its artifacts manifest and kept only if its sha256 and size match the manifest.
import { createHash } from "node:crypto";
import { createWriteStream, mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import type { ArtifactRef } from "../libs/gen/malha/billing/v1/types_pb.js";
import { billing, tenantOf, tenantOption } from "./billing-common.js";
import { str, type Command } from "./command.js";
import { CliFailure, EXIT } from "./exit-codes.js";
import { iso, json, when } from "./format.js";
import { write } from "./io.js";

export interface Downloaded {
  path: string;
  bytes: number;
  sha256: string;
}

/**
 * Streams `ref.downloadUrl` into `path` through a temporary file, hashing on the way; renames it into
 * place only when sha256 and size match the manifest, so a partial or altered file never looks done.
 */
export async function downloadVerified(
  ref: Pick<ArtifactRef, "downloadUrl" | "sha256" | "sizeBytes">,
  path: string,
  timeoutMs: number,
): Promise<Downloaded> {
  let res: Response;
  try {
    res = await fetch(ref.downloadUrl, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    throw new CliFailure(`download failed: ${(err as Error).message}`, EXIT.UNAVAILABLE);
  }
  // The link's URL is a bearer credential: errors name the status, never the URL.
  if (!res.ok || !res.body)
    throw new CliFailure(`download failed: HTTP ${res.status}${res.status === 410 ? " (artifact expired)" : ""}`, EXIT.DOWNLOAD_FAILED);
  const hash = createHash("sha256");
  let bytes = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  const tmp = `${path}.part-${process.pid}`;
  try {
    await pipeline(Readable.fromWeb(res.body as WebReadableStream<Uint8Array>), tap, createWriteStream(tmp, { mode: 0o600 }));
    const sha256 = hash.digest("hex");
    if (sha256 !== ref.sha256 || BigInt(bytes) !== ref.sizeBytes) {
      throw new CliFailure(
        `download does not match the manifest: sha256 ${sha256} (${bytes} bytes), expected ${ref.sha256} (${ref.sizeBytes} bytes); nothing kept`,
        EXIT.DOWNLOAD_FAILED,
      );
    }
    renameSync(tmp, path);
    return { path, bytes, sha256 };
  } catch (err) {
    rmSync(tmp, { force: true });
    if (err instanceof CliFailure) throw err;
    throw new CliFailure(`download failed: ${(err as Error).message}`, EXIT.DOWNLOAD_FAILED);
  }
}

export const billingJobsDownload: Command = {
  usage: "billing jobs download <job> [--out <dir>]",
  summary: "download a finished job's zip (PDFs + manifest.json + errors.json) to <dir>/<job>.zip, checking its sha256",
  options: { ...tenantOption, out: { type: "string" } },
  positionals: [1, 1],
  async run(ctx) {
    const jobId = ctx.positionals[0]!;
    const art = await billing(ctx).getBoletoJobArtifacts({ tenant: tenantOf(ctx), jobId });
    if (!art.zip)
      throw new CliFailure(
        `job ${jobId} has no zip: no item completed (\`malha billing jobs items ${jobId} --status failed\`)`,
        EXIT.NOT_FOUND,
      );
    const dir = str(ctx.values, "out") ?? ".";
    mkdirSync(dir, { recursive: true });
    // The job id is the service's opaque id: keep only safe characters in the file name.
    const got = await downloadVerified(art.zip, join(dir, `${jobId.replace(/[^A-Za-z0-9._-]/g, "_")}.zip`), ctx.targets.timeoutMs);
    const completed = art.items.filter((i) => i.pdf).length;
    if (ctx.json) {
      write(
        ctx.io.out,
        json({
          jobId,
          path: got.path,
          bytes: got.bytes,
          sha256: got.sha256,
          pdfs: completed,
          items: art.items.length,
          expiresAt: iso(art.expiresAt),
        }),
      );
      return;
    }
    write(
      ctx.io.out,
      `${got.path}: ${got.bytes} bytes, sha256 ${got.sha256} (verified), ${completed} PDFs of ${art.items.length} items; artifacts expire ${when(art.expiresAt)}`,
    );
  },
};
