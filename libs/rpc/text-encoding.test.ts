import { create, toBinary } from "@bufbuild/protobuf";
import { configureTextEncoding, getTextEncoding } from "@bufbuild/protobuf/wire";
import { afterAll, describe, expect, it } from "vitest";
import { DocumentSchema } from "../gen/malha/nfse/v1/document_pb.js";
import { useNodeTextEncoding } from "./text-encoding.js";

const standard = getTextEncoding();
afterAll(() => configureTextEncoding(standard));

// Every kind of text a document carries, and what TextEncoder must replace.
const samples = [
  "",
  "a",
  "Prestação de serviços de informática",
  "ÁÉÍÓÚ ãõ ç ü",
  "😀 emoji 𝄞",
  "\u0000\u0001\u007f",
  "lone high \ud800 surrogate",
  "lone low \udc00",
  "\udbff\udfff",
  "x".repeat(5000),
  "ação ".repeat(2000),
];

describe("useNodeTextEncoding", () => {
  it("encodes every string to exactly TextEncoder's bytes", () => {
    const te = new TextEncoder();
    useNodeTextEncoding();
    const encode = getTextEncoding().encodeUtf8;
    for (const text of samples) expect(Buffer.from(encode(text))).toEqual(Buffer.from(te.encode(text)));
    // Random code units, surrogates included.
    for (let i = 0; i < 2000; i++) {
      const text = String.fromCharCode(...Array.from({ length: i % 40 }, (_, k) => (i * 7919 + k * 104729) % 0x10000));
      expect(Buffer.from(encode(text))).toEqual(Buffer.from(te.encode(text)));
    }
  });

  it("leaves serialized messages byte for byte as they were", () => {
    const doc = create(DocumentSchema, {
      chave: "3".repeat(50),
      numero: "42",
      serie: "A1",
      prestador: { name: samples[2]!, inscricaoMunicipal: "123" },
      servico: { descricao: samples[5]! + samples[4]! + samples[6]! },
    });
    configureTextEncoding(standard);
    const before = toBinary(DocumentSchema, doc);
    useNodeTextEncoding();
    expect(Buffer.from(toBinary(DocumentSchema, doc))).toEqual(Buffer.from(before));
  });
});
