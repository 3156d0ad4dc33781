// ApplyBatch takes its items typed, or as the ADN page's entries the gateway's DeliverFeed passes on
// undecoded; the store decodes those itself with libs/adn's decoder, so that a page's items are decoded
// once, in the process that writes them (docs/decisions/0034-store-decodes-the-page.md). An entry that
// does not decode is a fault item, quarantined like any other; nothing is written if the page as a whole
// inflates past its cap.
import { decodePage, PageTooLargeError } from "../../../libs/adn/decode-page.js";
import { fromLoteDfeEntry } from "../../../libs/adn/lote-entry.js";
import type { DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { ApplyBatchRequest } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { resourceExhausted } from "../../../libs/rpc/errors.js";
import { badRequest } from "../errors.js";

export interface PageDecodeLimits {
  /** ADN_MAX_DECOMPRESSED_BYTES: the largest XML one entry may inflate to (beyond: a TOO_LARGE fault). */
  maxDecompressedBytes: number;
  /** STORE_MAX_PAGE_XML_BYTES: what one request's entries may inflate to in total (beyond: RESOURCE_EXHAUSTED). */
  maxPageXmlBytes: number;
}

export async function batchItems(req: ApplyBatchRequest, limits: PageDecodeLimits, signal?: AbortSignal): Promise<DistributionItem[]> {
  if (req.entries.length === 0) return req.items;
  if (req.items.length > 0) {
    throw badRequest(`set either items (${req.items.length} given) or entries (${req.entries.length} given), not both`);
  }
  try {
    return await decodePage(req.entries.map(fromLoteDfeEntry), {
      decode: { maxDecompressedBytes: limits.maxDecompressedBytes },
      maxPageXmlBytes: limits.maxPageXmlBytes,
      ...(signal ? { signal } : {}),
    });
  } catch (err) {
    if (!(err instanceof PageTooLargeError)) throw err;
    throw resourceExhausted(
      `entries inflate to more than STORE_MAX_PAGE_XML_BYTES (${err.limit} bytes) at NSU ${err.nsu}; nothing of the page was written`,
    );
  }
}
