// A gateway StreamBatch as the sync loop consumes it: the head as soon as the ADN has answered (its
// highest NSU is all the next fetch needs), and the items as the opaque bytes ApplyBatch takes, never
// decoded here.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import type { AdnGatewayService, BatchHead, StreamBatchResponse } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";

export interface OpenedBatch {
  head: BatchHead;
  /**
   * The concatenated item chunks: a serialized DistributionBatch. Rejects when the stream fails after the
   * head, so a batch is either complete or not applied at all. Never rejects unhandled.
   */
  items: Promise<Uint8Array>;
}

/** Starts a StreamBatch and resolves with its head; `signal` cancels the call, items included. */
export async function openBatch(
  gateway: Client<typeof AdnGatewayService>,
  feed: FeedKey,
  afterNsu: bigint,
  signal: AbortSignal,
): Promise<OpenedBatch> {
  const stream = gateway.streamBatch({ feed, afterNsu }, { signal })[Symbol.asyncIterator]();
  const first = await stream.next();
  if (first.done || first.value.part.case !== "head") {
    await stream.return?.();
    throw new ConnectError("the gateway's StreamBatch did not start with a head", Code.Internal);
  }
  const head = first.value.part.value;
  const items = collect(stream, head);
  items.catch(() => undefined);
  return { head, items };
}

async function collect(stream: AsyncIterator<StreamBatchResponse>, head: BatchHead): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let r = await stream.next(); !r.done; r = await stream.next()) {
    if (r.value.part.case !== "itemsChunk") {
      await stream.return?.();
      throw new ConnectError("the gateway's StreamBatch sent something other than item chunks after its head", Code.Internal);
    }
    chunks.push(r.value.part.value);
    size += r.value.part.value.length;
  }
  if (head.itemCount > 0 && size === 0) {
    throw new ConnectError(`the gateway's StreamBatch announced ${head.itemCount} items and ended without any`, Code.DataLoss);
  }
  return Buffer.concat(chunks, size);
}
