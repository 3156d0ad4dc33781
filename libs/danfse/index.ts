// STAND-IN: replaced by the DANFSe engine on merge
// The rendering contract the danfse service builds on: stored NFS-e XML + its events → DANFSe PDF bytes,
// deterministic. This stand-in draws only the chave (and the event codes) on one A4 page, enough for the
// service's tests, which rely on the contract alone (the PDF's text holds the chave).
import PDFDocument from "pdfkit";

export interface DanfseEvent {
  /** tpEvento code, e.g. "101101". */
  tipo: string;
  xml: Uint8Array;
}

export interface DanfseInput {
  xml: Uint8Array;
  events: DanfseEvent[];
}

/** The XML cannot make a DANFSe: `field` names the element (path), `reason` says what is wrong with it. */
export class DanfseError extends Error {
  override name = "DanfseError";
  constructor(
    readonly field: string,
    readonly reason: string,
  ) {
    super(`${field} ${reason}`);
  }
}

const FIXED_DATE = new Date(Date.UTC(2026, 0, 1));

export function renderDanfse(input: DanfseInput): Uint8Array {
  const xml = Buffer.from(input.xml.buffer, input.xml.byteOffset, input.xml.byteLength).toString("utf8");
  if (!/<infNFSe[\s>]/.test(xml)) throw new DanfseError("infNFSe", "is missing");
  const id = /<infNFSe[^>]*\sId="NFS([0-9A-Z]{50})"/.exec(xml);
  if (!id) throw new DanfseError("infNFSe/@Id", "is not NFS followed by a chave");
  const doc = new PDFDocument({
    size: "A4",
    margin: 0,
    compress: true,
    info: { CreationDate: FIXED_DATE, ModDate: FIXED_DATE, Producer: "malha libs/danfse", Creator: "malha libs/danfse", Title: "DANFSe" },
  });
  doc.font("Helvetica").fontSize(9).text("DANFSe v2.0", 40, 40, { lineBreak: false });
  doc.text(`Chave de acesso: ${id[1]}`, 40, 60, { lineBreak: false });
  input.events.forEach((e, i) => doc.text(`Evento ${e.tipo}`, 40, 80 + 12 * i, { lineBreak: false }));
  doc.end();
  // Without a 'data' listener the stream stays paused and keeps what pdfkit pushed: read it synchronously.
  const chunks: Buffer[] = [];
  for (let c = doc.read() as Buffer | null; c !== null; c = doc.read() as Buffer | null) chunks.push(c);
  return new Uint8Array(Buffer.concat(chunks));
}
