// One feed's page: its live status, recent runs, quarantine, holes and reconciliation, from what the
// coordinator and the store already expose; and the raw XML of a quarantined item.
import type { Client } from "@connectrpc/connect";
import type { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { FaultReason } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { SyncPool, type QuarantineEntry } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { FeedPage, QuarantineView } from "./api-types.js";
import { HttpError } from "./http-kit.js";
import type { MunicipioDirectory } from "./municipios.js";
import { iso, opt, toRunView } from "./proto-view.js";
import { toFeedView, type FeedKeyInput } from "./sync-view.js";

export interface FeedViewDeps {
  coordinator: Client<typeof CoordinatorService>;
  store: Client<typeof StoreService>;
  municipios: MunicipioDirectory;
}

export interface QuarantineFile {
  body: Buffer;
  filename: string;
  contentType: string;
}

export interface FeedDetailView {
  feedPage(feed: FeedKeyInput): Promise<FeedPage>;
  quarantineFile(feed: FeedKeyInput, nsu: bigint, id: string): Promise<QuarantineFile>;
}

const RUNS_SHOWN = 20;
const QUARANTINE_SHOWN = 50;
const GAPS_SHOWN = 50;

const FAULT_NAMES: Partial<Record<FaultReason, string>> = {
  [FaultReason.BAD_BASE64]: "bad_base64",
  [FaultReason.BAD_GZIP]: "bad_gzip",
  [FaultReason.TOO_LARGE]: "too_large",
  [FaultReason.BAD_XML]: "bad_xml",
  [FaultReason.MISSING_FIELD]: "missing_field",
  [FaultReason.UNKNOWN_DOCUMENT_TYPE]: "unknown_document_type",
  [FaultReason.INVALID_VALUE]: "invalid_value",
};
const POOLS: Partial<Record<SyncPool, string>> = {
  [SyncPool.INCREMENTAL]: "incremental",
  [SyncPool.BOOTSTRAP]: "bootstrap",
  [SyncPool.RECONCILIATION]: "reconciliation",
};

export function toQuarantineView(q: QuarantineEntry): QuarantineView {
  return {
    id: q.id,
    nsu: q.nsu.toString(),
    ...opt("chave", q.chave),
    reason: FAULT_NAMES[q.reason] ?? "unknown",
    message: q.message,
    ...opt("quarantinedAt", iso(q.quarantinedAt)),
    runId: q.runId,
  };
}

export function createFeedDetailView(deps: FeedViewDeps): FeedDetailView {
  return {
    async feedPage(feed) {
      const [{ status }, runs, quarantine, gaps, syncState, place] = await Promise.all([
        deps.coordinator.getFeedStatus({ feed }),
        deps.coordinator.listRuns({ ibge: feed.ibge, ambiente: feed.ambiente, tipoNsu: feed.tipoNsu, pageSize: RUNS_SHOWN }),
        deps.store.listQuarantine({ ibge: feed.ibge, ambiente: feed.ambiente, tipoNsu: feed.tipoNsu, pageSize: QUARANTINE_SHOWN }),
        deps.store.findNsuGaps({ feed, limit: GAPS_SHOWN }),
        deps.store.getSyncState({ feed }),
        deps.municipios.get(feed.ibge),
      ]);
      if (!status) throw new HttpError(404, "NOT_FOUND", `feed ${feed.ibge} not found`);
      return {
        feed: toFeedView(status, place),
        pool: POOLS[status.pool] ?? "",
        ...opt("currentRunId", status.currentRun?.runId),
        runs: runs.runs.map(toRunView),
        moreRuns: runs.nextPageToken !== "",
        quarantine: quarantine.entries.map(toQuarantineView),
        moreQuarantine: quarantine.nextPageToken !== "",
        gaps: gaps.gaps.map((g) => ({ start: g.start.toString(), end: g.end.toString() })),
        missingNsus: gaps.missingCount.toString(),
        gapsTruncated: gaps.truncated,
        confirmedHoles: Number(syncState.state?.holesCount ?? 0n),
      };
    },
    async quarantineFile(feed, nsu, id) {
      const { entries } = await deps.store.listQuarantine({
        ibge: feed.ibge,
        ambiente: feed.ambiente,
        tipoNsu: feed.tipoNsu,
        nsuRange: { start: nsu, end: nsu },
        includePayload: true,
        pageSize: 50,
      });
      const entry = entries.find((e) => e.id === id);
      if (!entry) throw new HttpError(404, "NOT_FOUND", `quarantined item ${id} not found at NSU ${nsu} of feed ${feed.ibge}`);
      // The decompressed XML when decoding got that far; otherwise ArquivoXml exactly as the ADN sent it.
      if (entry.xml.length > 0) {
        return { body: Buffer.from(entry.xml), filename: `quarentena-${feed.ibge}-${nsu}.xml`, contentType: "application/xml" };
      }
      return {
        body: Buffer.from(entry.rawPayload),
        filename: `quarentena-${feed.ibge}-${nsu}.txt`,
        contentType: "application/octet-stream",
      };
    },
  };
}
