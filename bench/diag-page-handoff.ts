// Diagnostic for the CPU a DeliverFeed page costs on each side of the gateway → store hand-off, per item,
// without the network: what the gateway does between the ADN's parsed envelope and the ApplyBatch request
// bytes (the page's entries taken as they are, the request serialized as the connect client does), and
// what the store does between those bytes and its rows (the request parsed, the entries decoded with
// libs/adn, the rows mapped with documento_pb / evento_pb serialized). One simulator feed, pages of 50, on
// this process's one thread; CPU time from process.cpuUsage, median of the rounds
// (docs/decisions/0034-store-decodes-the-page.md; the store's part runs in its decode threads since 0038).
//   npx tsx bench/diag-page-handoff.ts [entries=2000] [rounds=7]
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { ApplyBatchRequestSchema } from "../libs/gen/malha/store/v1/store_pb.js";
import { pageEntries } from "../services/adn-gateway/page-entries.js";
import { parseFeed } from "../services/store/codes.js";
import { pageRows } from "../services/store/mapping/page-rows.js";
import { fromLoteDfeEntry } from "../libs/adn/lote-entry.js";
import { feedOf } from "../services/store/testing/fixtures.js";
import { Feeds } from "../tools/adn-sim/feeds.js";
import { MAX_DECOMPRESSED } from "./ceiling.js";
import { pagesOf } from "./workload.js";

const entries = Number(process.argv[2] ?? 2000);
const rounds = Number(process.argv[3] ?? 7);
const IBGE = "3550308";
const FEED = { ibge: IBGE, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO };
const LIMITS = { maxDecompressedBytes: MAX_DECOMPRESSED, maxPageXmlBytes: 15 * 1024 * 1024 };

const log = new Feeds({ seed: 7, initialSize: entries, tpAmb: () => 2 }).get(IBGE, "DISTRIBUICAO");
const pages = pagesOf(log, 50).pages;
const items = pages.reduce((n, p) => n + p.length, 0);
const feed = parseFeed(feedOf(IBGE));

const cpuUs = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};

async function round(): Promise<{ gateway: number; store: number; bytes: number }> {
  let gateway = 0;
  let store = 0;
  let bytes = 0;
  let sink = 0;
  for (const page of pages) {
    let t = cpuUs();
    const request = toBinary(
      ApplyBatchRequestSchema,
      create(ApplyBatchRequestSchema, {
        feed: FEED,
        runId: "1",
        fenceToken: 1n,
        entries: pageEntries(page, LIMITS.maxPageXmlBytes).entries,
        newCursor: 1n,
      }),
    );
    gateway += cpuUs() - t;
    bytes += request.byteLength;
    t = cpuUs();
    // What the store's event loop (parse, entries) and a decode thread (pageRows) do, on this one thread.
    const req = fromBinary(ApplyBatchRequestSchema, request);
    const rows = pageRows({ feed, runId: "1", entries: req.entries.map(fromLoteDfeEntry), limits: LIMITS });
    sink += rows.length;
    store += cpuUs() - t;
  }
  if (sink === 0) throw new Error("nothing mapped");
  return { gateway: gateway / items, store: store / items, bytes: bytes / items };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
await round(); // JIT
const results = [];
for (let r = 0; r < rounds; r++) results.push(await round());
const la = (await import("node:os")).loadavg()[0]!.toFixed(1);
console.log(
  `${items} items in pages of 50, ${rounds} rounds, load ${la}: gateway ${median(results.map((r) => r.gateway)).toFixed(1)} µs/item, ` +
    `store ${median(results.map((r) => r.store)).toFixed(1)} µs/item, request ${median(results.map((r) => r.bytes)).toFixed(0)} bytes/item`,
);
