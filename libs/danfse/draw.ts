// Drawing primitives of the DANFSe page: text that never leaves its box (shrunk a little, then cut with
// "…"), labelled cells, grey block titles, wrapped paragraphs with a fixed number of lines, the QR code.
// Widths come from font.ts, which measures exactly what pdfkit draws, so no line is ever wrapped or
// measured by pdfkit itself.
import type QRCode from "qrcode";
import { type Face, type FaceName, face, type SharedFace } from "./font.js";

export const MM = 72 / 25.4;
export type Doc = PDFKit.PDFDocument;

const ELLIPSIS = "…";
/** Vertical extent of a line of DejaVu text, in em: ascent 0.928 + descent 0.236, rounded up. */
export const LINE_EM = 1.17;

export interface TextOptions {
  readonly size: number;
  readonly face?: FaceName;
  readonly align?: "left" | "right" | "center";
  /** Smallest size a too-wide line may shrink to before it is cut (default: 85 % of `size`). */
  readonly min?: number;
  readonly color?: string;
}

/** Cuts `s` to fit `w` at `size`, ending in "…" when anything was cut. */
export function cut(f: Face, s: string, w: number, size: number): string {
  if (f.width(s, size) <= w) return s;
  const budget = w - f.width(ELLIPSIS, size);
  let used = 0;
  let end = 0;
  for (const ch of s) {
    const cw = f.width(ch, size);
    if (used + cw > budget) break;
    used += cw;
    end += ch.length;
  }
  return `${s.slice(0, end).trimEnd()}${ELLIPSIS}`;
}

/**
 * Documents whose faces are the prebuilt ones (embed.ts): their text is written as content operators
 * directly, one show-text per line, since every glyph id is known in advance. pdfkit's text() would lay
 * the line out, encode it and track state again for each of the few hundred lines of a page.
 */
export interface DirectText {
  readonly fonts: Readonly<Record<FaceName, { readonly id: string; readonly face: SharedFace }>>;
  readonly pageHeight: number;
}
const direct = new WeakMap<Doc, DirectText>();

export function useDirectText(doc: Doc, d: DirectText): void {
  direct.set(doc, d);
}

const num = (n: number) => String(Math.round(n * 1000) / 1000);

function rgb(color: string): string {
  const m = /^#([0-9a-f]{2})([0-9a-f]{2})([0-9a-f]{2})$/i.exec(color);
  if (!m) return "0 g";
  return `${[m[1], m[2], m[3]].map((h) => num(Number.parseInt(h!, 16) / 255)).join(" ")} rg`;
}

/** One line inside [x, x + w], top of the line at `y`. */
export function line(doc: Doc, s: string, x: number, y: number, w: number, o: TextOptions): void {
  const f = face(o.face ?? "regular");
  const min = o.min ?? o.size * 0.85;
  let size = o.size;
  const natural = f.width(s, size);
  if (natural > w) size = Math.max(min, (size * w) / natural);
  const t = cut(f, s, w, size);
  const tw = f.width(t, size);
  const dx = o.align === "right" ? w - tw : o.align === "center" ? (w - tw) / 2 : 0;
  // A shrunk line keeps the vertical centre of the full-size one.
  const dy = ((o.size - size) * LINE_EM) / 2;
  const d = direct.get(doc);
  if (d) {
    const font = d.fonts[o.face ?? "regular"];
    // Same placement as pdfkit's text(): y is the top of the ascent; PDF's own coordinates grow upwards.
    const baseline = d.pageHeight - (y + dy) - (f.ascent / f.unitsPerEm) * size;
    const color = o.color && o.color !== "black" ? rgb(o.color) : "0 g";
    doc.addContent(
      `q 1 0 0 -1 0 ${num(d.pageHeight)} cm BT ${color} /${font.id} ${num(size)} Tf 1 0 0 1 ${num(x + Math.max(0, dx))} ${num(baseline)} Tm <${font.face.hex(t)}> Tj ET Q`,
    );
    return;
  }
  doc
    .font(o.face ?? "regular")
    .fontSize(size)
    .fillColor(o.color ?? "black")
    // textWidth/wordCount: pdfkit would measure the line again only to place links and underlines.
    .text(t, x + Math.max(0, dx), y + dy, { lineBreak: false, textWidth: tw, wordCount: 1 } as PDFKit.Mixins.TextOptions);
}

