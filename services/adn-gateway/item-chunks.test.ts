import { fromBinary } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import type { RawLoteItem } from "../../libs/adn/envelope.js";
import { DistributionBatchSchema, FaultReason } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { itemChunks, type ItemChunkOptions } from "./item-chunks.js";

// Entries without ArquivoXml decode to fault items carrying the chave: sizes are easy to reason about.
const entry = (nsu: number, chave = "x".repeat(300)): RawLoteItem => ({
  nsu: String(nsu),
  chaveAcesso: chave,
  tipoDocumento: "NFSE",
  tipoEvento: "",
});
const opts = (over: Partial<ItemChunkOptions> = {}): ItemChunkOptions => ({
  decode: { maxDecompressedBytes: 1024 },
  chunkBytes: 1000,
  maxBatchBytes: 100_000,
  signal: new AbortController().signal,
  ...over,
});

async function drain(gen: AsyncGenerator<Uint8Array>): Promise<{ chunks: Uint8Array[]; error?: ConnectError }> {
  const chunks: Uint8Array[] = [];
  try {
    for await (const c of gen) chunks.push(c);
  } catch (err) {
    return { chunks, error: ConnectError.from(err) };
  }
  return { chunks };
}

const joined = (chunks: Uint8Array[]) => Buffer.concat(chunks);

describe("itemChunks", () => {
  it("splits the batch into bounded chunks whose concatenation is the serialized batch of all items, in order", async () => {
    const entries = Array.from({ length: 10 }, (_, i) => entry(i + 1));
    const { chunks, error } = await drain(itemChunks(entries, opts()));
    expect(error).toBeUndefined();
    expect(chunks.length).toBeGreaterThan(2);
    for (const c of chunks) expect(c.length).toBeLessThanOrEqual(1000);
    const all = fromBinary(DistributionBatchSchema, joined(chunks)).items;
    expect(all.map((i) => i.nsu)).toEqual(entries.map((e) => BigInt(e.nsu!)));
    expect(all.every((i) => i.content.case === "fault" && i.content.value.reason === FaultReason.MISSING_FIELD)).toBe(true);
    // Each chunk is a batch on its own too.
    expect(chunks.map((c) => fromBinary(DistributionBatchSchema, c).items.length).reduce((a, b) => a + b)).toBe(10);
  });

  it("sends an item larger than a chunk in a chunk of its own", async () => {
    const { chunks } = await drain(itemChunks([entry(1), entry(2, "y".repeat(3000)), entry(3)], opts()));
    expect(chunks.map((c) => fromBinary(DistributionBatchSchema, c).items.map((i) => i.nsu))).toEqual([[1n], [2n], [3n]]);
  });

  it("fails with RESOURCE_EXHAUSTED once the batch passes maxBatchBytes, after the chunks that fitted", async () => {
    const entries = Array.from({ length: 10 }, (_, i) => entry(i + 1));
    const { chunks, error } = await drain(itemChunks(entries, opts({ maxBatchBytes: 2500 })));
    expect(error?.code).toBe(Code.ResourceExhausted);
    expect(error?.rawMessage).toMatch(/ADN_MAX_BATCH_BYTES \(2500 bytes\) at NSU \d+/);
    expect(chunks.length).toBeGreaterThan(0);
    expect(fromBinary(DistributionBatchSchema, joined(chunks)).items.length).toBeLessThan(10);
  });

  it("stops decoding when the call is cancelled", async () => {
    const ac = new AbortController();
    const gen = itemChunks(
      Array.from({ length: 10 }, (_, i) => entry(i + 1)),
      opts({ signal: ac.signal, chunkBytes: 1 }),
    );
    const first = await gen.next();
    expect(first.done).toBe(false);
    ac.abort();
    await expect(gen.next()).rejects.toThrow();
  });
});
