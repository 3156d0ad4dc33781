import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { outcomeCodes, parseFeed, poolCodes, triggerCodes } from "../codes.js";
import { badRequest } from "../errors.js";
import type { StoreDb } from "../repo/context.js";
import { applyBatch } from "../repo/apply-batch.js";
import { beginRun, expireStaleRuns, finishRun, getRun, purgeRunLogs, requestCancellation } from "../repo/runs.js";
import { parseRunId } from "../repo/state.js";
import { batchItems, type PageDecodeLimits } from "./batch-items.js";
import { optionalText, optionalTime, requiredText, requiredTime } from "./validate.js";

type Impl = Partial<ServiceImpl<typeof StoreService>>;

function fenceToken(value: bigint): bigint {
  if (value < 1n) throw badRequest("fence_token must be at least 1");
  return value;
}

export function runHandlers(db: StoreDb, limits: PageDecodeLimits): Impl {
  return {
    async beginRun(req) {
      const feed = parseFeed(req.feed);
      const holder = requiredText(req.holder, "holder", 191);
      const trigger = triggerCodes.toDb(req.trigger);
      if (trigger === undefined) throw badRequest("trigger must be set");
      const result = await beginRun(db, {
        feed,
        holder,
        fence: fenceToken(req.fenceToken),
        trigger,
        pool: poolCodes.toDb(req.pool) ?? null,
      });
      return {
        runId: result.run.runId,
        cursor: result.cursor,
        run: result.run,
        ...(result.nextEligibleAt ? { nextEligibleAt: timestampFromDate(result.nextEligibleAt) } : {}),
        ...(result.cooldownUntil ? { cooldownUntil: timestampFromDate(result.cooldownUntil) } : {}),
      };
    },

    async applyBatch(req, ctx) {
      const feed = parseFeed(req.feed);
      const items = await batchItems(req, limits, ctx.signal);
      const result = await applyBatch(db, {
        feed,
        runId: parseRunId(req.runId),
        fence: fenceToken(req.fenceToken),
        items,
        newCursor: req.newCursor,
        maxNsuSeen: req.progress?.maxNsuSeen ?? 0n,
      });
      return { counts: result.counts, cursor: result.cursor, cancelRequested: result.cancelRequested };
    },

    async finishRun(req) {
      const feed = parseFeed(req.feed);
      if (req.outcome === RunOutcome.ABANDONED) throw badRequest("outcome ABANDONED is set by the store only");
      const outcome = outcomeCodes.toDb(req.outcome);
      if (outcome === undefined) throw badRequest("outcome must be set");
      if (req.outcome === RunOutcome.CAUGHT_UP && !req.nextEligibleAt) throw badRequest("next_eligible_at is required for CAUGHT_UP");
      if (req.outcome === RunOutcome.RATE_LIMITED && !req.cooldownUntil) throw badRequest("cooldown_until is required for RATE_LIMITED");
      const result = await finishRun(db, {
        feed,
        runId: parseRunId(req.runId),
        fence: fenceToken(req.fenceToken),
        outcome,
        errorMessage: optionalText(req.errorMessage, "error_message", 4000),
        nextEligibleAt: optionalTime(req.nextEligibleAt) ?? null,
        cooldownUntil: optionalTime(req.cooldownUntil) ?? null,
      });
      return result;
    },

    async requestRunCancellation(req) {
      const requestedBy = optionalText(req.requestedBy, "requested_by", 191);
      const reason = optionalText(req.reason, "reason", 1000);
      const target = req.target;
      if (target.case === "runId") {
        const result = await requestCancellation(db, { runId: parseRunId(target.value) }, requestedBy, reason);
        return result;
      }
      if (target.case === "feed") return requestCancellation(db, { feed: parseFeed(target.value) }, requestedBy, reason);
      throw badRequest("run_id or feed is required");
    },

    async expireStaleRuns(req) {
      const staleBefore = requiredTime(req.staleBefore, "stale_before");
      return { expired: await expireStaleRuns(db, staleBefore, optionalText(req.requestedBy, "requested_by", 191)) };
    },

    async purgeRunLogs(req) {
      const finishedBefore = requiredTime(req.finishedBefore, "finished_before");
      const failedFinishedBefore = requiredTime(req.failedFinishedBefore, "failed_finished_before");
      return { deleted: BigInt(await purgeRunLogs(db, finishedBefore, failedFinishedBefore)) };
    },

    async getRun(req) {
      return { run: await getRun(db, parseRunId(req.runId)) };
    },
  };
}
