// A page's items: decoded one at a time into serialized DistributionBatch chunks, so that the gateway
// never holds the page as objects and stays responsive while it decodes.
import { create, toBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import type { RawLoteItem } from "../../libs/adn/envelope.js";
import { decodeItem, type DecodeOptions } from "../../libs/adn/item.js";
import { DistributionBatchSchema, type DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";

export interface ItemChunkOptions {
  decode: DecodeOptions;
  /** A chunk is closed before it would exceed this (an item larger than it travels alone). */
  chunkBytes: number;
  /** The whole serialized batch may not exceed this: RESOURCE_EXHAUSTED. */
  maxBatchBytes: number;
  signal: AbortSignal;
  onItem?: (item: DistributionItem) => void;
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Decoding time between two turns of the event loop. The next page's ADN call and other feeds' work
 * need turns (HTTP/2 frames, handlers, the ADN request's write) while this page is decoded: each waits up
 * to one slice. 1 ms slices put ≈ 2 ms more on that serial path than
 * 0.2 ms ones (bench/README.md, latency hiding); a turn costs a few µs.
 */
const SLICE_MS = 0.2;

export async function* itemChunks(entries: RawLoteItem[], opts: ItemChunkOptions): AsyncGenerator<Uint8Array> {
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let total = 0;
  // Before the first item and then every SLICE_MS the event loop runs: the next page's ADN call (the
  // latency we hide) leaves while this page is decoded.
  let sliceStart = -Infinity;
  for (const raw of entries) {
    if (performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      sliceStart = performance.now();
    }
    opts.signal.throwIfAborted();
    const item = decodeItem(raw, opts.decode);
    opts.onItem?.(item);
    // Serialized batches concatenate, so one batch per item joined is the batch of them all.
    const bytes = toBinary(DistributionBatchSchema, create(DistributionBatchSchema, { items: [item] }));
    if (pendingBytes > 0 && pendingBytes + bytes.length > opts.chunkBytes) {
      yield join(pending, pendingBytes);
      pending = [];
      pendingBytes = 0;
    }
    total += bytes.length;
    if (total > opts.maxBatchBytes) {
      // Chunks may already be out: the caller discards them, since the stream does not end with OK.
      throw new ConnectError(
        `the decoded batch exceeds ADN_MAX_BATCH_BYTES (${opts.maxBatchBytes} bytes) at NSU ${item.nsu}; the store could not take it in one transaction`,
        Code.ResourceExhausted,
      );
    }
    pending.push(bytes);
    pendingBytes += bytes.length;
  }
  if (pendingBytes > 0) yield join(pending, pendingBytes);
}

function join(parts: Uint8Array[], size: number): Uint8Array {
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, size);
}
