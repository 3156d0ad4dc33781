// Parse cost alone, on this process's one thread: libs/adn decodeItem (base64 → gunzip → XML → fields
// → DistributionItem) over raw batch items, and the same plus the store's row mapping (itemRow).
import { decodeItem } from "../libs/adn/item.js";
import { Ambiente } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Feed } from "../services/store/codes.js";
import { parseIbge } from "../services/store/ibge.js";
import { itemRow } from "../services/store/mapping/item-rows.js";
import { MAX_DECOMPRESSED } from "./ceiling.js";
import type { FeedPages } from "./workload.js";

export interface ParseResult {
  documents: number;
  decodeDocsPerSecond: number;
  decodeAndMapDocsPerSecond: number;
}

export function runParse(feeds: FeedPages[]): ParseResult {
  const items = feeds.flatMap((f) => f.pages.flat().map((raw) => ({ ibge: f.ibge, raw })));
  const opts = { maxDecompressedBytes: MAX_DECOMPRESSED };
  let sink = 0;
  let t0 = performance.now();
  for (const { raw } of items) sink += decodeItem(raw, opts).xml.byteLength;
  const decodeSeconds = (performance.now() - t0) / 1000;
  const feedOf = new Map(
    feeds.map((f) => [f.ibge, { ibge: parseIbge(f.ibge), ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: "DISTRIBUICAO" } as Feed]),
  );
  t0 = performance.now();
  for (const { ibge, raw } of items) sink += itemRow(feedOf.get(ibge)!, decodeItem(raw, opts), "bench").values.length;
  const mapSeconds = (performance.now() - t0) / 1000;
  if (sink === 0) throw new Error("parse: nothing decoded");
  return {
    documents: items.length,
    decodeDocsPerSecond: items.length / decodeSeconds,
    decodeAndMapDocsPerSecond: items.length / mapSeconds,
  };
}
