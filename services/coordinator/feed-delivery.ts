// The coordinator's end of the gateway's DeliverFeeds: the runs' deliveries share a few long streams
// (docs/decisions/0044-many-deliveries-on-one-stream.md). A run opens a delivery with `start`, takes its
// page reports one by one — acknowledging each as it takes it (the gateway applies at most 2 pages beyond
// the last acknowledgement, so a paused coordinator pauses the delivery) — sends `stop` to end after the
// page being applied, and `cancel` when the run ends any other way. The page bytes never come here: they
// go from the gateway to the store (0020). A gateway that shuts down says `closing`: its stream takes no
// more deliveries, and a start it refused meanwhile goes out again on a new stream (0045).
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, type Client, ConnectError } from "@connectrpc/connect";
import type {
  AdnGatewayService,
  DeliverFeedReport,
  DeliverFeedsRequestSchema,
  DeliverFeedsResponse,
  DeliverFeedStartSchema,
  DeliveryEnd,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { errorOfEntryStatus } from "../../libs/rpc/entry-errors.js";
import { isServerClosing } from "../../libs/rpc/errors.js";
import { MessageQueue } from "../../libs/rpc/message-queue.js";
import { traceHeaders } from "../../libs/tracing/spans.js";

type Message = MessageInitShape<typeof DeliverFeedsRequestSchema>;
type Start = MessageInitShape<typeof DeliverFeedStartSchema>;

export interface FeedDeliveriesOptions {
  /** A stream takes new deliveries this long after it opened; later ones go to a new stream. */
  streamOpenMs: number;
  /** A delivery not ended after this long is cancelled and fails with DEADLINE_EXCEEDED (a run's bound). */
  deliveryTimeoutMs: number;
}

export const FEED_DELIVERIES: FeedDeliveriesOptions = { streamOpenMs: 60_000, deliveryTimeoutMs: 10 * 60_000 };

/** The first wait before a start refused by a closing gateway goes out again on a new stream, and the longest. */
const MOVE_DELAY_MS = 50;
const MAX_MOVE_DELAY_MS = 2_000;

/** Opens deliveries on the gateway's DeliverFeeds streams. */
export class FeedDeliveries {
  private current: DeliveryStream | undefined;
  private readonly streams = new Set<DeliveryStream>();

  constructor(
    private readonly gateway: Client<typeof AdnGatewayService>,
    private readonly options: FeedDeliveriesOptions = FEED_DELIVERIES,
  ) {}

  /** Starts a delivery; `signal` cancels it at once (and with it the ADN call ahead). */
  open(start: Start, signal: AbortSignal): FeedDelivery {
    const delivery = new FeedDelivery(this, start, signal, this.options.deliveryTimeoutMs);
    this.place(delivery);
    return delivery;
  }

  /** Puts a delivery on the stream that takes new ones, opening one when there is none. */
  place(delivery: FeedDelivery): void {
    if (!this.current?.accepting()) {
      const previous = this.current;
      this.current = new DeliveryStream(this.gateway, this.options, (s) => this.streams.delete(s));
      this.streams.add(this.current);
      previous?.drain();
    }
    this.current.add(delivery);
  }

  /** Ends every stream and the deliveries on it (shutdown). */
  close(): void {
    for (const s of this.streams) s.abort();
    this.streams.clear();
    this.current = undefined;
  }

  /** Streams open now (for tests and metrics). */
  get streamCount(): number {
    return this.streams.size;
  }
}

/** One DeliverFeeds stream and its open deliveries. */
class DeliveryStream {
  private readonly outbox = new MessageQueue<Message>();
  private readonly deliveries = new Map<number, FeedDelivery>();
  private nextId = 1;
  private readonly openedAt = performance.now();
  private ended = false;
  private draining = false;
  private readonly call = new AbortController();

  constructor(
    gateway: Client<typeof AdnGatewayService>,
    private readonly options: FeedDeliveriesOptions,
    private readonly onEnd: (s: DeliveryStream) => void,
  ) {
    // Its deliveries start within streamOpenMs and each ends within deliveryTimeoutMs: the stream's deadline
    // only catches a gateway that stopped answering altogether.
    const timeoutMs = options.streamOpenMs + options.deliveryTimeoutMs + 60_000;
    void this.read(gateway.deliverFeeds(this.outbox, { signal: this.call.signal, timeoutMs }));
  }

  accepting(): boolean {
    return !this.ended && !this.draining && performance.now() - this.openedAt < this.options.streamOpenMs;
  }

  add(delivery: FeedDelivery): void {
    const id = this.nextId++;
    this.deliveries.set(id, delivery);
    delivery.attach(this, id);
  }

  /** No new deliveries: the stream closes once its last one ended. */
  drain(): void {
    this.draining = true;
    this.closeIfDone();
  }

  abort(): void {
    this.call.abort();
  }

  send(message: Message): void {
    this.outbox.push(message);
  }

  /** A delivery that ended (or was cancelled) leaves the stream. */
  forget(id: number): void {
    this.deliveries.delete(id);
    this.closeIfDone();
  }

  private closeIfDone(): void {
    if (this.deliveries.size === 0 && !this.accepting()) this.outbox.close();
  }

  private async read(responses: AsyncIterable<DeliverFeedsResponse>): Promise<void> {
    let failure: ConnectError | undefined;
    try {
      for await (const m of responses) {
        if (m.part.case === "closing") {
          this.drain();
          continue;
        }
        const d = this.deliveries.get(m.delivery);
        if (!d) continue; // cancelled here while its messages were under way
        if (m.part.case === "report") d.report(m.part.value);
        else if (m.part.case === "end") d.end(m.part.value);
      }
    } catch (err) {
      failure = ConnectError.from(err);
      // Not cancelled by us: the gateway went away under the stream (its connection closed resets the stream
      // with CANCEL). For the deliveries that is the gateway being unavailable, which a run retries.
      if (failure.code === Code.Canceled && !this.call.signal.aborted)
        failure = new ConnectError(`the DeliverFeeds stream broke: ${failure.rawMessage}`, Code.Unavailable);
    }
    this.ended = true;
    this.outbox.close();
    this.onEnd(this);
    // The stream ended under them: each fails as its own call would have (UNAVAILABLE when the gateway went away).
    const error = failure ?? new ConnectError("the gateway ended the DeliverFeeds stream with deliveries still open", Code.Unavailable);
    for (const d of [...this.deliveries.values()]) d.fail(error);
    this.deliveries.clear();
  }
}

/** One run's delivery: its reports in page order, then its end. */
export class FeedDelivery {
  private readonly start: Start;
  private stream: DeliveryStream | undefined;
  private id = 0;
  private readonly reports: DeliverFeedReport[] = [];
  private done = false;
  private error: ConnectError | undefined;
  private waiting: (() => void) | undefined;
  private taken = 0n;
  private stopSent = false;
  private moves = 0;
  private readonly timer: NodeJS.Timeout;
  private readonly onAbort = () => this.cancel(new ConnectError("the delivery was cancelled", Code.Canceled));

  constructor(
    private readonly owner: FeedDeliveries,
    start: Start,
    private readonly signal: AbortSignal,
    timeoutMs: number,
  ) {
    // The run's span is current here, not where the start is sent (a move sends it again).
    this.start = { ...start, traceContext: traceHeaders() };
    this.timer = setTimeout(
      () => this.cancel(new ConnectError(`the delivery took longer than ${timeoutMs} ms`, Code.DeadlineExceeded)),
      timeoutMs,
    );
    this.timer.unref?.();
    if (signal.aborted) queueMicrotask(this.onAbort);
    else signal.addEventListener("abort", this.onAbort, { once: true });
  }

  /** Its stream numbered it: the start goes out (and a stop asked for while it had no stream). */
  attach(stream: DeliveryStream, id: number): void {
    this.stream = stream;
    this.id = id;
    stream.send({ delivery: id, part: { case: "start", value: this.start } });
    if (this.stopSent) stream.send({ delivery: id, part: { case: "stop", value: {} } });
  }

  /** The next page's report; undefined once the delivery ended with code 0. Rejects with its error. */
  async next(): Promise<DeliverFeedReport | undefined> {
    for (;;) {
      const report = this.reports.shift();
      if (report) {
        this.taken++;
        this.stream?.send({ delivery: this.id, part: { case: "ackedPages", value: this.taken } });
        return report;
      }
      if (this.error) throw this.error;
      if (this.done) return undefined;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }

  /** Asks the gateway to end after the page it is applying; the reports already under way still arrive. */
  stop(): void {
    if (this.stopSent || this.done) return;
    this.stopSent = true;
    this.stream?.send({ delivery: this.id, part: { case: "stop", value: {} } });
  }

  /** Ends the delivery if it has not ended (the run is over): the gateway abandons it at once. */
  close(): void {
    if (!this.done) this.cancel(new ConnectError("the delivery was closed", Code.Canceled));
  }

  report(report: DeliverFeedReport): void {
    this.reports.push(report);
    this.wake();
  }

  end(end: DeliveryEnd): void {
    const error = end.code === 0 ? undefined : errorOfEntryStatus(end);
    // A gateway that is shutting down refused the start and did nothing: the stream takes no more, and the
    // delivery starts again on a new one, which the client opens on a new connection (decision 0045).
    if (error && isServerClosing(error) && this.reports.length === 0 && this.taken === 0n) this.restart();
    else this.finish(error);
  }

  fail(error: ConnectError): void {
    this.finish(error);
  }

  /** The gateway did nothing with it (it is shutting down): it goes out again on another stream. */
  private restart(): void {
    const from = this.stream;
    this.stream = undefined;
    from?.drain();
    from?.forget(this.id);
    // Soon, then less often: a client may open the next stream before it has read the GOAWAY, or reach
    // another replica that is shutting down too. The delivery's timeout bounds the moves.
    const delayMs = Math.min(MOVE_DELAY_MS * 2 ** this.moves++, MAX_MOVE_DELAY_MS);
    setTimeout(() => {
      if (!this.done) this.owner.place(this);
    }, delayMs).unref?.();
  }

  private cancel(error: ConnectError): void {
    if (this.done) return;
    this.stream?.send({ delivery: this.id, part: { case: "cancel", value: {} } });
    this.finish(error);
  }

  private finish(error: ConnectError | undefined): void {
    if (this.done) return;
    this.done = true;
    this.error = error;
    clearTimeout(this.timer);
    this.signal.removeEventListener("abort", this.onAbort);
    this.stream?.forget(this.id);
    this.wake();
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }
}
