// The bytes each item's Document or Event arrived as inside a serialized DistributionBatch. The store keeps
// a document's protobuf next to its row (documento_pb / evento_pb); re-encoding what the request has just
// carried cost ≈ 20 µs per item, two thirds of the row mapping
// (docs/decisions/0004-store-keeps-received-bytes.md). Only called on bytes that
// fromBinary has already accepted, so the walk needs no error handling of its own.
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire";

const BATCH_ITEMS = 1;
const ITEM_DOCUMENT = 10;
const ITEM_EVENT = 11;
const ITEM_FAULT = 12;

/**
 * One entry per item, in order: the content field's bytes, or undefined where they cannot stand for the
 * decoded content as they are — a fault, no content, or content sent more than once (protobuf merges
 * repeated occurrences of a message field, so the last one alone is not what was decoded).
 */
export function receivedContent(encodedBatch: Uint8Array): (Uint8Array | undefined)[] {
  const out: (Uint8Array | undefined)[] = [];
  const batch = new BinaryReader(encodedBatch);
  while (batch.pos < batch.len) {
    const [no, wireType] = batch.tag();
    if (no === BATCH_ITEMS && wireType === WireType.LengthDelimited) out.push(contentOf(batch.bytes()));
    else batch.skip(wireType, no);
  }
  return out;
}

function contentOf(itemBytes: Uint8Array): Uint8Array | undefined {
  const item = new BinaryReader(itemBytes);
  let content: Uint8Array | undefined;
  let occurrences = 0;
  while (item.pos < item.len) {
    const [no, wireType] = item.tag();
    if ((no === ITEM_DOCUMENT || no === ITEM_EVENT || no === ITEM_FAULT) && wireType === WireType.LengthDelimited) {
      occurrences++;
      const bytes = item.bytes();
      content = no === ITEM_FAULT ? undefined : bytes;
    } else {
      item.skip(wireType, no);
    }
  }
  return occurrences === 1 ? content : undefined;
}
