// A gateway StreamFeed as the sync loop consumes it: complete pages in NSU order, each a head and the
// opaque bytes ApplyBatch takes (never decoded here). A reader keeps up to `ahead` complete pages so the
// gateway's next ADN call and its decoding overlap the store's applying; past that it stops reading,
// and HTTP/2 flow control holds the gateway back (docs/decisions/0003-streamfeed-one-adn-call-in-flight.md).
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AdnGatewayService, BatchHead, StreamFeedResponse } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";

export interface FeedPage {
  head: BatchHead;
  /** The page's items as one serialized DistributionBatch (empty when it has none). */
  items: Uint8Array;
}

/** Complete pages the coordinator reads ahead of the store, per feed (memory: each ≤ ADN_MAX_BATCH_BYTES). */
export const PAGES_AHEAD = 2;

export class FeedStream {
  private readonly pages: FeedPage[] = [];
  private failure: unknown;
  private ended = false;
  private wakeReader: (() => void) | undefined;
  private wakeTaker: (() => void) | undefined;

  /** Starts the StreamFeed; `signal` cancels it (and with it the page the gateway fetched ahead). */
  constructor(
    gateway: Client<typeof AdnGatewayService>,
    feed: FeedKey,
    afterNsu: bigint,
    signal: AbortSignal,
    private readonly ahead = PAGES_AHEAD,
  ) {
    void this.read(gateway.streamFeed({ feed, afterNsu }, { signal })[Symbol.asyncIterator]());
  }

  /**
   * The next complete page; undefined once the stream ended with OK and every page was taken. Rejects
   * with the stream's error once the pages completed before it were taken.
   */
  async next(): Promise<FeedPage | undefined> {
    for (;;) {
      const page = this.pages.shift();
      if (page) {
        this.wakeReader?.();
        return page;
      }
      if (this.failure !== undefined) throw this.failure;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wakeTaker = resolve));
    }
  }

  private async read(stream: AsyncIterator<StreamFeedResponse>): Promise<void> {
    try {
      for (;;) {
        while (this.pages.length >= this.ahead) await new Promise<void>((resolve) => (this.wakeReader = resolve));
        const page = await readPage(stream);
        if (!page) break;
        this.pages.push(page);
        this.wakeTaker?.();
      }
    } catch (err) {
      this.failure = err;
      await stream.return?.().catch(() => undefined);
    } finally {
      this.ended = true;
      this.wakeTaker?.();
    }
  }
}

async function readPage(stream: AsyncIterator<StreamFeedResponse>): Promise<FeedPage | undefined> {
  const first = await stream.next();
  if (first.done) return undefined;
  if (first.value.part.case !== "head")
    throw protocolError(`a page started with ${first.value.part.case ?? "an empty message"}, not a head`);
  const head = first.value.part.value;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let r = await stream.next(); ; r = await stream.next()) {
    if (r.done) throw protocolError(`the stream ended inside the page after NSU ${head.highestNsu} (no page_end)`);
    const part = r.value.part;
    if (part.case === "pageEnd") break;
    if (part.case !== "itemsChunk") throw protocolError(`a page held ${part.case ?? "an empty message"} between its head and its end`);
    chunks.push(part.value);
    size += part.value.length;
  }
  if (head.itemCount > 0 && size === 0) {
    throw new ConnectError(`the gateway's StreamFeed announced ${head.itemCount} items and ended the page without any`, Code.DataLoss);
  }
  return { head, items: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size) };
}

const protocolError = (what: string) => new ConnectError(`the gateway's StreamFeed broke its protocol: ${what}`, Code.Internal);
