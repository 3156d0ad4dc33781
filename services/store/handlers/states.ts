import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { SyncStatus } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { optionalAmbiente, optionalTipoNsu, parseFeed, syncStatusCodes } from "../codes.js";
import { badRequest } from "../errors.js";
import type { StoreDb } from "../repo/context.js";
import { findNsuGaps, recordConfirmedHoles } from "../repo/gaps.js";
import { parseRunId } from "../repo/state.js";
import { getSyncState, listCursorResets, listSyncStates, resetCursor } from "../repo/sync-states.js";
import { optionalIbge, optionalTime, requiredText } from "./validate.js";

type Impl = Partial<ServiceImpl<typeof StoreService>>;

export function stateHandlers(db: StoreDb): Impl {
  return {
    async getSyncState(req) {
      return { state: await getSyncState(db, parseFeed(req.feed)) };
    },

    async listSyncStates(req) {
      let status: string | undefined;
      if (req.status !== SyncStatus.UNSPECIFIED) {
        status = syncStatusCodes.toDb(req.status);
        if (status === undefined) throw badRequest(`unknown status ${req.status}`);
      }
      const ibge = optionalIbge(req.ibge);
      const ambiente = optionalAmbiente(req.ambiente);
      const tipoNsu = optionalTipoNsu(req.tipoNsu);
      const eligibleAt = optionalTime(req.eligibleAt);
      const page = await listSyncStates(db, {
        ...(ibge ? { ibge } : {}),
        ...(ambiente !== undefined ? { ambiente } : {}),
        ...(tipoNsu !== undefined ? { tipoNsu } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
        ...(eligibleAt ? { eligibleAt } : {}),
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      return { states: page.items, nextPageToken: page.next };
    },

    async resetCursor(req) {
      const feed = parseFeed(req.feed);
      const operator = requiredText(req.operator, "operator", 191);
      const reason = requiredText(req.reason, "reason", 2000);
      return resetCursor(db, feed, req.newCursor, operator, reason);
    },

    async listCursorResets(req) {
      const ibge = optionalIbge(req.ibge);
      const ambiente = optionalAmbiente(req.ambiente);
      const tipoNsu = optionalTipoNsu(req.tipoNsu);
      const page = await listCursorResets(db, {
        ...(ibge ? { ibge } : {}),
        ...(ambiente !== undefined ? { ambiente } : {}),
        ...(tipoNsu !== undefined ? { tipoNsu } : {}),
        pageSize: req.pageSize,
        pageToken: req.pageToken,
      });
      return { resets: page.items, nextPageToken: page.next };
    },

    async findNsuGaps(req) {
      const feed = parseFeed(req.feed);
      if (req.limit < 0) throw badRequest("limit must not be negative");
      const limit = req.limit === 0 ? 1000 : Math.min(req.limit, 100_000);
      const start = req.range?.start;
      const end = req.range?.end;
      if (start !== undefined && end !== undefined && start > end) throw badRequest("range.start is after range.end");
      const report = await findNsuGaps(db, feed, start, end, limit);
      return { gaps: report.gaps, missingCount: report.missingCount, truncated: report.truncated, resumeFrom: report.resumeFrom };
    },

    async recordConfirmedHoles(req) {
      const feed = parseFeed(req.feed);
      if (req.fenceToken < 1n) throw badRequest("fence_token must be at least 1");
      return recordConfirmedHoles(db, feed, parseRunId(req.runId), req.fenceToken, req.holes);
    },
  };
}
