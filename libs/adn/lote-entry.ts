// A `LoteDFe` entry as it travels inside the mesh (malha.nfse.v1.LoteDfeEntry): the gateway passes a
// page's entries on undecoded and the store decodes them (docs/decisions/0034-store-decodes-the-page.md).
// Both directions keep what decodeItem reads, so an entry decodes the same in either process.
import type { MessageInitShape } from "@bufbuild/protobuf";
import type { LoteDfeEntry, LoteDfeEntrySchema } from "../gen/malha/nfse/v1/distribution_pb.js";
import type { RawLoteItem } from "./envelope.js";

const MAX_UINT64 = 2n ** 64n - 1n;

/** The entry for the wire; an NSU beyond 64 bits travels as none (decodeItem then quarantines the entry). */
export function toLoteDfeEntry(raw: RawLoteItem): MessageInitShape<typeof LoteDfeEntrySchema> {
  const nsu = raw.nsu !== undefined ? BigInt(raw.nsu) : undefined;
  return {
    ...(nsu !== undefined && nsu <= MAX_UINT64 ? { nsu } : {}),
    chaveAcesso: raw.chaveAcesso,
    tipoDocumento: raw.tipoDocumento,
    tipoEvento: raw.tipoEvento,
    ...(raw.arquivoXml !== undefined ? { arquivoXml: raw.arquivoXml } : {}),
    ...(raw.dataHoraGeracao !== undefined ? { dataHoraGeracao: raw.dataHoraGeracao } : {}),
  };
}

/** The entry as decodeItem reads it. */
export function fromLoteDfeEntry(entry: LoteDfeEntry): RawLoteItem {
  return {
    ...(entry.nsu !== undefined ? { nsu: entry.nsu.toString() } : {}),
    chaveAcesso: entry.chaveAcesso,
    tipoDocumento: entry.tipoDocumento,
    tipoEvento: entry.tipoEvento,
    ...(entry.arquivoXml !== undefined ? { arquivoXml: entry.arquivoXml } : {}),
    ...(entry.dataHoraGeracao !== undefined ? { dataHoraGeracao: entry.dataHoraGeracao } : {}),
  };
}
