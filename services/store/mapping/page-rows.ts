// A page of ADN entries → the rows ApplyBatch writes: decoded with libs/adn (decodeItem, the page's XML
// cap) and mapped with itemRow. Runs in the store's decode threads (page-rows-worker.ts), so it is a pure
// function of plain, cloneable input (docs/decisions/0038-store-decodes-in-worker-threads.md). The
// documents' and events' rows leave it written as SQL, so that the transaction that sends them only copies
// them (docs/decisions/0069-rows-written-as-sql-in-the-decode-thread.md).
import { decodePage } from "../../../libs/adn/decode-page.js";
import type { RawLoteItem } from "../../../libs/adn/envelope.js";
import { renderRows } from "../sql/multi-insert.js";
import {
  DOCUMENT_SLOT,
  type DocumentRow,
  EVENT_SLOT,
  type EventRow,
  type FeedColumns,
  type ItemRow,
  itemRow,
  type Mapped,
  type MappedRow,
} from "./item-rows.js";

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
  return withRowsWritten(items.map((item) => itemRow(feed, item, runId, true)));
}

/** The documents' and events' values replaced by their rows as an upsert writes them, all in one buffer. */
function withRowsWritten(rows: MappedRow[]): ItemRow[] {
  const written = rows.filter((r): r is Mapped<DocumentRow> | Mapped<EventRow> => r.kind !== "fault");
  const rendered = renderRows(written.map((r) => ({ values: r.values, slot: r.kind === "document" ? DOCUMENT_SLOT : EVENT_SLOT })));
  written.forEach((r, i) => {
    (r as DocumentRow | EventRow).values = rendered[i]!;
  });
  return rows;
}
