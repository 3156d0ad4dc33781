// A font embedding built once per process and written unchanged into every DANFSe: the subset of the face
// for a fixed repertoire (ASCII, Latin-1 and the typographic marks the page uses), already compressed, with
// its widths and ToUnicode map. pdfkit otherwise subsets, encodes and deflates both faces anew for every
// document, most of a render's cost. A note with a character outside the repertoire (rare: names in
// other scripts) takes pdfkit's own per-document subset instead, so nothing is ever lost; which path a
// note takes depends on its text only, so the bytes stay deterministic.
import { deflateSync } from "node:zlib";
import type { Face } from "./font.js";

/** Code points of the shared subset. */
export const REPERTOIRE: ReadonlySet<number> = new Set([
  ...range(0x20, 0x7e),
  ...range(0xa0, 0xff),
  0x2013, // –
  0x2014, // —
  0x2018, // ‘
  0x2019, // ’
  0x201c, // “
  0x201d, // ”
  0x2022, // •
  0x2026, // …
  0x20ac, // €
]);

function range(a: number, b: number): number[] {
  const out: number[] = [];
  for (let c = a; c <= b; c++) out.push(c);
  return out;
}

/** True when every character of `s` is in the shared subset. */
export function inRepertoire(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (!(c >= 0x20 && c <= 0x7e) && !REPERTOIRE.has(c)) return false;
  }
  return true;
}

export interface Prebuilt {
  /** Original glyph id → glyph id in the subset (the CID written in the content stream). */
  readonly gids: ReadonlyMap<number, number>;
  readonly fontFile: Uint8Array;
  readonly fontFileLength: number;
  readonly toUnicode: Uint8Array;
  readonly widths: number[];
  readonly name: string;
  readonly descriptor: Record<string, unknown>;
}

interface FontkitSubset {
  glyphs: number[];
  includeGlyph(id: number): number;
  encode(): Uint8Array;
}

const hex4 = (n: number) => n.toString(16).padStart(4, "0");

export function prebuild(f: Face, tag: string): Prebuilt {
  const subset = f.createSubset() as FontkitSubset;
  const unicode = new Map<number, number>();
  for (const cp of [...REPERTOIRE].sort((a, b) => a - b)) {
    const g = f.glyph(cp);
    const gid = subset.includeGlyph(g.id);
    if (!unicode.has(gid)) unicode.set(gid, cp);
  }
  // encode() appends the components of composite glyphs to `glyphs`, so it runs before the widths are read.
  const ttf = subset.encode();
  const gids = new Map<number, number>();
  subset.glyphs.forEach((orig, i) => gids.set(orig, i));
  const scale = 1000 / f.unitsPerEm;
  const widths = subset.glyphs.map((orig) => Math.round(f.getGlyph(orig).advanceWidth * scale * 1000) / 1000);
  const entries = subset.glyphs.map((_, gid) => {
    const cp = unicode.get(gid);
    return cp === undefined ? "" : `<${hex4(gid)}> <${hex4(cp)}>`;
  });
  const mapped = entries.filter((e) => e !== "");
  const chunks: string[] = [];
  for (let i = 0; i < mapped.length; i += 100) {
    const part = mapped.slice(i, i + 100);
    chunks.push(`${part.length} beginbfchar\n${part.join("\n")}\nendbfchar`);
  }
  const cmap = [
    "/CIDInit /ProcSet findresource begin",
    "12 dict begin",
    "begincmap",
    "/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def",
    "/CMapName /Adobe-Identity-UCS def",
    "/CMapType 2 def",
    "1 begincodespacerange",
    "<0000> <ffff>",
    "endcodespacerange",
    ...chunks,
    "endcmap",
    "CMapName currentdict /CMap defineresource pop",
    "end",
    "end",
  ].join("\n");
  const name = `${tag}+${f.postscriptName.replaceAll(" ", "_")}`;
  const bbox = f.bbox as { minX: number; minY: number; maxX: number; maxY: number };
  return {
    gids,
    fontFile: deflateSync(ttf),
    fontFileLength: ttf.length,
    toUnicode: deflateSync(Buffer.from(cmap, "latin1")),
    widths,
    name,
    descriptor: {
      Type: "FontDescriptor",
      FontName: name,
      Flags: 4, // symbolic, as pdfkit writes its own embedded fonts
      FontBBox: [bbox.minX * scale, bbox.minY * scale, bbox.maxX * scale, bbox.maxY * scale],
      ItalicAngle: f.italicAngle,
      Ascent: f.ascent * scale,
      Descent: f.descent * scale,
      CapHeight: (f.capHeight || f.ascent) * scale,
      XHeight: (f.xHeight || 0) * scale,
      StemV: 0,
    },
  };
}

/** pdfkit's reference objects, as much of them as an embedding writes. */
interface Ref {
  data: Record<string, unknown>;
  end(chunk?: Uint8Array): void;
}
interface Document {
  ref(data?: Record<string, unknown>): Ref;
}

/**
 * Writes the prebuilt embedding as pdfkit would write an embedded font's objects (Type0 font, CIDFontType2
 * descendant, descriptor, FontFile2, ToUnicode). Streams carry their Filter already, so pdfkit does not
 * compress them again.
 */
export function writePrebuilt(doc: Document, dictionary: Ref, p: Prebuilt): void {
  const file = doc.ref({ Filter: "FlateDecode", Length1: p.fontFileLength });
  file.end(p.fontFile);
  const descriptor = doc.ref({ ...p.descriptor, FontFile2: file });
  descriptor.end();
  const cid = doc.ref({
    Type: "Font",
    Subtype: "CIDFontType2",
    BaseFont: p.name,
    // pdfkit writes String objects as PDF strings, primitive strings as names.
    CIDSystemInfo: { Registry: new String("Adobe"), Ordering: new String("Identity"), Supplement: 0 },
    FontDescriptor: descriptor,
    W: [0, p.widths],
    CIDToGIDMap: "Identity",
  });
  cid.end();
  const toUnicode = doc.ref({ Filter: "FlateDecode" });
  toUnicode.end(p.toUnicode);
  dictionary.data = {
    Type: "Font",
    Subtype: "Type0",
    BaseFont: p.name,
    Encoding: "Identity-H",
    DescendantFonts: [cid],
    ToUnicode: toUnicode,
  };
  dictionary.end();
}
