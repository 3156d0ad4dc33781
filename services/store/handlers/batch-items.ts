// ApplyBatch takes its items typed or as the serialized DistributionBatch the gateway's DeliverFeed
// produced while decoding the ADN's page; the repo gets the same typed list
// either way, and nothing is written unless the bytes decode. From bytes it also gets what each item's
// content arrived as, so that the row keeps those bytes instead of encoding the content again.
import { fromBinary } from "@bufbuild/protobuf";
import { DistributionBatchSchema, type DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { ApplyBatchRequest } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { badRequest } from "../errors.js";
import { receivedContent } from "./received-content.js";

/** store.proto: encoded_items is at most 15 MiB, so the whole request fits the server's 16 MiB read limit. */
export const MAX_ENCODED_ITEMS_BYTES = 15 * 1024 * 1024;

export interface BatchItems {
  items: DistributionItem[];
  /** Per item, the bytes its document or event arrived as (see receivedContent); absent for typed items. */
  received?: (Uint8Array | undefined)[];
}

export function batchItems(req: ApplyBatchRequest): BatchItems {
  const encoded = req.encodedItems;
  if (encoded === undefined) return { items: req.items };
  if (req.items.length > 0) throw badRequest(`set either items (${req.items.length} given) or encoded_items, not both`);
  if (encoded.length > MAX_ENCODED_ITEMS_BYTES) {
    throw badRequest(`encoded_items is ${encoded.length} bytes; at most ${MAX_ENCODED_ITEMS_BYTES} are accepted`);
  }
  let batch;
  try {
    batch = fromBinary(DistributionBatchSchema, encoded);
  } catch (err) {
    throw badRequest(`encoded_items is not a serialized malha.nfse.v1.DistributionBatch: ${(err as Error).message}`);
  }
  // Bytes that happen to parse but carry fields a DistributionBatch does not have are garbage, not a batch.
  if (batch.$unknown?.length) {
    throw badRequest(
      `encoded_items is not a serialized malha.nfse.v1.DistributionBatch: it has field number ${batch.$unknown[0]!.no}, which the message does not define`,
    );
  }
  const received = receivedContent(encoded);
  return received.length === batch.items.length ? { items: batch.items, received } : { items: batch.items };
}
