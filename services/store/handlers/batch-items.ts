// ApplyBatch takes its items typed, or as the ADN page's entries the gateway's DeliverFeeds passes on
// undecoded; the store decodes those itself, in its decode threads, so that a page's items are decoded
// once, in the process that writes them, and off the event loop that writes them
// (docs/decisions/0034-store-decodes-the-page.md, 0038-store-decodes-in-worker-threads.md). An entry that
// does not decode is a fault item, quarantined like any other; nothing is written if the page as a whole
// inflates past its cap.
import type { ApplyBatchRequest } from "../../../libs/gen/malha/store/v1/store_pb.js";
import type { Feed } from "../codes.js";
import { badRequest } from "../errors.js";
import { type ItemRow, itemRow } from "../mapping/item-rows.js";
import type { PageDecoder } from "../page-decoder.js";

export async function batchRows(req: ApplyBatchRequest, feed: Feed, runId: string, decoder: PageDecoder): Promise<ItemRow[]> {
  if (req.entries.length === 0) return req.items.map((item) => itemRow(feed, item, runId));
  if (req.items.length > 0) {
    throw badRequest(`set either items (${req.items.length} given) or entries (${req.entries.length} given), not both`);
  }
  return decoder.rows(feed, runId, req.entries);
}