/** How many characters at the start of `s` fit in `w` (at least one, so that wrapping always advances). */
function fitting(f: Face, s: string, w: number, size: number): number {
  let used = 0;
  let end = 0;
  for (const ch of s) {
    used += f.width(ch, size);
    if (used > w && end > 0) break;
    end += ch.length;
  }
  return end;
}

/**
 * Words of `s` wrapped into at most `maxLines` lines of width `w`; the last one ends in "…" when text is
 * left over. A word wider than a line is broken where it reaches the edge.
 */
export function wrap(s: string, w: number, size: number, maxLines: number, faceName: FaceName = "regular"): string[] {
  const f = face(faceName);
  const pieces: string[] = [];
  for (const word of s.split(/\s+/)) {
    let rest = word;
    while (rest !== "") {
      const n = f.width(rest, size) <= w ? rest.length : fitting(f, rest, w, size);
      pieces.push(rest.slice(0, n));
      rest = rest.slice(n);
    }
  }
  const space = f.width(" ", size);
  const lines: string[] = [];
  let cur = "";
  let curW = 0;
  let k = 0;
  for (; k < pieces.length; k++) {
    const p = pieces[k]!;
    const pw = f.width(p, size);
    if (cur === "") {
      cur = p;
      curW = pw;
    } else if (curW + space + pw <= w) {
      cur += ` ${p}`;
      curW += space + pw;
    } else {
      lines.push(cur);
      if (lines.length === maxLines) {
        cur = "";
        break;
      }
      cur = p;
      curW = pw;
    }
  }
  if (cur !== "") lines.push(cur);
  if (k < pieces.length && lines.length > 0) {
    const last = lines.length - 1;
    lines[last] = cut(f, `${lines[last]!} ${pieces[k]!}`, w, size);
  }
  return lines;
}

/** How many lines `s` needs at width `w` (up to `cap`). */
export function linesNeeded(s: string, w: number, size: number, cap: number): number {
  return wrap(s, w, size, cap + 1).length;
}

export function paragraph(doc: Doc, lines: readonly string[], x: number, y: number, size: number, lead: number): void {
  lines.forEach((l, k) => line(doc, l, x, y + k * lead, Number.POSITIVE_INFINITY, { size }));
}

const LABEL = 5.2;
const VALUE = 7.2;
/** Height of a labelled cell row. */
export const ROW = 6.4 * MM;
const PAD = 1.3;

/** A cell: small bold label on top, the value under it; both cut to the cell's width. */
export function cell(
  doc: Doc,
  x: number,
  y: number,
  w: number,
  label: string,
  value: string,
  o: { bold?: boolean; size?: number } = {},
): void {
  line(doc, label, x + PAD, y + 1.4, w - 2 * PAD, { size: LABEL, face: "bold", min: 4.5 });
  line(doc, value, x + PAD, y + 8.6, w - 2 * PAD, { size: o.size ?? VALUE, face: o.bold ? "bold" : "regular" });
}

export const TITLE = 4.4 * MM;

/** A block title on a 5 % grey band, with a rule under it. */
export function title(doc: Doc, x: number, y: number, w: number, s: string): void {
  doc.save().rect(x, y, w, TITLE).fill("#f2f2f2").restore();
  line(doc, s, x + PAD, y + 2.6, w - 2 * PAD, { size: 7, face: "bold" });
}

export function hrule(doc: Doc, x: number, y: number, w: number, width = 0.5): void {
  doc
    .save()
    .lineWidth(width)
    .moveTo(x, y)
    .lineTo(x + w, y)
    .stroke()
    .restore();
}

/** The QR matrix as filled squares, one rectangle per run of dark modules in a row, on a white quiet zone. */
export function qr(doc: Doc, code: QRCode.QRCode, x: number, y: number, sizePt: number, quiet: number): void {
  const n = code.modules.size;
  const m = sizePt / (n + 2 * quiet);
  doc.save().rect(x, y, sizePt, sizePt).fill("white");
  const data = code.modules.data;
  for (let r = 0; r < n; r++) {
    let c = 0;
    while (c < n) {
      if (!data[r * n + c]) {
        c++;
        continue;
      }
      const start = c;
      while (c < n && data[r * n + c]) c++;
      doc.rect(x + (start + quiet) * m, y + (r + quiet) * m, (c - start) * m, m);
    }
  }
  doc.fill("black").restore();
}
