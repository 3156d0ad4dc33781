// A distribution page's entries decoded one at a time (decodeItem), with a cap on what the page inflates
// to in total. Synchronous: its caller, the store, runs it in a worker thread so the event loop serving
// other feeds' calls never waits for a page's decode (docs/decisions/0038-store-decodes-in-worker-threads.md).
import type { DistributionItem } from "../gen/malha/nfse/v1/distribution_pb.js";
import type { RawLoteItem } from "./envelope.js";
import { decodeItem, type DecodeOptions } from "./item.js";

export interface DecodePageOptions {
  decode: DecodeOptions;
  /** The decoded page's XML and kept payloads may not exceed this in total: PageTooLargeError. */
  maxPageXmlBytes: number;
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

export function decodePage(entries: readonly RawLoteItem[], opts: DecodePageOptions): DistributionItem[] {
  const items: DistributionItem[] = [];
  let total = 0;
  for (const raw of entries) {
    const item = decodeItem(raw, opts.decode);
    total += item.xml.byteLength + (item.content.case === "fault" ? item.content.value.rawPayload.byteLength : 0);
    if (total > opts.maxPageXmlBytes) throw new PageTooLargeError(item.nsu, opts.maxPageXmlBytes);
    items.push(item);
  }
  return items;
}
