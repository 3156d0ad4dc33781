// What serializing the store's typed columns (documento_pb, evento_pb) costs per item: protobuf-es's
// `toBinary` against the planned encoder the store uses (libs/rpc/binary-encoder.ts, decision 0048), over
// the simulator's documents and events as the store decodes them. Same-run ratio, CPU time of this thread;
// the two outputs are compared byte for byte first.
//   npx tsx bench/typed-columns.ts [--items 4000] [--rounds 5]
import { toBinary } from "@bufbuild/protobuf";
import { decodeItem } from "../libs/adn/item.js";
import type { Document } from "../libs/gen/malha/nfse/v1/document_pb.js";
import { DocumentSchema } from "../libs/gen/malha/nfse/v1/document_pb.js";
import type { Event } from "../libs/gen/malha/nfse/v1/event_pb.js";
import { EventSchema } from "../libs/gen/malha/nfse/v1/event_pb.js";
import { binaryEncoder } from "../libs/rpc/binary-encoder.js";
import { useNodeTextEncoding } from "../libs/rpc/text-encoding.js";
import { Feeds } from "../tools/adn-sim/feeds.js";
import { MAX_DECOMPRESSED } from "./ceiling.js";
import { alternatingCpuMicros } from "./stats.js";
import { pagesOf } from "./workload.js";

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 ? Number(process.argv[i + 1]) : fallback;
};
const ITEMS = arg("items", 4000);
const ROUNDS = arg("rounds", 5);

// As in a store decode thread (page-rows-worker.ts).
useNodeTextEncoding();
const feeds = new Feeds({ seed: 7, initialSize: ITEMS / 2, tpAmb: () => 2 });
const items = ["3550308", "3304557"]
  .flatMap((ibge) => pagesOf(feeds.get(ibge, "DISTRIBUICAO"), 50).pages.flat())
  .map((raw) => decodeItem(raw, { maxDecompressedBytes: MAX_DECOMPRESSED }));
const documents = items.flatMap((i) => (i.content.case === "document" ? [i.content.value as Document] : []));
const events = items.flatMap((i) => (i.content.case === "event" ? [i.content.value as Event] : []));
const encodeDocument = binaryEncoder(DocumentSchema);
const encodeEvent = binaryEncoder(EventSchema);

const differing =
  documents.filter((d) => Buffer.compare(encodeDocument(d), toBinary(DocumentSchema, d)) !== 0).length +
  events.filter((e) => Buffer.compare(encodeEvent(e), toBinary(EventSchema, e)) !== 0).length;
if (differing > 0) throw new Error(`${differing} items serialized differently from toBinary`);

const library = () => {
  for (const d of documents) toBinary(DocumentSchema, d);
  for (const e of events) toBinary(EventSchema, e);
};
const planned = () => {
  for (const d of documents) encodeDocument(d);
  for (const e of events) encodeEvent(e);
};
const [x, y] = alternatingCpuMicros(ROUNDS, library, planned).map((us) => us / (documents.length + events.length)) as [number, number];
console.log(
  `typed columns, ${documents.length} documents + ${events.length} events, same bytes; median of ${ROUNDS} alternating rounds, CPU µs per item:`,
);
console.log(`  toBinary (protobuf-es)        ${x.toFixed(2)}`);
console.log(`  binaryEncoder (planned)       ${y.toFixed(2)}   ${(x / y).toFixed(2)}× faster`);
