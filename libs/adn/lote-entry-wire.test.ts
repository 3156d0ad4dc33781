import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { LoteDfeEntrySchema } from "../gen/malha/nfse/v1/distribution_pb.js";
import { encodeLoteDfeEntryDelimited } from "./lote-entry-wire.js";

/** The varint size prefix read back, and the message after it. */
function unprefixed(bytes: Uint8Array): { size: number; message: Uint8Array } {
  let size = 0;
  let shift = 0;
  let at = 0;
  for (;;) {
    const b = bytes[at++]!;
    size += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) break;
  }
  return { size, message: bytes.subarray(at) };
}

const ENTRIES = {
  "a note": {
    nsu: 42n,
    chaveAcesso: "3".repeat(50),
    tipoDocumento: "NFSE",
    tipoEvento: "",
    arquivoXml: "H4sI".repeat(900),
    dataHoraGeracao: "2026-12-01T10:00:00",
  },
  "an event": { nsu: 43n, chaveAcesso: "3".repeat(50), tipoDocumento: "EVENTO", tipoEvento: "CANCELAMENTO", arquivoXml: "H4sIAAAA" },
  "the largest NSU, empty optionals": {
    nsu: 2n ** 64n - 1n,
    chaveAcesso: "",
    tipoDocumento: "",
    tipoEvento: "",
    arquivoXml: "",
    dataHoraGeracao: "",
  },
  "no NSU, no XML, text beyond ASCII": { chaveAcesso: "chave-ção", tipoDocumento: "NFSE", tipoEvento: "évènement ✓" },
  "a string of 200 KB": { nsu: 1n, chaveAcesso: "x", tipoDocumento: "NFSE", tipoEvento: "", arquivoXml: "A".repeat(200_000) },
};

describe("encodeLoteDfeEntryDelimited", () => {
  for (const [name, init] of Object.entries(ENTRIES)) {
    it(`writes ${name} byte for byte as toBinary does, behind its size`, () => {
      const expected = toBinary(LoteDfeEntrySchema, create(LoteDfeEntrySchema, init));
      const { size, message } = unprefixed(encodeLoteDfeEntryDelimited(init));
      expect(size).toBe(message.length);
      expect(Buffer.from(message).equals(Buffer.from(expected))).toBe(true);
      expect(fromBinary(LoteDfeEntrySchema, message)).toEqual(create(LoteDfeEntrySchema, init));
    });
  }
});
