// BeginRun and FinishRun as syncFeed calls them, sent as BeginRuns/FinishRuns: the runs that begin (or
// finish) within a couple of milliseconds of each other share one store call and one transaction
// (docs/decisions/0036-batched-run-begin-and-finish.md). Each run still gets its own answer, or the very
// error BeginRun/FinishRun would have thrown (StaleFence, NotEligible, … as details), so syncFeed's
// per-feed logic does not change; fencing stays per feed in the store (0008).
import type { Client } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import type { BeginRunResponse, FinishRunResponse, StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { type BatchAnswer, MicroBatcher } from "../../libs/batching/micro-batcher.js";
import { errorOfEntryStatus, type EntryStatus } from "../../libs/rpc/entry-errors.js";

/** What syncFeed needs of the store: the store client itself, or the batched calls below. */
export type RunCalls = Pick<Client<typeof StoreService>, "beginRun" | "finishRun">;

type BeginRequest = Parameters<RunCalls["beginRun"]>[0];
type FinishRequest = Parameters<RunCalls["finishRun"]>[0];

export interface RunBatching {
  /** Most runs per call (the store takes at most 500). */
  maxSize: number;
  /** Longest a run waits for others when no call is out. */
  maxDelayMs: number;
  /** Calls out at once per kind; while they are, the next batch grows. */
  maxInFlight: number;
}

/**
 * A run waits at most 2 ms when the store is idle; under load the batches grow while the previous
 * ones are out (two at a time, so one slow transaction does not stall every worker). 0036 has the figures.
 */
export const RUN_BATCHING: RunBatching = { maxSize: 128, maxDelayMs: 2, maxInFlight: 2 };

function answerOf<T>(result: { case: string | undefined; value?: unknown }, okCase: string): BatchAnswer<T> {
  if (result.case === okCase) return { ok: true, value: result.value as T };
  if (result.case === "refused") return { ok: false, error: errorOfEntryStatus(result.value as EntryStatus) };
  return { ok: false, error: new ConnectError("the store answered a batched run entry with neither a result nor a refusal") };
}

export function batchedRunCalls(
  store: Pick<Client<typeof StoreService>, "beginRuns" | "finishRuns">,
  batching: RunBatching = RUN_BATCHING,
): RunCalls & { close(): Promise<void> } {
  const begins = new MicroBatcher<BeginRequest, BeginRunResponse>({
    ...batching,
    send: async (runs) => (await store.beginRuns({ runs })).results.map((r) => answerOf<BeginRunResponse>(r.result, "begun")),
  });
  const finishes = new MicroBatcher<FinishRequest, FinishRunResponse>({
    ...batching,
    send: async (runs) => (await store.finishRuns({ runs })).results.map((r) => answerOf<FinishRunResponse>(r.result, "finished")),
  });
  return {
    beginRun: (req, options) => begins.submit(req, options?.signal),
    finishRun: (req, options) => finishes.submit(req, options?.signal),
    async close() {
      await Promise.all([begins.close(), finishes.close()]);
    },
  };
}
