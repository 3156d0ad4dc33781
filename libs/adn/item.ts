// One `LoteDFe` entry → DistributionItem. Never throws: whatever cannot be decoded or parsed becomes a
// fault item carrying the raw payload, so a bad document never fails the batch and is never lost.
import { create } from "@bufbuild/protobuf";
import { DistributionItemSchema, FaultReason, FaultSchema, type DistributionItem } from "../gen/malha/nfse/v1/distribution_pb.js";
import type { RawLoteItem } from "./envelope.js";
import { parseEvento } from "./event-xml.js";
import { FieldError } from "./fields.js";
import { parseNfse } from "./nfse-xml.js";
import { decodeArquivoXml, sha256Hex } from "./payload.js";
import { parseAdnDateTime } from "./time.js";
import { parseXml, root, XmlError } from "./xml-tree.js";

export interface DecodeOptions {
  /** Largest decompressed XML accepted per item. */
  maxDecompressedBytes: number;
}

export function decodeItem(raw: RawLoteItem, opts: DecodeOptions): DistributionItem {
  const dataHoraGeracao = raw.dataHoraGeracao ? parseAdnDateTime(raw.dataHoraGeracao) : undefined;
  const item = create(DistributionItemSchema, {
    nsu: raw.nsu !== undefined ? BigInt(raw.nsu) : 0n,
    ...(dataHoraGeracao ? { dataHoraGeracao } : {}),
    chave: raw.chaveAcesso,
    tipoDocumento: raw.tipoDocumento,
    tipoEvento: raw.tipoEvento,
  });
  const fault = (reason: FaultReason, message: string): DistributionItem => {
    // The raw payload is kept only where it is needed: for the quarantine, never for good items.
    const rawPayload = new TextEncoder().encode(raw.arquivoXml ?? "");
    item.content = { case: "fault", value: create(FaultSchema, { reason, message, rawPayload }) };
    return item;
  };
  if (raw.arquivoXml === undefined) return fault(FaultReason.MISSING_FIELD, "ArquivoXml is missing");
  const decoded = decodeArquivoXml(raw.arquivoXml, opts.maxDecompressedBytes);
  if (!decoded.ok) return fault(decoded.reason, decoded.message);
  item.xml = decoded.xml;
  item.xmlSha256 = sha256Hex(decoded.xml);
  if (raw.nsu === undefined) return fault(FaultReason.MISSING_FIELD, "NSU is missing or not an integer");
  if (raw.dataHoraGeracao && !dataHoraGeracao) return fault(FaultReason.MISSING_FIELD, "DataHoraGeracao is not a date-time");
  try {
    const top = root(parseXml(decoded.xml));
    if (top?.name === "NFSe") item.content = { case: "document", value: parseNfse(top.node) };
    else if (top?.name === "evento") item.content = { case: "event", value: parseEvento(top.node) };
    else return fault(FaultReason.UNKNOWN_DOCUMENT_TYPE, `root element <${top?.name ?? "none"}> is neither NFSe nor evento`);
    return item;
  } catch (err) {
    if (err instanceof XmlError) return fault(FaultReason.BAD_XML, err.message);
    if (err instanceof FieldError)
      return fault(err.fault === "missing" ? FaultReason.MISSING_FIELD : FaultReason.INVALID_VALUE, err.message);
    // A shape the parser did not foresee is still this item's problem, never the batch's.
    return fault(FaultReason.BAD_XML, `unparseable structure: ${(err as Error).message}`);
  }
}
