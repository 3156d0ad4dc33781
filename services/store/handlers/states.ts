import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { SyncCondition, SyncStatus } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { optionalAmbiente, optionalTipoNsu, parseFeed, syncStatusCodes } from "../codes.js";
import { badRequest } from "../errors.js";
import type { StoreDb } from "../repo/context.js";
import { findNsuGaps, recordConfirmedHoles } from "../repo/gaps.js";
import { parseRunId } from "../repo/state.js";
import { getSyncState, listCursorResets, listSyncStates, resetCursor, type SyncConditionName } from "../repo/sync-states.js";
import { optionalIbge, optionalTime, requiredText } from "./validate.js";

type Impl = Partial<ServiceImpl<typeof StoreService>>;

const CONDITIONS: Partial<Record<SyncCondition, SyncConditionName>> = {
  [SyncCondition.DISABLED]: "disabled",
  [SyncCondition.RUNNING]: "running",
  [SyncCondition.NOT_RUNNING]: "not_running",
  [SyncCondition.COOLING_DOWN]: "cooling_down",
  [SyncCondition.WAITING]: "waiting",
  [SyncCondition.ELIGIBLE]: "eligible",
};

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
      const uf = req.uf.trim().toUpperCase();
      if (uf !== "" && !/^[A-Z]{2}$/.test(uf)) throw badRequest("uf must be a two-letter state code");
      const condition = req.condition === SyncCondition.UNSPECIFIED ? undefined : CONDITIONS[req.condition];
      if (req.condition !== SyncCondition.UNSPECIFIED && condition === undefined) throw badRequest(`unknown condition ${req.condition}`);
      const page = await listSyncStates(db, {
        ...(ibge ? { ibge } : {}),
        ...(ambiente !== undefined ? { ambiente } : {}),
        ...(tipoNsu !== undefined ? { tipoNsu } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(req.enabled !== undefined ? { enabled: req.enabled } : {}),
        ...(eligibleAt ? { eligibleAt } : {}),
        ...(uf ? { uf } : {}),
        ...(condition ? { condition } : {}),
        ...(req.lastRunFailed !== undefined ? { lastRunFailed: req.lastRunFailed } : {}),
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
      if (req.recordChecked && (start === undefined || end === undefined))
        throw badRequest("record_checked needs range.start and range.end");
      const report = await findNsuGaps(db, feed, start, end, limit, req.recordChecked);
      return { gaps: report.gaps, missingCount: report.missingCount, truncated: report.truncated, resumeFrom: report.resumeFrom };
    },

    async recordConfirmedHoles(req) {
      const feed = parseFeed(req.feed);
      if (req.fenceToken < 1n) throw badRequest("fence_token must be at least 1");
      return recordConfirmedHoles(db, feed, parseRunId(req.runId), req.fenceToken, req.holes);
    },
  };
}
