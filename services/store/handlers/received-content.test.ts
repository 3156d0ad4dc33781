import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { DistributionBatchSchema, type DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema } from "../../../libs/gen/malha/nfse/v1/document_pb.js";
import { EventSchema } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import { chaveOf, docItem, eventItem, faultItem } from "../testing/fixtures.js";
import { receivedContent } from "./received-content.js";

const encode = (items: DistributionItem[]) => toBinary(DistributionBatchSchema, create(DistributionBatchSchema, { items }));

describe("receivedContent", () => {
  it("finds each item's document or event bytes, in item order, and none for faults", () => {
    const items = [docItem(1, 1), eventItem(2, chaveOf(1), "101101"), faultItem(3, Buffer.from("H4sI")), docItem(4, 4)];
    const found = receivedContent(encode(items));
    expect(found).toHaveLength(4);
    const doc = (i: number) => (items[i]!.content.case === "document" ? items[i]!.content.value : undefined)!;
    expect(Buffer.from(found[0]!)).toEqual(Buffer.from(toBinary(DocumentSchema, doc(0))));
    expect(fromBinary(EventSchema, found[1]!).codigo).toBe("101101");
    expect(found[2]).toBeUndefined();
    expect(fromBinary(DocumentSchema, found[3]!).chave).toBe(chaveOf(4));
  });

  it("gives none for an item whose content came twice, since protobuf merges the two into what was decoded", () => {
    const first = docItem(1, 1);
    const second = docItem(1, 2);
    // Two encodings of one item concatenated are one item with every field sent twice.
    const once = encode([first]);
    const twice = Buffer.concat([once.subarray(0, 1), lengthPrefixed(Buffer.concat([inner(once), inner(encode([second]))]))]);
    const decoded = fromBinary(DistributionBatchSchema, twice);
    expect(decoded.items).toHaveLength(1);
    expect(receivedContent(twice)).toEqual([undefined]);
  });

  it("gives nothing for an empty batch", () => {
    expect(receivedContent(new Uint8Array(0))).toEqual([]);
  });
});

/** The bytes of the only item of a one-item batch (tag, varint length, item). */
function inner(batch: Uint8Array): Uint8Array {
  let pos = 1;
  let len = 0;
  for (let shift = 0; ; shift += 7) {
    const b = batch[pos++]!;
    len |= (b & 0x7f) << shift;
    if (b < 0x80) break;
  }
  return batch.subarray(pos, pos + len);
}

function lengthPrefixed(bytes: Uint8Array): Buffer {
  const prefix: number[] = [];
  let n = bytes.length;
  while (n >= 0x80) {
    prefix.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  prefix.push(n);
  return Buffer.concat([Buffer.from(prefix), bytes]);
}
