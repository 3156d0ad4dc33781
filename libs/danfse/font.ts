// The two embedded faces of the DANFSe (DejaVu Sans Condensed, regular and bold, from the npm package
// dejavu-fonts-ttf; licence in its LICENSE file). Each TTF is read and parsed once per process: the only
// I/O of this library, of its own package data, never of the caller's.
//
// pdfkit lays text out through fontkit's OpenType shaper (kerning, ligatures) on every call, which cost
// most of a render. The DANFSe prints Latin text in boxes it measures itself, so it hands pdfkit a face
// whose layout is one glyph per code point at its advance width: the width this module measures is then
// exactly the width pdfkit draws, and no shaping runs. Subsetting and embedding stay fontkit's.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import * as fontkit from "fontkit";
import { type Prebuilt, prebuild } from "./embed.js";

export type FaceName = "regular" | "bold";

const FILES: Record<FaceName, string> = {
  regular: "dejavu-fonts-ttf/ttf/DejaVuSansCondensed.ttf",
  bold: "dejavu-fonts-ttf/ttf/DejaVuSansCondensed-Bold.ttf",
};

/** What pdfkit reads of a font object it is given instead of a file (its EmbeddedFont). */
export class Face {
  readonly postscriptName: string;
  readonly unitsPerEm: number;
  readonly ascent: number;
  readonly descent: number;
  readonly lineGap: number;
  readonly capHeight: number;
  readonly xHeight: number;
  readonly italicAngle: number;
  readonly bbox: unknown;
  private readonly glyphs = new Map<number, fontkit.Glyph>();
  private readonly fallback: fontkit.Glyph;

  constructor(protected readonly font: fontkit.Font) {
    this.postscriptName = font.postscriptName;
    this.unitsPerEm = font.unitsPerEm;
    this.ascent = font.ascent;
    this.descent = font.descent;
    this.lineGap = font.lineGap;
    this.capHeight = font.capHeight;
    this.xHeight = font.xHeight;
    this.italicAngle = font.italicAngle;
    this.bbox = font.bbox;
    // A character the face lacks prints as "?" rather than as an empty box.
    this.fallback = font.glyphForCodePoint(0x3f);
  }

  // pdfkit's embedding reads these tables by name.
  get "OS/2"(): unknown {
    return (this.font as unknown as Record<string, unknown>)["OS/2"];
  }
  get post(): unknown {
    return (this.font as unknown as Record<string, unknown>).post;
  }
  get head(): unknown {
    return (this.font as unknown as Record<string, unknown>).head;
  }
  get _tables(): unknown {
    return (this.font as unknown as Record<string, unknown>)._tables;
  }

  glyph(codePoint: number): fontkit.Glyph {
    let g = this.glyphs.get(codePoint);
    if (g === undefined) {
      g = this.font.hasGlyphForCodePoint(codePoint) ? this.font.glyphForCodePoint(codePoint) : this.fallback;
      this.glyphs.set(codePoint, g);
    }
    return g;
  }

  /** Width of `text` at `size` points, as pdfkit will draw it with this face. */
  width(text: string, size: number): number {
    let units = 0;
    for (let i = 0; i < text.length; i++) {
      const cp = text.codePointAt(i)!;
      if (cp > 0xffff) i++;
      units += this.glyph(cp).advanceWidth;
    }
    return (units * size) / this.unitsPerEm;
  }

  getGlyph(id: number): fontkit.Glyph {
    return this.font.getGlyph(id);
  }

  createSubset(): unknown {
    return this.font.createSubset();
  }

  /** fontkit's GlyphRun, reduced to what pdfkit reads; fresh objects each call, as pdfkit scales them in place. */
  layout(text: string): { glyphs: fontkit.Glyph[]; positions: Position[]; readonly advanceWidth: number } {
    const glyphs: fontkit.Glyph[] = [];
    const positions: Position[] = [];
    for (let i = 0; i < text.length; i++) {
      const cp = text.codePointAt(i)!;
      if (cp > 0xffff) i++;
      const g = this.glyph(cp);
      glyphs.push(g);
      positions.push({ xAdvance: g.advanceWidth, yAdvance: 0, xOffset: 0, yOffset: 0 });
    }
    return {
      glyphs,
      positions,
      get advanceWidth() {
        let w = 0;
        for (const p of positions) w += p.xAdvance;
        return w;
      },
    };
  }
}

interface Position {
  xAdvance: number;
  yAdvance: number;
  xOffset: number;
  yOffset: number;
}

/** The face as pdfkit sees it when the page uses the prebuilt subset: glyph ids map to the subset's. */
export class SharedFace extends Face {
  constructor(
    font: fontkit.Font,
    readonly prebuilt: Prebuilt,
  ) {
    super(font);
  }

  private readonly hexes = new Map<number, string>();

  /** The glyph of `text` in the prebuilt subset, as the hex string of a PDF show-text operator (Identity-H). */
  hex(text: string): string {
    let out = "";
    for (let i = 0; i < text.length; i++) {
      const cp = text.codePointAt(i)!;
      if (cp > 0xffff) i++;
      let h = this.hexes.get(cp);
      if (h === undefined) {
        const gid = this.prebuilt.gids.get(this.glyph(cp).id) ?? this.prebuilt.gids.get(this.glyph(0x3f).id) ?? 0;
        h = gid.toString(16).padStart(4, "0");
        this.hexes.set(cp, h);
      }
      out += h;
    }
    return out;
  }

  override createSubset(): unknown {
    const gids = this.prebuilt.gids;
    const fallback = gids.get(this.glyph(0x3f).id) ?? 0;
    return { includeGlyph: (id: number) => gids.get(id) ?? fallback };
  }
}

const require = createRequire(import.meta.url);
const fonts = new Map<FaceName, fontkit.Font>();
const faces = new Map<FaceName, Face>();
const shared = new Map<FaceName, SharedFace>();

function load(name: FaceName): fontkit.Font {
  let f = fonts.get(name);
  if (f === undefined) {
    f = fontkit.create(readFileSync(require.resolve(FILES[name])));
    fonts.set(name, f);
  }
  return f;
}

/** The face that measures text and that pdfkit subsets per document. */
export function face(name: FaceName): Face {
  let f = faces.get(name);
  if (f === undefined) {
    f = new Face(load(name));
    faces.set(name, f);
  }
  return f;
}

/** The face written with the prebuilt subset (embed.ts); built on first use. */
export function sharedFace(name: FaceName): SharedFace {
  let f = shared.get(name);
  if (f === undefined) {
    f = new SharedFace(load(name), prebuild(face(name), name === "bold" ? "DANFSB" : "DANFSA"));
    shared.set(name, f);
  }
  return f;
}
