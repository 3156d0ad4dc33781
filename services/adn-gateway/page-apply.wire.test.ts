// The gateway's pages leave with their entries already encoded (decision 0055): the store must read the very
// request protobuf-es would have written, entries in their order, whatever else the request carries.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { toLoteDfeEntry } from "../../libs/adn/lote-entry.js";
import { ApplyBatchesRequestSchema, ApplyBatchRequestSchema } from "../../libs/gen/malha/store/v1/store_pb.js";
import { feedOf } from "../store/testing/fixtures.js";
import { withEncodedEntries } from "./page-apply.js";

const raw = (nsu: number) => ({
  nsu: String(nsu),
  chaveAcesso: `${nsu}`.padStart(50, "3"),
  tipoDocumento: nsu % 2 ? "NFSE" : "EVENTO",
  tipoEvento: nsu % 2 ? "" : "CANCELAMENTO",
  arquivoXml: `H4sI${"QUJD".repeat(nsu)}`,
  dataHoraGeracao: "2026-12-01T10:00:00",
});

const request = (first: number, count: number) => ({
  feed: feedOf("3550308"),
  runId: "77",
  fenceToken: 5n,
  entries: Array.from({ length: count }, (_, i) => toLoteDfeEntry(raw(first + i))),
  newCursor: BigInt(first + count - 1),
  progress: { maxNsuSeen: BigInt(first + count - 1) },
  followsCursor: BigInt(first - 1),
});

describe("withEncodedEntries", () => {
  it("is read by the store's schema as the request itself, alone and inside ApplyBatches", () => {
    const pages = [request(1, 50), request(51, 3), { ...request(54, 0), followsCursor: undefined }];
    for (const page of pages) {
      const decoded = fromBinary(ApplyBatchRequestSchema, toBinary(ApplyBatchRequestSchema, withEncodedEntries(page)));
      expect({ ...decoded, $unknown: undefined }).toEqual({ ...create(ApplyBatchRequestSchema, page), $unknown: undefined });
      expect(decoded.$unknown ?? []).toEqual([]);
    }
    const batches = fromBinary(
      ApplyBatchesRequestSchema,
      toBinary(ApplyBatchesRequestSchema, create(ApplyBatchesRequestSchema, { batches: pages.map(withEncodedEntries) })),
    ).batches;
    expect(batches.map((b) => b.entries.map((e) => e.nsu))).toEqual(pages.map((p) => p.entries.map((e) => e.nsu)));
    expect(batches[0]!.entries[7]).toEqual(create(ApplyBatchRequestSchema, pages[0]!).entries[7]);
  });

  it("takes a request given as a message, and leaves the caller's request as it was", () => {
    const page = request(10, 2);
    const message = create(ApplyBatchRequestSchema, page);
    const decoded = fromBinary(ApplyBatchRequestSchema, toBinary(ApplyBatchRequestSchema, withEncodedEntries(message)));
    expect(decoded.entries).toEqual(message.entries);
    expect(message.entries).toHaveLength(2);
    expect(page.entries).toHaveLength(2);
  });
});
