// A LoteDfeEntry in protobuf's wire form, written straight into one buffer: the gateway sends every ADN
// entry it reads to the store, and protobuf-es's reflective encoder (a TextEncoder copy per string, a
// fork per message) was most of what the gateway spent per document on the way
// (docs/decisions/0055-page-entries-encoded-once.md). The bytes are exactly what toBinary writes.
import type { MessageInitShape } from "@bufbuild/protobuf";
import { LoteDfeEntrySchema } from "../gen/malha/nfse/v1/distribution_pb.js";
import { bigVarintSize, varintSize, writeBigVarint, writeVarint } from "../rpc/varint.js";

type EntryInit = MessageInitShape<typeof LoteDfeEntrySchema>;

const VARINT = 0;
const LENGTH_DELIMITED = 2;

/** The message's fields as this encoder writes them, in field-number order (toBinary's order). */
const FIELDS = {
  nsu: LoteDfeEntrySchema.field.nsu.number,
  chaveAcesso: LoteDfeEntrySchema.field.chaveAcesso.number,
  tipoDocumento: LoteDfeEntrySchema.field.tipoDocumento.number,
  tipoEvento: LoteDfeEntrySchema.field.tipoEvento.number,
  arquivoXml: LoteDfeEntrySchema.field.arquivoXml.number,
  dataHoraGeracao: LoteDfeEntrySchema.field.dataHoraGeracao.number,
} as const;

// A field added to the message would silently be dropped here: refuse to load instead.
if (LoteDfeEntrySchema.fields.length !== Object.keys(FIELDS).length || Object.values(FIELDS).some((no) => no > 15)) {
  throw new Error("lote-entry-wire: LoteDfeEntry's fields changed; teach encodeLoteDfeEntry the new ones");
}

const tag = (no: number, wireType: number) => (no << 3) | wireType;

/** Strings of the entry with their UTF-8 sizes; an implicit-presence field is left out when empty, as toBinary does. */
function stringFields(entry: EntryInit): [number, string, number][] {
  const out: [number, string, number][] = [];
  const add = (no: number, value: string | undefined, explicit: boolean) => {
    if (value === undefined || (!explicit && value === "")) return;
    out.push([no, value, Buffer.byteLength(value)]);
  };
  add(FIELDS.chaveAcesso, entry.chaveAcesso, false);
  add(FIELDS.tipoDocumento, entry.tipoDocumento, false);
  add(FIELDS.tipoEvento, entry.tipoEvento, false);
  add(FIELDS.arquivoXml, entry.arquivoXml, true);
  add(FIELDS.dataHoraGeracao, entry.dataHoraGeracao, true);
  return out;
}

/**
 * The entry as a length-delimited field's payload: its size as a varint, then the message. That is how a
 * repeated message field's element sits on the wire, so it can stand as an unknown field of the message
 * that holds the entries.
 */
export function encodeLoteDfeEntryDelimited(entry: EntryInit): Uint8Array {
  const strings = stringFields(entry);
  let size = entry.nsu === undefined ? 0 : 1 + bigVarintSize(entry.nsu);
  for (const [, , bytes] of strings) size += 1 + varintSize(bytes) + bytes;
  const buf = Buffer.allocUnsafe(varintSize(size) + size);
  let at = writeVarint(buf, 0, size);
  if (entry.nsu !== undefined) {
    buf[at++] = tag(FIELDS.nsu, VARINT);
    at = writeBigVarint(buf, at, entry.nsu);
  }
  for (const [no, value, bytes] of strings) {
    buf[at++] = tag(no, LENGTH_DELIMITED);
    at = writeVarint(buf, at, bytes);
    // As many UTF-8 bytes as characters: ASCII (Base64 always), copied byte for byte.
    at += buf.write(value, at, bytes, bytes === value.length ? "latin1" : "utf8");
  }
  return buf;
}
