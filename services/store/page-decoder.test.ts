// The store's decode threads (docs/decisions/0038-store-decodes-in-worker-threads.md), real worker threads
// from source: a page comes back as the rows the event loop would have mapped itself, its documents and events
// already written as their upserts carry them (0069), a quarantine row's byte columns as Buffers; a page over its cap is RESOURCE_EXHAUSTED; a thread that runs out of heap fails its page
// UNAVAILABLE (nothing written, the gateway sends it again) and is replaced for the next page.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, describe, expect, it } from "vitest";
import { LoteDfeEntrySchema, type LoteDfeEntry } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { parseFeed } from "./codes.js";
import { DEFAULT_DECODE_THREAD_HEAP_MB } from "./config.js";
import { pageRows } from "./mapping/page-rows.js";
import { DOCUMENT_COLUMNS, type ItemRow, itemRow } from "./mapping/item-rows.js";
import { buildMultiInsert, isRendered } from "./sql/multi-insert.js";
import { decodeItem } from "../../libs/adn/item.js";
import { fromLoteDfeEntry } from "../../libs/adn/lote-entry.js";
import { createPageDecoder, type PageDecoder } from "./page-decoder.js";
import { feedOf, rejection } from "./testing/fixtures.js";

const feed = parseFeed(feedOf("3550308"));
const LIMITS = { maxDecompressedBytes: 8 * 1024 * 1024, maxPageXmlBytes: 15 * 1024 * 1024 };
const NOTE = readFileSync(new URL("../../libs/adn/testdata/nfse-1.01.xml", import.meta.url), "utf8");

const entry = (nsu: number, xml: string): LoteDfeEntry =>
  create(LoteDfeEntrySchema, {
    nsu: BigInt(nsu),
    chaveAcesso: "",
    tipoDocumento: "NFSE",
    tipoEvento: "",
    arquivoXml: gzipSync(Buffer.from(xml)).toString("base64"),
  });

/** A note made to hold `count` more elements of `size` characters of text each before its root closes. */
function heavyNote(count: number, size: number): string {
  const at = NOTE.lastIndexOf("</");
  return NOTE.slice(0, at) + `<x>${"y".repeat(size)}</x>`.repeat(count) + NOTE.slice(at);
}

/** A document row as its upsert writes it: `(…)`, whether it came written or as values. */
function writtenRow(row: ItemRow): string {
  if (row.kind !== "document") throw new Error(`not a document: ${row.kind}`);
  const [statement] = buildMultiInsert({
    head: "INSERT INTO t",
    columnCount: DOCUMENT_COLUMNS.length,
    rows: [row.values],
    budgetBytes: 1 << 24,
  });
  return statement!.toString("latin1").slice("INSERT INTO t VALUES ".length);
}

function expectFaultBytesAsBuffers(rows: readonly ItemRow[]): void {
  const faults = rows.filter((r) => r.kind === "fault");
  expect(faults.length).toBeGreaterThan(0);
  for (const f of faults) {
    expect(isRendered(f.values)).toBe(false);
    const bytes = f.values.filter((v) => v instanceof Uint8Array);
    expect(bytes.length).toBeGreaterThan(0);
    for (const b of bytes) expect(Buffer.isBuffer(b)).toBe(true);
  }
}

const decoders: PageDecoder[] = [];
// Every page to the thread unless a test says otherwise.
const decoder = (threadHeapMb: number, limits = LIMITS, inlineEntries = 0) => {
  const d = createPageDecoder({ threads: 1, limits, threadHeapMb, timeoutMs: 60_000, inlineEntries });
  decoders.push(d);
  return d;
};
afterAll(() => Promise.all(decoders.map((d) => d.close())));

describe("page decoder", () => {
  it("returns the rows pageRows maps on the event loop: documents written as their upsert's rows, a fault's bytes as Buffers", async () => {
    const page = [entry(1, NOTE), entry(2, "<not-closed>"), entry(3, NOTE.replace("<nNFSe>", "<nNFSe>9"))];
    const rows = await decoder(64).rows(feed, "7", page);
    const inline = pageRows({ feed, runId: "7", entries: page.map(fromLoteDfeEntry), limits: LIMITS });
    expect(rows.map((r) => r.kind)).toEqual(["document", "fault", "document"]);
    expect(rows).toEqual(inline);
    for (const at of [0, 2]) {
      const mapped = itemRow(feed, decodeItem(fromLoteDfeEntry(page[at]!), LIMITS), "7", true);
      expect(writtenRow(rows[at]!)).toBe(writtenRow(mapped));
    }
    expectFaultBytesAsBuffers(rows);
  });

  it("refuses a page that inflates past its cap RESOURCE_EXHAUSTED, naming the entry", async () => {
    const d = decoder(64, { maxDecompressedBytes: 64 * 1024, maxPageXmlBytes: 5_000 });
    const err = await rejection(d.rows(feed, "7", [entry(1, NOTE), entry(2, NOTE), entry(3, NOTE), entry(4, NOTE)]));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toMatch(/^entries inflate to more than STORE_MAX_PAGE_XML_BYTES \(5000 bytes\) at NSU 3; nothing/);
  });

  it("fails a page whose decode runs its thread out of heap UNAVAILABLE, and decodes the next page on a new thread", async () => {
    const d = decoder(16);
    const heavy = heavyNote(99_000, 60);
    const err = await rejection(d.rows(feed, "7", [entry(1, heavy), entry(2, heavy)]));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.rawMessage).toMatch(/worker thread died/);
    expect((await d.rows(feed, "7", [entry(3, NOTE)])).map((r) => r.kind)).toEqual(["document"]);
    // The default heap holds the same page.
    const rows = await decoder(DEFAULT_DECODE_THREAD_HEAP_MB).rows(feed, "7", [entry(1, heavy), entry(2, heavy)]);
    expect(rows.map((r) => r.kind)).toEqual(["document", "document"]);
  });

  it("decodes a page of few entries on the event loop: the same rows, the same refusal, no thread's heap limit", async () => {
    const page = [entry(1, NOTE), entry(2, "<not-closed>")];
    const d = decoder(16, LIMITS, 2);
    const rows = await d.rows(feed, "7", page);
    expect(rows).toEqual(await decoder(64).rows(feed, "7", page));
    expectFaultBytesAsBuffers(rows);
    // A page that kills a 16 MB thread (the test above) decodes here: it never went to the thread.
    const heavy = heavyNote(99_000, 60);
    expect((await d.rows(feed, "7", [entry(1, heavy), entry(2, heavy)])).map((r) => r.kind)).toEqual(["document", "document"]);
    const small = decoder(16, { maxDecompressedBytes: 64 * 1024, maxPageXmlBytes: 3_000 }, 2);
    const err = await rejection(small.rows(feed, "7", [entry(1, NOTE), entry(2, NOTE)]));
    expect(err.code).toBe(Code.ResourceExhausted);
    expect(err.rawMessage).toMatch(/^entries inflate to more than STORE_MAX_PAGE_XML_BYTES \(3000 bytes\) at NSU 2; nothing/);
  });
});
