import { readFileSync } from "node:fs";
import { create, type DescMessage, type Message, ScalarType, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { gzipSync } from "node:zlib";
import { decodeItem } from "../adn/item.js";
import { DistributionItemSchema } from "../gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema } from "../gen/malha/nfse/v1/document_pb.js";
import { EventSchema } from "../gen/malha/nfse/v1/event_pb.js";
import { binaryEncoder } from "./binary-encoder.js";

/** A fixture of libs/adn as the ADN distributes it, decoded as the store does. */
function decoded(name: string, tipoDocumento: string) {
  const xml = readFileSync(new URL(`../adn/testdata/${name}`, import.meta.url));
  const item = decodeItem(
    { nsu: "7", chaveAcesso: "", tipoDocumento, tipoEvento: "", arquivoXml: gzipSync(xml).toString("base64") },
    { maxDecompressedBytes: 1 << 20 },
  );
  return item.content;
}

// A small deterministic generator, so that a failure names a seed that reproduces it.
function rng(seed: number) {
  let s = seed >>> 0 || 1;
  return () => {
    s ^= s << 13;
    s ^= s >>> 17;
    s ^= s << 5;
    return (s >>> 0) / 0x100000000;
  };
}

const TEXTS = ["", "a", "Prestação de serviços", "😀 𝄞", "lone \ud800 surrogate", "\udc00", "x".repeat(300), "ação ".repeat(40)];

/** A message of `desc` with each field set or not at random, zero values and extremes included. */
function randomMessage(desc: DescMessage, next: () => number, depth = 0): Message {
  const init: Record<string, unknown> = {};
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  for (const f of desc.fields) {
    if (next() < 0.3) continue;
    if (f.fieldKind === "message") {
      if (depth < 3) init[f.localName] = randomMessage(f.message, next, depth + 1);
    } else if (f.fieldKind === "enum") {
      init[f.localName] = pick([0, 1, 2, ...f.enum.values.map((v) => v.number), -1, 2147483647]);
    } else if (f.fieldKind === "scalar") {
      switch (f.scalar) {
        case ScalarType.STRING:
          init[f.localName] = pick(TEXTS);
          break;
        case ScalarType.INT32:
          init[f.localName] = pick([0, 1, 127, 128, 16384, -1, -2147483648, 2147483647]);
          break;
        case ScalarType.UINT32:
          init[f.localName] = pick([0, 1, 127, 128, 2097152, 4294967295]);
          break;
        case ScalarType.INT64:
          init[f.localName] = pick([0n, 1n, 128n, 1234567890123n, -1n, -(2n ** 63n), 2n ** 63n - 1n]);
          break;
        case ScalarType.BOOL:
          init[f.localName] = pick([false, true]);
          break;
        default:
          break;
      }
    }
  }
  return create(desc, init as never);
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString("hex");

describe("binaryEncoder", () => {
  const encodeDocument = binaryEncoder(DocumentSchema);
  const encodeEvent = binaryEncoder(EventSchema);

  it("writes the parsed fixtures byte for byte as toBinary does", () => {
    for (const name of ["nfse-1.00.xml", "nfse-1.01.xml"]) {
      const content = decoded(name, "NFSE");
      if (content.case !== "document") throw new Error(`${name}: not a document`);
      expect(content.value.chave).not.toBe("");
      expect(hex(encodeDocument(content.value)), name).toBe(hex(toBinary(DocumentSchema, content.value)));
    }
    const content = decoded("evento-101101-1.01.xml", "EVENTO");
    if (content.case !== "event") throw new Error("not an event");
    expect(hex(encodeEvent(content.value))).toBe(hex(toBinary(EventSchema, content.value)));
  });

  it("writes random documents and events as toBinary does: zero values, extremes, unicode, nested messages", () => {
    for (let seed = 1; seed <= 1500; seed++) {
      const next = rng(seed);
      const doc = randomMessage(DocumentSchema, next);
      expect(hex(encodeDocument(doc as never)), `document seed ${seed}`).toBe(hex(toBinary(DocumentSchema, doc as never)));
      const ev = randomMessage(EventSchema, next);
      expect(hex(encodeEvent(ev as never)), `event seed ${seed}`).toBe(hex(toBinary(EventSchema, ev as never)));
    }
  });

  it("writes an explicitly set zero of an optional field, and omits an own property that is undefined", () => {
    const doc = create(DocumentSchema, { valores: { vServCents: 0n, vBcCents: undefined } });
    const bytes = encodeDocument(doc);
    expect(hex(bytes)).toBe(hex(toBinary(DocumentSchema, doc)));
    // field 20 (valores), length 2, field 1 varint 0.
    expect(hex(bytes)).toBe("a2010208" + "00");
  });

  it("leaves to toBinary what it does not plan: values of the wrong type, unknown fields, oneofs", () => {
    const doc = create(DocumentSchema, { chave: "x" });
    // An int64 given as a string is something toBinary accepts.
    const loose = { ...doc, valores: { ...create(DocumentSchema).valores, $typeName: "malha.nfse.v1.Valores", vServCents: "12" } };
    expect(hex(encodeDocument(loose as never))).toBe(hex(toBinary(DocumentSchema, loose as never)));
    const unknown = { ...doc, $unknown: [{ no: 900, wireType: 0, data: Uint8Array.of(7) }] };
    expect(hex(encodeDocument(unknown as never))).toBe(hex(toBinary(DocumentSchema, unknown as never)));
    expect(hex(encodeDocument(unknown as never))).toContain("a03807");
    const item = create(DistributionItemSchema, { nsu: 5n, content: { case: "document", value: doc } });
    expect(hex(binaryEncoder(DistributionItemSchema)(item))).toBe(hex(toBinary(DistributionItemSchema, item)));
  });

  it("throws what toBinary throws for a value no encoding can write", () => {
    const bad = { ...create(DocumentSchema), cStat: 1.5 };
    expect(() => toBinary(DocumentSchema, bad)).toThrow();
    expect(() => encodeDocument(bad)).toThrow();
  });
});
