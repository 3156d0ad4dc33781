// One export: the notes' DANFSe, read from the store a batch at a time (one BatchGetDocuments each) and
// rendered with two batches in flight, so one is read while the other is drawn; written into a zip that is
// streamed into the artifacts service as it is written; manifest.json (per note: file, sha256, size, or
// the error) closes the zip. Nothing of the zip is held beyond the batches in flight and a chunk or two,
// so memory stays flat with the export's size. A note that cannot be rendered is a manifest entry; trouble
// with the store or artifacts fails the whole export, and the aborted upload leaves nothing stored.
import { createHash } from "node:crypto";
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import { putStreamed } from "../../libs/artifacts/client.js";
import type { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { ZipWriter } from "../../libs/zip/index.js";
import type { ExportRepo } from "./export-repo.js";
import { mapInOrder } from "./in-order.js";
import type { DanfseMetrics } from "./metrics.js";
import { MAX_BATCH, type NoteOutcome, type Renderer } from "./renderer.js";

export interface ManifestEntry {
  chave: string;
  file?: string;
  sha256?: string;
  size_bytes?: number;
  error?: { reason: string; field?: string; message: string };
}

export interface ExportDeps {
  repo: ExportRepo;
  renderer: Renderer;
  artifacts: Client<typeof ArtifactsService>;
  log: Logger;
  concurrency: number;
  heartbeatMs: number;
  ttlMs: number;
  /** The longest an export may run (its zip upload is one call). */
  timeoutMs: number;
  metrics?: DanfseMetrics;
}

/** The artifacts tenant of a municipality's exports. */
export const exportTenant = (ibge: string) => `danfse-${ibge}`;

/** Notes per store read: half the notes in flight, so one batch is read while the other is drawn. */
export const batchSizeOf = (concurrency: number) => Math.min(MAX_BATCH, Math.max(1, Math.ceil(concurrency / 2)));

export async function runExport(d: ExportDeps, exp: { id: string; ibge: string; chaves: readonly string[] }): Promise<void> {
  let rendered = 0;
  let failed = 0;
  const abort = new AbortController();
  const heartbeat = setInterval(() => {
    d.repo.progress(exp.id, rendered, failed).then(
      (running) => {
        if (!running) abort.abort(new Error("the export is no longer RUNNING (interrupted by a sweep)"));
      },
      (err: unknown) => d.log.warn({ err, exportId: exp.id }, "export heartbeat failed"),
    );
  }, d.heartbeatMs);
  heartbeat.unref();

  const size = batchSizeOf(d.concurrency);
  const batches: string[][] = [];
  for (let i = 0; i < exp.chaves.length; i += size) batches.push(exp.chaves.slice(i, i + size));
  const renderBatch = async (chaves: string[]): Promise<NoteOutcome[]> => {
    if (abort.signal.aborted) throw abort.signal.reason;
    return d.renderer.renderMany(exp.ibge, chaves, abort.signal);
  };

  async function* zipContent(): AsyncGenerator<Uint8Array> {
    const zip = new ZipWriter();
    const manifest: ManifestEntry[] = [];
    for await (const batch of mapInOrder(batches, Math.ceil(d.concurrency / size), renderBatch)) {
      for (const o of batch) {
        if ("error" in o) {
          failed++;
          const info = o.error.findDetails(ErrorInfoSchema)[0];
          const field = info?.metadata.field;
          manifest.push({
            chave: o.chave,
            error: { reason: info?.reason || Code[o.error.code], ...(field ? { field } : {}), message: o.error.rawMessage },
          });
          continue;
        }
        const file = `${o.chave}.pdf`;
        manifest.push({ chave: o.chave, file, sha256: createHash("sha256").update(o.pdf).digest("hex"), size_bytes: o.pdf.length });
        yield* zip.add({ name: file, data: o.pdf });
        rendered++;
      }
    }
    const doc = { export_id: exp.id, ibge: exp.ibge, total: exp.chaves.length, rendered, failed, notes: manifest };
    yield* zip.add({ name: "manifest.json", data: Buffer.from(`${JSON.stringify(doc, null, 2)}\n`, "utf8") });
    yield zip.finish();
  }

  try {
    const expiresAt = new Date(Date.now() + d.ttlMs);
    const artifact = await putStreamed(
      d.artifacts,
      { tenant: exportTenant(exp.ibge), jobId: exp.id, name: `danfse-${exp.id}.zip`, contentType: "application/zip", expiresAt },
      zipContent(),
      { timeoutMs: d.timeoutMs },
    );
    const done = await d.repo.complete(exp.id, rendered, failed, {
      artifactId: artifact.id,
      sizeBytes: Number(artifact.sizeBytes),
      sha256: artifact.sha256,
      expiresAt,
    });
    d.metrics?.exports.inc({ state: done ? "completed" : "interrupted" });
    d.log.info(
      { exportId: exp.id, ibge: exp.ibge, rendered, failed, bytes: Number(artifact.sizeBytes), recorded: done },
      "export completed",
    );
  } catch (err) {
    const message = err instanceof ConnectError ? err.rawMessage : (err as Error).message;
    d.metrics?.exports.inc({ state: "failed" });
    d.log.warn({ err, exportId: exp.id }, "export failed");
    await d.repo
      .fail(exp.id, `FAILED: ${message}`)
      .catch((e: unknown) => d.log.error({ err: e, exportId: exp.id }, "could not record the export's failure"));
  } finally {
    clearInterval(heartbeat);
  }
}
