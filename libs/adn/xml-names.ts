// XML 1.0 Name and Char productions, as code-unit tests. ASCII is answered from tables because nearly
// every name and character in our documents is ASCII; the rest follows the spec's ranges.

const ASCII_NAME_START = new Uint8Array(128);
const ASCII_NAME = new Uint8Array(128);
for (let c = 0; c < 128; c++) {
  const letter = (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 58; // A-Z a-z _ :
  ASCII_NAME_START[c] = letter ? 1 : 0;
  ASCII_NAME[c] = letter || (c >= 48 && c <= 57) || c === 45 || c === 46 ? 1 : 0; // 0-9 - .
}

/** A UTF-16 code unit of a supplementary name character (U+10000–U+EFFFF); pairs are valid after UTF-8 decoding. */
function isNameSurrogate(c: number): boolean {
  return (c >= 0xd800 && c <= 0xdb7f) || (c >= 0xdc00 && c <= 0xdfff);
}

function isNameStart(c: number): boolean {
  if (c < 128) return ASCII_NAME_START[c] === 1;
  return (
    (c >= 0xc0 && c <= 0xd6) ||
    (c >= 0xd8 && c <= 0xf6) ||
    (c >= 0xf8 && c <= 0x2ff) ||
    (c >= 0x370 && c <= 0x37d) ||
    (c >= 0x37f && c <= 0x1fff) ||
    c === 0x200c ||
    c === 0x200d ||
    (c >= 0x2070 && c <= 0x218f) ||
    (c >= 0x2c00 && c <= 0x2fef) ||
    (c >= 0x3001 && c <= 0xd7ff) ||
    (c >= 0xf900 && c <= 0xfdcf) ||
    (c >= 0xfdf0 && c <= 0xfffd) ||
    isNameSurrogate(c)
  );
}

export function isNameChar(c: number): boolean {
  if (c < 128) return ASCII_NAME[c] === 1;
  return isNameStart(c) || c === 0xb7 || (c >= 0x300 && c <= 0x36f) || c === 0x203f || c === 0x2040;
}

/**
 * End of the Name that starts at `at`, or -1 when no name starts there. One call per name rather than
 * one per character.
 */
export function scanName(src: string, at: number): number {
  const first = src.charCodeAt(at);
  if (!(first < 128 ? ASCII_NAME_START[first] === 1 : isNameStart(first))) return -1;
  let i = at + 1;
  for (; i < src.length; i++) {
    const c = src.charCodeAt(i);
    if (!(c < 128 ? ASCII_NAME[c] === 1 : isNameChar(c))) break;
  }
  return i;
}

/** Code points that XML 1.0 forbids anywhere in a document, literally or as a character reference. */
export function isXmlChar(cp: number): boolean {
  return (
    cp === 0x9 ||
    cp === 0xa ||
    cp === 0xd ||
    (cp >= 0x20 && cp <= 0xd7ff) ||
    (cp >= 0xe000 && cp <= 0xfffd) ||
    (cp >= 0x10000 && cp <= 0x10ffff)
  );
}

// Control characters and the two non-characters; surrogates cannot occur after strict UTF-8 decoding.
const FORBIDDEN_LITERAL = /[\x00-\x08\x0B\x0C\x0E-\x1F\uFFFE\uFFFF]/;

/** Position of the first character XML forbids, or -1. One native scan instead of a test per character. */
export function firstForbiddenChar(src: string): number {
  const m = FORBIDDEN_LITERAL.exec(src);
  return m ? m.index : -1;
}
