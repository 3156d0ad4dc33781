// A `LoteDFe` entry as it travels inside the mesh (malha.nfse.v1.LoteDfeEntry): the gateway passes a
// page's entries on undecoded and the store decodes them (docs/decisions/0034-store-decodes-the-page.md).
// Both directions keep what decodeItem reads, so an entry decodes the same in either process.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LoteDfeEntry, LoteDfeEntrySchema } from "../gen/malha/nfse/v1/distribution_pb.js";
import type { RawLoteItem } from "./envelope.js";

const MAX_UINT64 = 2n ** 64n - 1n;

// Optional fields are set, not spread in: an object spread per entry was a visible share of the gateway's
// and the store's per-entry cost (bench/README.md).

/** The entry for the wire; an NSU beyond 64 bits travels as none (decodeItem then quarantines the entry). */
export function toLoteDfeEntry(raw: RawLoteItem): MessageInitShape<typeof LoteDfeEntrySchema> {
  const entry: MessageInitShape<typeof LoteDfeEntrySchema> = {
    chaveAcesso: raw.chaveAcesso,
    tipoDocumento: raw.tipoDocumento,
    tipoEvento: raw.tipoEvento,
  };
  const nsu = raw.nsu !== undefined ? BigInt(raw.nsu) : undefined;
  if (nsu !== undefined && nsu <= MAX_UINT64) entry.nsu = nsu;
  if (raw.arquivoXml !== undefined) entry.arquivoXml = raw.arquivoXml;
  if (raw.dataHoraGeracao !== undefined) entry.dataHoraGeracao = raw.dataHoraGeracao;
  return entry;
}

/** The entry as decodeItem reads it. */
export function fromLoteDfeEntry(entry: LoteDfeEntry): RawLoteItem {
  const raw: RawLoteItem = { chaveAcesso: entry.chaveAcesso, tipoDocumento: entry.tipoDocumento, tipoEvento: entry.tipoEvento };
  if (entry.nsu !== undefined) raw.nsu = entry.nsu.toString();
  if (entry.arquivoXml !== undefined) raw.arquivoXml = entry.arquivoXml;
  if (entry.dataHoraGeracao !== undefined) raw.dataHoraGeracao = entry.dataHoraGeracao;
  return raw;
}
