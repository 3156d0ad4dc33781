// Entity and character references in text and attribute values. Without a DTD only the five predefined
// entities exist, so any other `&name;` is an undeclared entity and the document is refused, as is a
// character reference to a code point XML forbids.
import { notWellFormed } from "./xml-error.js";
import { isXmlChar, scanName } from "./xml-names.js";

// A Map, not an object literal: `&constructor;` must not find Object.prototype's members.
const PREDEFINED = new Map([
  ["amp", "&"],
  ["lt", "<"],
  ["gt", ">"],
  ["quot", '"'],
  ["apos", "'"],
]);

/** Value of a numeric reference body (after `&#`), or -1 when it is not one or names no XML character. */
function codePoint(src: string, from: number, to: number): number {
  const hex = src.charCodeAt(from) === 120; // x
  let i = hex ? from + 1 : from;
  if (i === to) return -1;
  let cp = 0;
  for (; i < to; i++) {
    const c = src.charCodeAt(i);
    let d: number;
    if (c >= 48 && c <= 57) d = c - 48;
    else if (hex && c >= 97 && c <= 102) d = c - 87;
    else if (hex && c >= 65 && c <= 70) d = c - 55;
    else return -1;
    cp = cp * (hex ? 16 : 10) + d;
    if (cp > 0x10ffff) return -1; // also stops overflow on long digit runs
  }
  return isXmlChar(cp) ? cp : -1;
}

/** The replacement text of the reference whose `&` is at `amp` and `;` at `semi`. */
function resolve(src: string, amp: number, semi: number): string {
  if (src.charCodeAt(amp + 1) === 35) {
    // #
    const cp = codePoint(src, amp + 2, semi);
    if (cp < 0) throw notWellFormed(src, amp, `invalid character reference ${src.slice(amp, semi + 1)}`);
    return String.fromCodePoint(cp);
  }
  if (scanName(src, amp + 1) !== semi) throw notWellFormed(src, amp, "'&' is not part of a reference (write &amp;)");
  const name = src.slice(amp + 1, semi);
  const value = PREDEFINED.get(name);
  if (value === undefined) throw notWellFormed(src, amp, `reference to undeclared entity &${name}; (no DTD is accepted)`);
  return value;
}

/** Position of `ch` in src[from, to), or `to`; bounded so that a value never causes a scan past its end. */
function find(src: string, ch: number, from: number, to: number): number {
  while (from < to && src.charCodeAt(from) !== ch) from++;
  return from;
}

/** A rewrite of literal text (what lies between references): referenced characters never go through it. */
export type Literal = (s: string) => string;

/** Line-end normalisation (XML 1.0 §2.11): CR LF and a lone CR read as LF. */
export const lineEnds: Literal = (s) => s.replace(/\r\n?/g, "\n");

/** Attribute-value normalisation (XML 1.0 §3.3.3), after line ends: a tab or line end reads as a space. */
export const attrSpaces: Literal = (s) => s.replace(/\r\n|[\t\n\r]/g, " ");

/**
 * src[from, to) with every reference replaced; `first` is the position of its first `&`. `literal`, when
 * given, rewrites the text around the references, so &#13; stays a CR and &#9; a tab.
 */
export function decodeReferences(src: string, from: number, to: number, first: number, literal?: Literal): string {
  let out = "";
  for (let amp = first; amp < to; amp = find(src, 38, from, to)) {
    const semi = find(src, 59, amp + 1, to); // ;
    if (semi === to) throw notWellFormed(src, amp, "'&' is not part of a reference (write &amp;)");
    const text = src.slice(from, amp);
    out += (literal ? literal(text) : text) + resolve(src, amp, semi);
    from = semi + 1;
  }
  const text = src.slice(from, to);
  return out + (literal ? literal(text) : text);
}
