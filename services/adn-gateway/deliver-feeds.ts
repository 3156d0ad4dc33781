// DeliverFeeds: many sync runs' deliveries on one stream (adn_gateway.proto; decision 0044). The stream is
// shared work: a delivery costs a few messages on it instead of an HTTP/2 stream, a handler context and
// an access line of its own. Each delivery runs deliverFeed (deliver-feed.ts) on its own; this file only
// routes the caller's messages to it, tags its reports, and sends how it ended as data, so that one
// delivery's error never ends another.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type {
  DeliverFeedStart,
  DeliverFeedsRequest,
  DeliverFeedsResponseSchema,
  DeliveryEndSchema,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { currentScope } from "../../libs/rpc/context.js";
import { entryStatusOf } from "../../libs/rpc/entry-errors.js";
import { invalidArgument, logLevelOf, resourceExhausted, serverClosing, toWireError } from "../../libs/rpc/errors.js";
import { MessageQueue } from "../../libs/rpc/message-queue.js";
import { contextFrom, inSpan, SpanKind } from "../../libs/tracing/spans.js";
import { type DeliverFeedDeps, DeliveryControl, deliverFeed } from "./deliver-feed.js";

type Response = MessageInitShape<typeof DeliverFeedsResponseSchema>;
type End = MessageInitShape<typeof DeliveryEndSchema>;

/** Deliveries one stream may have open; a `start` beyond them ends that delivery with RESOURCE_EXHAUSTED. */
export const MAX_OPEN_DELIVERIES = 4096;

export interface DeliverFeedsDeps extends DeliverFeedDeps {
  /** How each delivery ended, by code name (metrics.ts). */
  ended?: (code: string) => void;
}

interface Delivery {
  control: DeliveryControl;
  cancel: AbortController;
  cancelled: boolean;
}

export async function* deliverFeeds(
  deps: DeliverFeedsDeps,
  requests: AsyncIterable<DeliverFeedsRequest>,
  signal: AbortSignal,
  closing: AbortSignal,
): AsyncGenerator<Response> {
  const outbox = new MessageQueue<Response>();
  const open = new Map<number, Delivery>();
  let callerDone = false;
  let violation: ConnectError | undefined;
  // The responses end once the caller's side has ended and every delivery with it (the caller ends first:
  // connect's client leaves its side of a stream open for good when the server's side ends before it).
  const closeIfDone = () => {
    if (callerDone && open.size === 0) outbox.close();
  };
  // The server is closing: the caller hears it once, opens no more deliveries here and closes its side.
  const announceClosing = () => outbox.push({ delivery: 0, part: { case: "closing", value: {} } });
  // At once, and nothing more is sent for it: the page being applied still commits or fails in the store.
  const cancel = (d: Delivery) => {
    d.cancelled = true;
    d.control.stop();
    d.cancel.abort();
  };

  // Ended before it began: nothing was called or applied.
  const refuse = (id: number, err: ConnectError) => {
    outbox.push({ delivery: id, part: { case: "end", value: entryStatusOf(err) } });
    deps.ended?.(codeName(err.code));
  };
  const begin = (id: number, start: DeliverFeedStart) => {
    const d: Delivery = { control: new DeliveryControl(), cancel: new AbortController(), cancelled: false };
    open.set(id, d);
    void run(id, start, d);
  };
  const run = async (id: number, start: DeliverFeedStart, d: Delivery) => {
    let end: End = { code: 0 };
    try {
      // The run's trace: the coordinator's span for this delivery is the parent of the gateway's.
      const parent = contextFrom((key) => start.traceContext[key]);
      await inSpan(
        "deliver feed",
        { kind: SpanKind.SERVER, parent, attributes: { "malha.feed": start.feed?.ibge ?? "", "malha.run": start.runId } },
        async () => {
          for await (const report of deliverFeed(deps, start, d.control, d.cancel.signal)) {
            if (d.cancelled) return;
            outbox.push({ delivery: id, part: { case: "report", value: report } });
          }
        },
      );
    } catch (err) {
      if (logLevelOf(err) === "error" && !d.cancelled) deps.log.error({ err, runId: start.runId }, "delivery failed unexpectedly");
      end = entryStatusOf(toWireError(err, currentScope()?.requestId ?? "none"));
    } finally {
      open.delete(id);
      if (!d.cancelled) {
        outbox.push({ delivery: id, part: { case: "end", value: end } });
        deps.ended?.(codeName(end.code ?? 0));
      }
      closeIfDone();
    }
  };

  const read = async () => {
    try {
      for await (const m of requests) {
        const id = m.delivery;
        if (id === 0) throw invalidArgument("delivery must be at least 1");
        const d = open.get(id);
        switch (m.part.case) {
          case "start":
            if (d) throw invalidArgument(`delivery ${id} is open: a start must name a delivery that is not`);
            // The open deliveries run on; a new one would hold the shutdown up, so it goes to another replica.
            if (closing.aborted) refuse(id, serverClosing("this gateway is shutting down: open the delivery on a new stream"));
            else if (open.size >= MAX_OPEN_DELIVERIES)
              refuse(id, resourceExhausted(`this stream has ${MAX_OPEN_DELIVERIES} deliveries open; open another stream`));
            else begin(id, m.part.value);
            break;
          // A delivery that ended while these were under way: nothing left to acknowledge or stop.
          case "ackedPages":
            d?.control.ack(m.part.value);
            break;
          case "stop":
            d?.control.stop();
            break;
          case "cancel":
            if (d && !d.cancelled) {
              cancel(d);
              deps.ended?.("Canceled");
            }
            break;
          default:
            throw invalidArgument(`delivery ${id}: a message without a part (start, acked_pages, stop or cancel)`);
        }
      }
    } catch (err) {
      // A protocol violation ends the stream; the caller going away ends it through `signal`.
      if (err instanceof ConnectError) violation = err;
    }
    callerDone = true;
    if (violation) outbox.close();
    // A caller that closes its side has nothing more to acknowledge: a stop for every open delivery.
    for (const d of open.values()) d.control.stop();
    closeIfDone();
  };
  void read();
  // The stream cancelled (the caller gone, the server stopping): the finally below cancels what is open.
  const stopSending = () => outbox.close();
  signal.addEventListener("abort", stopSending, { once: true });
  if (closing.aborted) announceClosing();
  else closing.addEventListener("abort", announceClosing, { once: true });

  try {
    yield* outbox;
    if (violation) throw violation;
  } finally {
    signal.removeEventListener("abort", stopSending);
    closing.removeEventListener("abort", announceClosing);
    // Whoever stops reading the stream (connect, on any end) ends what is still open.
    for (const d of open.values()) cancel(d);
  }
}

/** The code's name as the RPC metrics spell it (`FailedPrecondition`, …). */
function codeName(code: number): string {
  return code === 0 ? "OK" : (Code[code] ?? "Unknown");
}
