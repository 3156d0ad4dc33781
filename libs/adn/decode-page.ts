// A distribution page's entries decoded one at a time (decodeItem), in slices of the event loop: the
// process that decodes a page also serves other feeds' calls, and a page of 50 takes a few milliseconds
// (docs/decisions/0034-store-decodes-the-page.md). Also bounds what the page inflates to in total.
import type { DistributionItem } from "../gen/malha/nfse/v1/distribution_pb.js";
import type { RawLoteItem } from "./envelope.js";
import { decodeItem, type DecodeOptions } from "./item.js";

export interface DecodePageOptions {
  decode: DecodeOptions;
  /** The decoded page's XML and kept payloads may not exceed this in total: PageTooLargeError. */
  maxPageXmlBytes: number;
  signal?: AbortSignal;
}

/** The page inflated past `maxPageXmlBytes`; `nsu` is the entry that crossed it. */
export class PageTooLargeError extends Error {
  override name = "PageTooLargeError";
  constructor(
    readonly nsu: bigint,
    readonly limit: number,
  ) {
    super(`the decoded page exceeds ${limit} bytes of XML at NSU ${nsu}`);
  }
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Decoding time between two turns of the event loop. Other calls' work (HTTP/2 frames, handlers, SQL
 * results) waits up to one slice; 1 ms slices cost the latency-hiding bench ≈ 2 ms per page against
 * 0.2 ms ones when the gateway decoded (bench/README.md), and a turn costs a few µs.
 */
const SLICE_MS = 0.2;

export async function decodePage(entries: readonly RawLoteItem[], opts: DecodePageOptions): Promise<DistributionItem[]> {
  const items: DistributionItem[] = [];
  let total = 0;
  let sliceStart = performance.now();
  for (const raw of entries) {
    if (performance.now() - sliceStart >= SLICE_MS) {
      await nextTurn();
      opts.signal?.throwIfAborted();
      sliceStart = performance.now();
    }
    const item = decodeItem(raw, opts.decode);
    total += item.xml.byteLength + (item.content.case === "fault" ? item.content.value.rawPayload.byteLength : 0);
    if (total > opts.maxPageXmlBytes) throw new PageTooLargeError(item.nsu, opts.maxPageXmlBytes);
    items.push(item);
  }
  return items;
}
