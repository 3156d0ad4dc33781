import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type ServiceImpl } from "@connectrpc/connect";
import type { ApplyBatchRequest, BeginRunRequest, FinishRunRequest, StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { currentScope } from "../../../libs/rpc/context.js";
import { entryStatusOf } from "../../../libs/rpc/entry-errors.js";
import { RunOutcome } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { outcomeCodes, parseFeed, poolCodes, triggerCodes } from "../codes.js";
import { badRequest } from "../errors.js";
import type { StoreDb } from "../repo/context.js";
import { RunPageOrder } from "../run-page-order.js";
import { type ApplyBatchInput, type ApplyBatchResult, applyBatch, applyBatches } from "../repo/apply-batch.js";
import { beginRuns, type BeginRunInput, type BeginRunResult } from "../repo/begin-runs.js";
import { feedKey } from "../repo/feed-rows.js";
import { finishRuns, type FinishRunInput } from "../repo/finish-runs.js";
import { beginRun, expireStaleRuns, finishRun, getRun, purgeRunLogs, requestCancellation } from "../repo/runs.js";
import { parseRunId } from "../repo/state.js";
import type { PageDecoder } from "../page-decoder.js";
import { noStoreMetrics, type StoreMetrics } from "../metrics.js";
import { batchRows } from "./batch-items.js";
import { optionalText, optionalTime, requiredText, requiredTime } from "./validate.js";

type Impl = Partial<ServiceImpl<typeof StoreService>>;

function fenceToken(value: bigint): bigint {
  if (value < 1n) throw badRequest("fence_token must be at least 1");
  return value;
}

/** Most entries one BeginRuns/FinishRuns takes (store.proto). */
export const MAX_RUN_ENTRIES = 500;

/** Most pages one ApplyBatches takes (store.proto): its request stays within the server's read limit. */
export const MAX_APPLY_ENTRIES = 64;

/** An ApplyBatch request as the repository takes it, its page decoded (in the decode threads). */
async function applyInput(req: ApplyBatchRequest, decoder: PageDecoder): Promise<ApplyBatchInput> {
  const feed = parseFeed(req.feed);
  const runId = parseRunId(req.runId);
  const fence = fenceToken(req.fenceToken);
  const rows = await batchRows(req, feed, runId, decoder);
  return {
    feed,
    runId,
    fence,
    rows,
    newCursor: req.newCursor,
    maxNsuSeen: req.progress?.maxNsuSeen ?? 0n,
    ...(req.followsCursor !== undefined ? { followsCursor: req.followsCursor } : {}),
  };
}

/** The runs of a call's pages, and those whose page follows a cursor (decision 0052). */
function enterRuns(order: RunPageOrder, batches: readonly ApplyBatchRequest[]) {
  return order.enter(
    batches.map((b) => b.runId),
    new Set(batches.flatMap((b) => (b.followsCursor !== undefined ? [b.runId] : []))),
  );
}

const appliedOf = (result: ApplyBatchResult) => ({ counts: result.counts, cursor: result.cursor, cancelRequested: result.cancelRequested });

function beginInput(req: BeginRunRequest): BeginRunInput {
  const feed = parseFeed(req.feed);
  const holder = requiredText(req.holder, "holder", 191);
  const trigger = triggerCodes.toDb(req.trigger);
  if (trigger === undefined) throw badRequest("trigger must be set");
  return { feed, holder, fence: fenceToken(req.fenceToken), trigger, pool: poolCodes.toDb(req.pool) ?? null };
}

/** BeginRun's answer; `brief` leaves the run record out (BeginRunsRequest.brief, decision 0064). */
function begunOf(result: BeginRunResult, brief = false) {
  return {
    runId: result.run.runId,
    cursor: result.cursor,
    ...(brief ? {} : { run: result.run }),
    shortPageEnds: result.shortPageEnds,
    ...(result.nextEligibleAt ? { nextEligibleAt: timestampFromDate(result.nextEligibleAt) } : {}),
    ...(result.cooldownUntil ? { cooldownUntil: timestampFromDate(result.cooldownUntil) } : {}),
  };
}

function finishInput(req: FinishRunRequest): FinishRunInput {
  const feed = parseFeed(req.feed);
  if (req.outcome === RunOutcome.ABANDONED) throw badRequest("outcome ABANDONED is set by the store only");
  const outcome = outcomeCodes.toDb(req.outcome);
  if (outcome === undefined) throw badRequest("outcome must be set");
  if (req.outcome === RunOutcome.CAUGHT_UP && !req.nextEligibleAt) throw badRequest("next_eligible_at is required for CAUGHT_UP");
  if (req.outcome === RunOutcome.RATE_LIMITED && !req.cooldownUntil) throw badRequest("cooldown_until is required for RATE_LIMITED");
  if (req.endedAtShortPage && req.outcome !== RunOutcome.CAUGHT_UP)
    throw badRequest(`ended_at_short_page is only for CAUGHT_UP, not ${RunOutcome[req.outcome]}`);
  return {
    feed,
    runId: parseRunId(req.runId),
    fence: fenceToken(req.fenceToken),
    outcome,
    errorMessage: optionalText(req.errorMessage, "error_message", 4000),
    nextEligibleAt: optionalTime(req.nextEligibleAt) ?? null,
    cooldownUntil: optionalTime(req.cooldownUntil) ?? null,
    endedAtShortPage: req.endedAtShortPage,
  };
}

/**
 * The entries of a batched run call, each parsed as its single-entry RPC parses it. A malformed entry
 * fails the whole call with its index in the message (`runs[3]: holder …`) and the single call's code
 * and details; so does a feed (or run) listed twice, whose writes in one transaction would collide.
 */
function entries<R, I>(reqs: readonly R[], parse: (req: R) => I, identity: (input: I) => string, field: string): I[] {
  if (reqs.length > MAX_RUN_ENTRIES) throw badRequest(`runs has ${reqs.length} entries; at most ${MAX_RUN_ENTRIES}`);
  const seen = new Map<string, number>();
  return reqs.map((req, i) => {
    let input: I;
    try {
      input = parse(req);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      const named = new ConnectError(`runs[${i}]: ${err.rawMessage}`, err.code);
      named.details = err.details;
      throw named;
    }
    const id = identity(input);
    const first = seen.get(id);
    if (first !== undefined) throw badRequest(`runs[${i}].${field} repeats runs[${first}].${field}`);
    seen.set(id, i);
    return input;
  });
}

export function runHandlers(
  db: StoreDb,
  decoder: PageDecoder,
  metrics: StoreMetrics = noStoreMetrics,
  order: RunPageOrder = new RunPageOrder(),
): Impl {
  return {
    async beginRun(req) {
      return begunOf(await beginRun(db, beginInput(req)));
    },

    async beginRuns(req) {
      const inputs = entries(req.runs, beginInput, (i) => feedKey(i.feed), "feed");
      const outcomes = await beginRuns(db, inputs);
      return {
        results: outcomes.map((o) =>
          o.ok
            ? { result: { case: "begun" as const, value: begunOf(o.value, req.brief) } }
            : { result: { case: "refused" as const, value: entryStatusOf(o.error) } },
        ),
      };
    },

    async applyBatch(req, ctx) {
      const pages = enterRuns(order, [req]);
      try {
        const input = await applyInput(req, decoder);
        await Promise.all(pages.before);
        ctx.signal.throwIfAborted();
        return appliedOf(await applyBatch(db, input).finally(metrics.applyWrite("ApplyBatch")));
      } finally {
        pages.done();
      }
    },

    async applyBatches(req, ctx) {
      if (req.batches.length > MAX_APPLY_ENTRIES)
        throw badRequest(`batches has ${req.batches.length} entries; at most ${MAX_APPLY_ENTRIES}`);
      const seen = new Map<string, number>();
      const pages = enterRuns(order, req.batches);
      try {
        // Each entry parsed and decoded as ApplyBatch does it; what it would refuse is that entry's answer,
        // and so is a run listed again without following a cursor (its pages must not meet in one
        // transaction; one that follows goes into a later one, decision 0052).
        const parsed = await Promise.all(
          req.batches.map((b, i) => {
            const first = seen.get(b.runId);
            if (first !== undefined && b.followsCursor === undefined) {
              return {
                ok: false as const,
                error: badRequest(`batches[${i}].run_id repeats batches[${first}].run_id; nothing was written for it`),
              };
            }
            seen.set(b.runId, i);
            return applyInput(b, decoder).then(
              (input) => ({ ok: true as const, input }),
              (err: unknown) => {
                if (err instanceof ConnectError && err.code !== Code.Unavailable) return { ok: false as const, error: err };
                throw err;
              },
            );
          }),
        );
        await Promise.all(pages.before);
        ctx.signal.throwIfAborted();
        const inputs = parsed.flatMap((p) => (p.ok ? [p.input] : []));
        const outcomes = await applyBatches(db, inputs).finally(metrics.applyWrite("ApplyBatches"));
        for (const o of outcomes) {
          if (!o.ok && o.error.code === Code.Internal) currentScope()?.log.error({ err: o.error.cause }, "a page of ApplyBatches failed");
        }
        let next = 0;
        return {
          results: parsed.map((p) => {
            const o = p.ok ? outcomes[next++]! : { ok: false as const, error: p.error };
            return o.ok
              ? { result: { case: "applied" as const, value: appliedOf(o.value) } }
              : { result: { case: "refused" as const, value: entryStatusOf(o.error) } };
          }),
        };
      } finally {
        pages.done();
      }
    },

    async finishRun(req) {
      return finishRun(db, finishInput(req));
    },

    async finishRuns(req) {
      const inputs = entries(req.runs, finishInput, (i) => i.runId, "run_id");
      const outcomes = await finishRuns(db, inputs, req.brief);
      return {
        results: outcomes.map((o) =>
          o.ok
            ? { result: { case: "finished" as const, value: o.value } }
            : { result: { case: "refused" as const, value: entryStatusOf(o.error) } },
        ),
      };
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
