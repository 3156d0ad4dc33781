// BeginRun and FinishRun as syncFeed calls them, sent as BeginRuns/FinishRuns: the runs that begin (or
// finish) within a couple of milliseconds of each other share one store call and one transaction
// (docs/decisions/0036-batched-run-begin-and-finish.md). Each run still gets its own answer, or the very
// error BeginRun/FinishRun would have thrown (StaleFence, NotEligible, … as details), so syncFeed's
// per-feed logic does not change; fencing stays per feed in the store (0008).
import type { Client } from "@connectrpc/connect";
import type { BeginRunResponse, FinishRunResponse, StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { BatchObserver } from "../../libs/batching/metrics.js";
import { type Batching, tracedBatcher } from "../../libs/batching/traced-batcher.js";
import { answerOfEntry } from "../../libs/rpc/entry-errors.js";

/** What syncFeed needs of the store: the store client itself, or the batched calls below. */
export type RunCalls = Pick<Client<typeof StoreService>, "beginRun" | "finishRun">;

type BeginRequest = Parameters<RunCalls["beginRun"]>[0];
type FinishRequest = Parameters<RunCalls["finishRun"]>[0];

/**
 * A run waits at most 2 ms when the store is idle; under load the batches grow while the previous
 * ones are out (two at a time, so one slow transaction does not stall every worker). 0036 has the figures.
 * At most 128 runs per call (the store takes 500).
 */
export const RUN_BATCHING: Batching = { maxSize: 128, maxDelayMs: 2, maxInFlight: 2 };

export function batchedRunCalls(
  store: Pick<Client<typeof StoreService>, "beginRuns" | "finishRuns">,
  batching: Batching = RUN_BATCHING,
  observe?: (call: "BeginRuns" | "FinishRuns") => BatchObserver,
): RunCalls & { close(): Promise<void> } {
  const begins = tracedBatcher(
    { entry: "begin run (batched)", batch: "begin runs (batched)" },
    batching,
    async (runs: BeginRequest[]) =>
      (await store.beginRuns({ runs, brief: true })).results.map((r) => answerOfEntry<BeginRunResponse>(r.result, "begun")),
    observe?.("BeginRuns"),
  );
  const finishes = tracedBatcher(
    { entry: "finish run (batched)", batch: "finish runs (batched)" },
    batching,
    async (runs: FinishRequest[]) =>
      (await store.finishRuns({ runs, brief: true })).results.map((r) => answerOfEntry<FinishRunResponse>(r.result, "finished")),
    observe?.("FinishRuns"),
  );
  return {
    beginRun: (request, options) => begins.submit(request, options?.signal),
    finishRun: (request, options) => finishes.submit(request, options?.signal),
    async close() {
      await Promise.all([begins.close(), finishes.close()]);
    },
  };
}
