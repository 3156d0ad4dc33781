// The DanfseService: plain async functions over the renderer, the export repo and the artifacts
// client, wired in main.ts. Exports run in this process, tracked so close() can mark them interrupted.
import { createHash } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type Client, type ServiceImpl } from "@connectrpc/connect";
import { ArtifactsUnavailable, signLink } from "../../libs/artifacts/client.js";
import type { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { type DanfseExportSchema, DanfseExportState, type DanfseService } from "../../libs/gen/malha/danfse/v1/danfse_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { Logger } from "../../libs/log/logger.js";
import { runDetached } from "../../libs/rpc/context.js";
import { exportNotFound, fromStore, invalidRange, tooManyNotes } from "./errors.js";
import { exportTenant, runExport, type ExportDeps } from "./export-job.js";
import { type ExportRepo, type ExportRow, newExportId } from "./export-repo.js";
import type { DanfseMetrics } from "./metrics.js";
import type { Renderer } from "./renderer.js";
import { checkChave, checkChaves, checkCompetencia, checkIbge } from "./validate.js";

type ExportInit = MessageInitShape<typeof DanfseExportSchema>;

const CHUNK = 256 * 1024;
/** Largest ListDocuments page without XML. */
const LIST_PAGE = 500;

export interface HandlerDeps {
  store: Client<typeof StoreService>;
  artifacts: Client<typeof ArtifactsService>;
  renderer: Renderer;
  repo: ExportRepo;
  log: Logger;
  exportMaxNotes: number;
  exportConcurrency: number;
  exportTtlMs: number;
  linkTtlMs: number;
  heartbeatMs: number;
  exportTimeoutMs: number;
  metrics?: DanfseMetrics;
}

export interface DanfseHandlers {
  impl: Partial<ServiceImpl<typeof DanfseService>>;
  /** Marks this process's running exports INTERRUPTED (shutdown), without waiting for them. */
  interruptRunning(): Promise<void>;
}

export function createHandlers(d: HandlerDeps): DanfseHandlers {
  const running = new Set<string>();
  const exportDeps: ExportDeps = {
    repo: d.repo,
    renderer: d.renderer,
    artifacts: d.artifacts,
    log: d.log,
    concurrency: d.exportConcurrency,
    heartbeatMs: d.heartbeatMs,
    ttlMs: d.exportTtlMs,
    timeoutMs: d.exportTimeoutMs,
    ...(d.metrics ? { metrics: d.metrics } : {}),
  };

  /** Every chave of the range, in the store's order (competência, then NSU), refusing more than the cap. */
  async function chavesOf(ibge: string, range: ReturnType<typeof checkCompetencia>): Promise<string[]> {
    const out: string[] = [];
    let pageToken = "";
    do {
      const res = await d.store
        .listDocuments({ ibge, competenciaRange: range, pageSize: LIST_PAGE, pageToken })
        .catch((err: unknown) => Promise.reject(fromStore(err, ibge)));
      for (const doc of res.documents) if (doc.document) out.push(doc.document.chave);
      if (out.length > d.exportMaxNotes) throw tooManyNotes(`more than ${d.exportMaxNotes}`, d.exportMaxNotes);
      pageToken = res.nextPageToken;
    } while (pageToken);
    return out;
  }

  async function toProto(row: ExportRow): Promise<ExportInit> {
    const base: ExportInit = {
      id: row.id,
      ibge: row.ibge,
      state: row.state,
      total: row.total,
      rendered: row.rendered,
      failed: row.failed,
      error: row.error,
      createdAt: timestampFromDate(row.createdAt),
      ...(row.finishedAt ? { finishedAt: timestampFromDate(row.finishedAt) } : {}),
    };
    if (row.state !== DanfseExportState.COMPLETED || !row.zip) return base;
    const link = await signLink(d.artifacts, exportTenant(row.ibge), row.zip.artifactId, d.linkTtlMs).catch((err: unknown) =>
      Promise.reject(err instanceof ArtifactsUnavailable ? new ConnectError(err.message, Code.Unavailable) : err),
    );
    return {
      ...base,
      zip: {
        artifactId: row.zip.artifactId,
        sizeBytes: BigInt(row.zip.sizeBytes),
        sha256: row.zip.sha256,
        downloadUrl: link.url,
        ...(link.expiresAt ? { linkExpiresAt: timestampFromDate(link.expiresAt) } : {}),
        expiresAt: timestampFromDate(row.zip.expiresAt),
      },
    };
  }

  const impl: Partial<ServiceImpl<typeof DanfseService>> = {
    async *getDanfse(req, ctx) {
      const ibge = checkIbge(req.ibge);
      const chave = checkChave(req.chave);
      const pdf = await d.renderer.render(ibge, chave, ctx.signal);
      const sha256 = createHash("sha256").update(pdf).digest("hex");
      yield { part: { case: "header", value: { chave, sizeBytes: BigInt(pdf.length), sha256 } } };
      for (let o = 0; o < pdf.length; o += CHUNK) yield { part: { case: "chunk", value: pdf.subarray(o, o + CHUNK) } };
    },

    async createDanfseExport(req) {
      const ibge = checkIbge(req.ibge);
      const hasRange = req.competenciaRange !== undefined;
      if (hasRange === req.chaves.length > 0) throw invalidRange("give exactly one of competencia_range or chaves");
      let chaves: string[];
      if (hasRange) chaves = await chavesOf(ibge, checkCompetencia(req.competenciaRange!));
      else {
        if (req.chaves.length > d.exportMaxNotes) throw tooManyNotes(String(req.chaves.length), d.exportMaxNotes);
        chaves = checkChaves(req.chaves);
        // An unknown municipality is the caller's mistake, not one manifest error per chave.
        await d.store.getMunicipality({ ibge }).catch((err: unknown) => Promise.reject(fromStore(err, ibge)));
      }
      const row = await d.repo.create(newExportId(), ibge, chaves.length);
      running.add(row.id);
      // The export outlives this call: it must not inherit the call's cancellation or deadline.
      void runDetached(() => runExport(exportDeps, { id: row.id, ibge, chaves })).finally(() => running.delete(row.id));
      return { export: await toProto(row) };
    },

    async getDanfseExport(req) {
      const row = /^dx_[0-9a-f]{24}$/.test(req.exportId) ? await d.repo.get(req.exportId) : undefined;
      if (!row) throw exportNotFound(req.exportId);
      return { export: await toProto(row) };
    },
  };

  return {
    impl,
    async interruptRunning() {
      await Promise.all(
        [...running].map((id) => d.repo.fail(id, "INTERRUPTED: the danfse process running the export stopped; start the export again")),
      );
    },
  };
}
