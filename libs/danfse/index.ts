// DANFSe v2.0 (NT 008 SE/CGNFS-e, Anexo I) rendered from a stored NFS-e and its events. Pure: bytes in,
// bytes out, no I/O but reading its own embedded fonts once. See README.md.
import { readNota } from "./read.js";
import { renderPdf } from "./render.js";

export { DanfseError } from "./errors.js";
export { consultaUrl } from "./layout.js";

export interface DanfseEvent {
  /** tpEvento code as the store keeps it (6 digits, no "e"): "101101" cancellation, "105102" substitution. */
  tipo: string;
  xml: Uint8Array;
}

export interface DanfseInput {
  /** The stored NFS-e XML. */
  xml: Uint8Array;
  events: DanfseEvent[];
}

/** PDF bytes of the DANFSe; the same input gives the same bytes. Throws DanfseError naming the field that cannot be rendered. */
export function renderDanfse(input: DanfseInput): Uint8Array {
  return renderPdf(readNota(input));
}
