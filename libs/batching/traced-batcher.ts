// A MicroBatcher whose entries keep their place in their own traces: each entry waits in a span of its
// caller's trace, and the batch call, which serves many callers, runs in a trace of its own that links
// to every entry's waiting span (docs/decisions/0036-batched-run-begin-and-finish.md). Under load a batch
// goes out from the previous one's callback and would otherwise chain every later batch into the first
// caller's trace. For the same reason the call runs outside any request scope: sent from within one
// caller's RPC, it would inherit that RPC's cancellation and deadline (libs/rpc/client.ts), and that
// caller's end would cancel every other caller's entry (0040).
import { runDetached } from "../rpc/context.js";
import { inSpan, ROOT_CONTEXT, SpanKind, type SpanContext } from "../tracing/spans.js";
import type { BatchObserver } from "./metrics.js";
import { type BatchAnswer, MicroBatcher, type MicroBatcherOptions } from "./micro-batcher.js";

/** The MicroBatcher's limits, every one chosen by the caller. */
export type Batching = Required<Pick<MicroBatcherOptions<unknown, unknown>, "maxSize" | "maxDelayMs" | "maxInFlight">>;

interface Entry<R> {
  request: R;
  waiting: SpanContext;
}

export interface TracedBatcher<R, O> {
  submit(request: R, signal?: AbortSignal): Promise<O>;
  /** Sends what is queued and waits for every call out. */
  close(): Promise<void>;
}

/**
 * `names.entry` names the span an entry waits in, `names.batch` the batch call's root span; `observe`
 * hears each call's size (metrics.ts).
 */
export function tracedBatcher<R, O>(
  names: { entry: string; batch: string },
  batching: Batching,
  send: (requests: R[]) => Promise<BatchAnswer<O>[]>,
  observe?: BatchObserver,
): TracedBatcher<R, O> {
  const batcher = new MicroBatcher<Entry<R>, O>({
    ...batching,
    send: (entries) => {
      observe?.(entries.length);
      return runDetached(() =>
        inSpan(
          names.batch,
          {
            kind: SpanKind.INTERNAL,
            parent: ROOT_CONTEXT,
            links: entries.map((e) => ({ context: e.waiting })),
            attributes: { "malha.batch.size": entries.length },
          },
          () => send(entries.map((e) => e.request)),
        ),
      );
    },
  });
  return {
    submit: (request, signal) =>
      inSpan(names.entry, { kind: SpanKind.INTERNAL }, (span) => batcher.submit({ request, waiting: span.spanContext() }, signal)),
    close: () => batcher.close(),
  };
}
