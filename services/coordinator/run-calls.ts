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
import { inSpan, ROOT_CONTEXT, SpanKind, type SpanContext } from "../../libs/tracing/spans.js";

/** What syncFeed needs of the store: the store client itself, or the batched calls below. */
export type RunCalls = Pick<Client<typeof StoreService>, "beginRun" | "finishRun">;

type BeginRequest = Parameters<RunCalls["beginRun"]>[0];
type FinishRequest = Parameters<RunCalls["finishRun"]>[0];

/** A run's request and the span it waits in, which the batch call links to. */
interface Entry<R> {
  request: R;
  waiting: SpanContext;
}

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

/**
 * One batch call, in a trace of its own: it serves many runs, so it is no run's child (under load a batch
 * goes out from the previous one's callback, and would chain every later batch into the first run's
 * trace). It links to each run's waiting span instead, and each run's trace keeps that span.
 */
function batchCall<R, O>(name: string, send: (requests: R[]) => Promise<BatchAnswer<O>[]>) {
  return (entries: Entry<R>[]) =>
    inSpan(
      name,
      {
        kind: SpanKind.INTERNAL,
        parent: ROOT_CONTEXT,
        links: entries.map((e) => ({ context: e.waiting })),
        attributes: { "malha.batch.size": entries.length },
      },
      () => send(entries.map((e) => e.request)),
    );
}

export function batchedRunCalls(
  store: Pick<Client<typeof StoreService>, "beginRuns" | "finishRuns">,
  batching: RunBatching = RUN_BATCHING,
): RunCalls & { close(): Promise<void> } {
  const begins = new MicroBatcher<Entry<BeginRequest>, BeginRunResponse>({
    ...batching,
    send: batchCall("begin runs (batched)", async (runs: BeginRequest[]) =>
      (await store.beginRuns({ runs })).results.map((r) => answerOf<BeginRunResponse>(r.result, "begun")),
    ),
  });
  const finishes = new MicroBatcher<Entry<FinishRequest>, FinishRunResponse>({
    ...batching,
    send: batchCall("finish runs (batched)", async (runs: FinishRequest[]) =>
      (await store.finishRuns({ runs })).results.map((r) => answerOf<FinishRunResponse>(r.result, "finished")),
    ),
  });
  return {
    beginRun: (request, options) =>
      inSpan("begin run (batched)", { kind: SpanKind.INTERNAL }, (span) =>
        begins.submit({ request, waiting: span.spanContext() }, options?.signal),
      ),
    finishRun: (request, options) =>
      inSpan("finish run (batched)", { kind: SpanKind.INTERNAL }, (span) =>
        finishes.submit({ request, waiting: span.spanContext() }, options?.signal),
      ),
    async close() {
      await Promise.all([begins.close(), finishes.close()]);
    },
  };
}
