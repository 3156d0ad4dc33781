// A page of ADN entries → the rows ApplyBatch writes: decoded with libs/adn (decodeItem, the page's XML
// cap) and mapped with itemRow. Runs in the store's decode threads (page-rows-worker.ts), so it is a pure
// function of plain, cloneable input (docs/decisions/0038-store-decodes-in-worker-threads.md).
import { decodePage } from "../../../libs/adn/decode-page.js";
import type { RawLoteItem } from "../../../libs/adn/envelope.js";
import { type FeedColumns, type ItemRow, itemRow } from "./item-rows.js";

export interface PageDecodeLimits {
  /** ADN_MAX_DECOMPRESSED_BYTES: the largest XML one entry may inflate to (beyond: a TOO_LARGE fault). */
  maxDecompressedBytes: number;
  /** STORE_MAX_PAGE_XML_BYTES: what one request's entries may inflate to in total (beyond: RESOURCE_EXHAUSTED). */
  maxPageXmlBytes: number;
}

export interface PageRowsTask {
  feed: FeedColumns;
  runId: string;
  entries: RawLoteItem[];
  limits: PageDecodeLimits;
}

export function pageRows({ feed, runId, entries, limits }: PageRowsTask): ItemRow[] {
  const items = decodePage(entries, {
    decode: { maxDecompressedBytes: limits.maxDecompressedBytes },
    maxPageXmlBytes: limits.maxPageXmlBytes,
  });
  return items.map((item) => itemRow(feed, item, runId, true));
}
