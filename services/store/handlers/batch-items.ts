// ApplyBatch takes its items typed or as the serialized DistributionBatch a gateway StreamBatch produced
// (the coordinator passes those bytes through without decoding them); the repo gets the same typed list
// either way, and nothing is written unless the bytes decode.
import { fromBinary } from "@bufbuild/protobuf";
import { DistributionBatchSchema, type DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { ApplyBatchRequest } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { badRequest } from "../errors.js";

/** store.proto: encoded_items is at most 15 MiB, so the whole request fits the server's 16 MiB read limit. */
export const MAX_ENCODED_ITEMS_BYTES = 15 * 1024 * 1024;

export function batchItems(req: ApplyBatchRequest): DistributionItem[] {
  const encoded = req.encodedItems;
  if (encoded === undefined) return req.items;
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
    throw badRequest(`encoded_items is not a serialized malha.nfse.v1.DistributionBatch: it has field number ${batch.$unknown[0]!.no}, which the message does not define`);
  }
  return batch.items;
}
