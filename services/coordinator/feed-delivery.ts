// The coordinator's end of a gateway DeliverFeed: it sends `start`, acknowledges each page report as it
// takes it (the gateway applies at most 2 pages beyond the last acknowledgement, so a paused coordinator
// pauses the delivery), and `stop` to end after the page being applied. The page bytes never come here:
// they go from the gateway to the store (docs/decisions/0020-pages-from-gateway-to-store.md).
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { Client } from "@connectrpc/connect";
import type {
  AdnGatewayService,
  DeliverFeedRequestSchema,
  DeliverFeedResponse,
  DeliverFeedStartSchema,
} from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";

type Message = MessageInitShape<typeof DeliverFeedRequestSchema>;

export class FeedDelivery {
  private readonly outbox: Message[] = [];
  private outboxClosed = false;
  private wakeSender: (() => void) | undefined;
  private readonly reports: AsyncIterator<DeliverFeedResponse>;
  private taken = 0n;
  private stopSent = false;

  /** Starts the DeliverFeed; `signal` cancels it at once (and with it the ADN call ahead). */
  constructor(gateway: Client<typeof AdnGatewayService>, start: MessageInitShape<typeof DeliverFeedStartSchema>, signal: AbortSignal) {
    this.outbox.push({ part: { case: "start", value: start } });
    this.reports = gateway.deliverFeed(this.messages(signal), { signal })[Symbol.asyncIterator]();
  }

  /** The next page's report; undefined once the gateway ended the stream with OK. Rejects with its error. */
  async next(): Promise<DeliverFeedResponse | undefined> {
    const r = await this.reports.next();
    if (r.done) {
      this.close();
      return undefined;
    }
    this.taken++;
    this.send({ part: { case: "ackedPages", value: this.taken } });
    return r.value;
  }

  /** Asks the gateway to end after the page it is applying; the reports already under way still arrive. */
  stop(): void {
    if (this.stopSent) return;
    this.stopSent = true;
    this.send({ part: { case: "stop", value: {} } });
  }

  /** Ends our side of the stream (after the gateway ended, or when the run is over). */
  close(): void {
    this.outboxClosed = true;
    this.wakeSender?.();
  }

  private send(message: Message): void {
    if (this.outboxClosed) return;
    this.outbox.push(message);
    this.wakeSender?.();
  }

  private async *messages(signal: AbortSignal): AsyncGenerator<Message> {
    const aborted = () => this.close();
    signal.addEventListener("abort", aborted, { once: true });
    try {
      for (;;) {
        const message = this.outbox.shift();
        if (message) {
          yield message;
          continue;
        }
        if (this.outboxClosed) return;
        await new Promise<void>((resolve) => (this.wakeSender = resolve));
      }
    } finally {
      signal.removeEventListener("abort", aborted);
    }
  }
}
