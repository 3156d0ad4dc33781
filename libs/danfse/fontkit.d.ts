// The part of fontkit (a dependency of pdfkit, pinned to the same version) that the DANFSe fonts use.
declare module "fontkit" {
  export interface Glyph {
    readonly id: number;
    readonly advanceWidth: number;
    readonly codePoints: number[];
  }
  export interface Font {
    readonly postscriptName: string;
    readonly unitsPerEm: number;
    readonly ascent: number;
    readonly descent: number;
    readonly lineGap: number;
    readonly capHeight: number;
    readonly xHeight: number;
    readonly italicAngle: number;
    readonly bbox: unknown;
    hasGlyphForCodePoint(codePoint: number): boolean;
    glyphForCodePoint(codePoint: number): Glyph;
    getGlyph(id: number): Glyph;
    createSubset(): unknown;
  }
  export function create(buffer: Uint8Array, postscriptName?: string): Font;
}
