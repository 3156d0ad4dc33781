// Nota → PDF bytes with pdfkit. Deterministic: the CreationDate (from which pdfkit also derives the file
// ID) comes from the note, fonts and layout depend on nothing else, and no clock or randomness is read.
// pdfkit writes synchronously into its stream buffer, so the whole file is read back at once after end().
import PDFDocument from "pdfkit";
import { inRepertoire, writePrebuilt } from "./embed.js";
import { type FaceName, face, SharedFace, sharedFace } from "./font.js";
import { gatherContent } from "./content.js";
import { useDirectText } from "./draw.js";
import { drawPage, PAGE } from "./layout.js";
import { type Nota, notaText } from "./read.js";

/** What render.ts touches of pdfkit's embedded font object: its dictionary and its embed step. */
interface EmbeddedFontLike {
  readonly id: string;
  dictionary: Parameters<typeof writePrebuilt>[1];
  embed(): void;
  ref(): unknown;
}

export function renderPdf(n: Nota): Uint8Array {
  const doc = new PDFDocument({
    autoFirstPage: false,
    compress: true,
    // No default font: pdfkit would load Helvetica's metrics for a page that never uses it.
    font: null as unknown as string,
    info: {
      CreationDate: n.instante,
      ModDate: n.instante,
      Producer: "malha libs/danfse",
      Creator: "malha libs/danfse",
      Title: `DANFSe ${n.chave}`,
    },
  });
  doc.addPage({ size: [PAGE.width, PAGE.height], margin: 0 });
  const content = gatherContent(doc.page as never);
  // pdfkit takes a font object in place of a file (see font.ts); the cast is for its typings only.
  const prebuilt = inRepertoire(notaText(n));
  const ids: Partial<Record<FaceName, { id: string; face: SharedFace }>> = {};
  for (const name of ["regular", "bold"] as const satisfies FaceName[]) {
    const f = prebuilt ? sharedFace(name) : face(name);
    doc.registerFont(name, f as unknown as string);
    if (f instanceof SharedFace) {
      // pdfkit has no hook for an embedding of one's own: its font object's embed step is replaced. It is
      // the object pdfkit made from `f` just now (pdfkit 0.20 keeps the current font in `_font`), listed
      // in the page's resources as pdfkit's text() would list it.
      doc.font(name);
      const embedded = (doc as unknown as { _font: EmbeddedFontLike })._font;
      embedded.embed = () => writePrebuilt(doc as never, embedded.dictionary, f.prebuilt);
      (doc.page as unknown as { fonts: Record<string, unknown> }).fonts[embedded.id] = embedded.ref();
      ids[name] = { id: embedded.id, face: f };
    }
  }
  if (ids.regular && ids.bold) useDirectText(doc, { fonts: { regular: ids.regular, bold: ids.bold }, pageHeight: PAGE.height });
  drawPage(doc, n);
  content.flush();
  doc.end();
  const out = doc.read() as Buffer | null;
  if (out === null) throw new Error("pdfkit produced no bytes");
  return new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
}
