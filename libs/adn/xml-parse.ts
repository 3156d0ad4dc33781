// One pass over an XML document that checks well-formedness and builds the element tree the field
// extractors read; hand-written because a general parser cost most of the gateway's CPU
// (docs/decisions/0001-own-xml-parser.md). It accepts a deliberate subset of XML 1.0, stated in README.md:
// no DTD (refused), namespaces reduced to local names (the layout uses none), and an element's text runs
// concatenated, each one trimmed.
import { notWellFormed, XmlError } from "./xml-error.js";
import { firstForbiddenChar, isNameChar, scanName } from "./xml-names.js";
import { attrSpaces, decodeReferences, lineEnds } from "./xml-refs.js";

export interface XmlNode {
  /** Local name: a prefix, if any, is dropped. "" for the document node that holds the root. */
  readonly name: string;
  /** Attribute names (local) and values (normalised, references decoded, untrimmed) alternating; namespace declarations excluded. */
  attrs: string[] | undefined;
  children: XmlNode[] | undefined;
  /** Text content: the element's text runs (between element tags), references decoded, each trimmed, concatenated. */
  text: string;
}

const GT = 62,
  SLASH = 47,
  BANG = 33,
  QUESTION = 63,
  EQ = 61,
  DQUOTE = 34,
  SQUOTE = 39,
  DASH = 45;

function isSpace(c: number): boolean {
  return c === 32 || c === 10 || c === 9 || c === 13;
}

/** "p:local" → "local"; a name with no colon, a leading or trailing one, or several is no prefixed name and stays whole. */
function localName(name: string): string {
  const i = name.indexOf(":");
  if (i <= 0 || i === name.length - 1 || name.indexOf(":", i + 1) !== -1) return name;
  return name.slice(i + 1);
}

class Parser {
  private pos = 0;
  private readonly doc: XmlNode = { name: "", attrs: undefined, children: undefined, text: "" };
  /** Open elements and their names as written (with prefix), for matching close tags without slicing. */
  private readonly open: XmlNode[] = [];
  private readonly openRaw: string[] = [];
  private cur: XmlNode = this.doc;
  // Next '&' and '<' at or after the last position asked about (src.length when none). Positions only move
  // forward, so each is found by one scan in total: an indexOf per text run or attribute could rescan to
  // the end of a large document every time.
  private amp = -1;
  private lt = -1;
  // Likewise for ']]>', which text may not contain.
  private cdEnd = -1;
  /**
   * Whether the document holds a CR at all. Line ends are normalised (XML 1.0 §2.11) value by value, and
   * only in documents that have one: CR LF indentation, the usual case, is trimmed away unread.
   */
  private readonly crs: boolean;
  /**
   * The current text run so far, once a comment, processing instruction or CDATA section has interrupted
   * it; undefined otherwise. A run ends only at an element tag: comments and PIs are not there
   * (`a <!-- c --> b` reads "a  b") and CDATA is text.
   */
  private run: string | undefined = undefined;

  /** Elements and attributes so far, against MAX_XML_NODES. */
  private nodes = 0;

  constructor(private readonly src: string) {
    this.crs = src.indexOf("\r") !== -1;
  }

  private nextAmp(from: number): number {
    if (this.amp < from) {
      const i = this.src.indexOf("&", from);
      this.amp = i === -1 ? this.src.length : i;
    }
    return this.amp;
  }

  private nextLt(from: number): number {
    if (this.lt < from) {
      const i = this.src.indexOf("<", from);
      this.lt = i === -1 ? this.src.length : i;
    }
    return this.lt;
  }

  private nextCdEnd(from: number): number {
    if (this.cdEnd < from) {
      const i = this.src.indexOf("]]>", from);
      this.cdEnd = i === -1 ? this.src.length : i;
    }
    return this.cdEnd;
  }

  /** Literal text src[from, to), line ends normalised. */
  private literalText(from: number, to: number): string {
    const v = this.src.slice(from, to);
    return this.crs && v.indexOf("\r") !== -1 ? lineEnds(v) : v;
  }

  private countNode(at: number): void {
    if (++this.nodes > MAX_XML_NODES) this.fail(`more than ${MAX_XML_NODES} elements and attributes`, at);
  }

  private fail(problem: string, at = this.pos): never {
    throw notWellFormed(this.src, at, problem);
  }

  parse(): XmlNode {
    const src = this.src;
    const bad = firstForbiddenChar(src);
    if (bad !== -1) this.fail(`character U+${src.charCodeAt(bad).toString(16).padStart(4, "0").toUpperCase()} is not allowed in XML`, bad);
    if (src.startsWith("<?xml") && (isSpace(src.charCodeAt(5)) || src.charCodeAt(5) === QUESTION)) this.skipPi(0);
    while (this.pos < src.length) {
      const lt = this.nextLt(this.pos);
      const c = src.charCodeAt(lt + 1);
      const markup = c === BANG || c === QUESTION; // not an element tag: the text run goes on after it
      if (lt > this.pos) {
        if (markup || this.run !== undefined) this.textPiece(this.pos, lt);
        else this.textRun(this.pos, lt);
      }
      if (lt === src.length) break;
      if (c === BANG) this.bang(lt);
      else if (c === QUESTION) this.skipPi(lt);
      else {
        if (this.run !== undefined) this.endRun();
        if (c === SLASH) this.closeTag(lt);
        else this.openTag(lt);
      }
    }
    if (this.open.length > 0) this.fail(`element <${this.openRaw[this.open.length - 1]}> is not closed`);
    if (!this.doc.children) throw new XmlError("XML has no root element");
    return this.doc;
  }

  /** A whole text run (between two element tags), the usual case: trimmed before it is sliced. */
  private textRun(from: number, to: number): void {
    const src = this.src;
    let s = from;
    let e = to;
    while (s < e && isSpace(src.charCodeAt(s))) s++;
    while (e > s && isSpace(src.charCodeAt(e - 1))) e--;
    if (s === e) {
      this.pos = to;
      return;
    }
    if (this.cur === this.doc) this.fail("text outside the root element", s);
    if (this.nextCdEnd(s) < e) this.fail("']]>' is not allowed in text", this.cdEnd);
    const amp = this.nextAmp(s);
    const value = (amp < e ? decodeReferences(src, s, e, amp, this.crs ? lineEnds : undefined) : this.literalText(s, e)).trim();
    if (value) this.cur.text = this.cur.text ? this.cur.text + value : value;
    this.pos = to;
  }

  /** Part of a text run that a comment, PI or CDATA section interrupts: kept untrimmed until the run ends. */
  private textPiece(from: number, to: number): void {
    const src = this.src;
    if (this.cur === this.doc) {
      let s = from;
      while (s < to && isSpace(src.charCodeAt(s))) s++;
      if (s < to) this.fail("text outside the root element", s);
    } else {
      if (this.nextCdEnd(from) < to) this.fail("']]>' is not allowed in text", this.cdEnd);
      const amp = this.nextAmp(from);
      const piece = amp < to ? decodeReferences(src, from, to, amp, this.crs ? lineEnds : undefined) : this.literalText(from, to);
      this.run = this.run === undefined ? piece : this.run + piece;
    }
    this.pos = to;
  }

  private endRun(): void {
    const value = this.run!.trim();
    if (value) this.cur.text = this.cur.text ? this.cur.text + value : value;
    this.run = undefined;
  }

  /** Scans a name starting at `at`; returns its end. */
  private nameEnd(at: number, what: string): number {
    const end = scanName(this.src, at);
    if (end === -1) this.fail(`invalid ${what} name`, at);
    return end;
  }

  private openTag(lt: number): void {
    const src = this.src;
    const nameEnd = this.nameEnd(lt + 1, "element");
    const raw = src.slice(lt + 1, nameEnd);
    this.countNode(lt);
    const node: XmlNode = { name: raw.includes(":") ? localName(raw) : raw, attrs: undefined, children: undefined, text: "" };
    let i = nameEnd;
    let rawAttrNames: Set<string> | undefined;
    let selfClosing = false;
    for (;;) {
      const ws = i;
      while (i < src.length && isSpace(src.charCodeAt(i))) i++;
      const c = src.charCodeAt(i);
      if (c === GT) {
        i++;
        break;
      }
      if (c === SLASH) {
        if (src.charCodeAt(i + 1) !== GT) this.fail(`'/' not followed by '>' in <${raw}>`, i);
        i += 2;
        selfClosing = true;
        break;
      }
      if (i >= src.length) this.fail(`tag <${raw}> is not closed`, lt);
      if (i === ws) this.fail(`unexpected character '${src[i]}' in <${raw}>`, i);
      this.countNode(i);
      const attrEnd = this.nameEnd(i, "attribute");
      const attrName = src.slice(i, attrEnd);
      i = attrEnd;
      while (isSpace(src.charCodeAt(i))) i++;
      if (src.charCodeAt(i) !== EQ) this.fail(`attribute ${attrName} of <${raw}> has no value`, i);
      i++;
      while (isSpace(src.charCodeAt(i))) i++;
      const quote = src.charCodeAt(i);
      if (quote !== DQUOTE && quote !== SQUOTE) this.fail(`value of attribute ${attrName} of <${raw}> is not quoted`, i);
      const close = src.indexOf(quote === DQUOTE ? '"' : "'", i + 1);
      if (close === -1) this.fail(`value of attribute ${attrName} of <${raw}> is not closed`, i);
      const lessThan = this.nextLt(i + 1);
      if (lessThan < close) this.fail(`'<' in the value of attribute ${attrName} of <${raw}>`, lessThan);
      if (rawAttrNames?.has(attrName)) this.fail(`attribute ${attrName} of <${raw}> is repeated`, i);
      (rawAttrNames ??= new Set()).add(attrName);
      const amp = this.nextAmp(i + 1);
      // Namespace declarations are not data: checked like any value, then left out.
      if (attrName === "xmlns" || attrName.startsWith("xmlns:")) {
        if (amp < close) decodeReferences(src, i + 1, close, amp);
      } else {
        // Attribute-value normalisation (XML 1.0 §3.3.3): a literal tab or line end reads as a space.
        let value = src.slice(i + 1, close);
        const spaced = value.indexOf("\n") !== -1 || value.indexOf("\t") !== -1 || (this.crs && value.indexOf("\r") !== -1);
        if (amp < close) value = decodeReferences(src, i + 1, close, amp, spaced ? attrSpaces : undefined);
        else if (spaced) value = attrSpaces(value);
        (node.attrs ??= []).push(localName(attrName), value);
      }
      i = close + 1;
    }
    const parent = this.cur;
    if (parent === this.doc && parent.children) this.fail(`second root element <${raw}>`, lt);
    if (parent.children) parent.children.push(node);
    else parent.children = [node];
    if (!selfClosing) {
      this.open.push(node);
      this.openRaw.push(raw);
      this.cur = node;
    }
    this.pos = i;
  }

  private closeTag(lt: number): void {
    const src = this.src;
    const depth = this.open.length;
    const expected = depth > 0 ? this.openRaw[depth - 1]! : undefined;
    let i = lt + 2;
    if (expected !== undefined && src.startsWith(expected, i) && !isNameChar(src.charCodeAt(i + expected.length))) {
      i += expected.length;
    } else {
      const name = src.slice(i, this.nameEnd(i, "closing tag"));
      if (expected === undefined) this.fail(`closing tag </${name}> without an open element`, lt);
      this.fail(`closing tag </${name}> does not match <${expected}>`, lt);
    }
    while (isSpace(src.charCodeAt(i))) i++;
    if (src.charCodeAt(i) !== GT) this.fail(`closing tag </${expected}> is not closed by '>'`, i);
    this.open.pop();
    this.openRaw.pop();
    this.cur = depth > 1 ? this.open[depth - 2]! : this.doc;
    this.pos = i + 1;
  }

  /** `<!--`, `<![CDATA[`, or a DTD declaration (refused). */
  private bang(lt: number): void {
    const src = this.src;
    if (src.startsWith("<!--", lt)) {
      const end = src.indexOf("-->", lt + 4);
      if (end === -1) this.fail("comment is not closed", lt);
      // XML 1.0 §2.5: no '--' inside a comment, and none right before its closing '-->'.
      const dashes = src.indexOf("--", lt + 4);
      if (dashes < end || (src.charCodeAt(end - 1) === DASH && end > lt + 4))
        this.fail("'--' inside a comment", dashes < end ? dashes : end - 1);
      this.pos = end + 3;
      return;
    }
    if (src.startsWith("<![CDATA[", lt)) {
      if (this.cur === this.doc) this.fail("CDATA section outside the root element", lt);
      const end = src.indexOf("]]>", lt + 9);
      if (end === -1) this.fail("CDATA section is not closed", lt);
      // Character data verbatim, no reference decoded; part of the text run it sits in.
      const value = this.literalText(lt + 9, end);
      this.run = this.run === undefined ? value : this.run + value;
      this.pos = end + 3;
      return;
    }
    const decl = src.slice(lt + 2, lt + 9).toUpperCase();
    if (decl.startsWith("DOCTYPE") || decl.startsWith("ENTITY")) throw new XmlError("XML declares a DTD or entities (refused)");
    this.fail("unexpected '<!'", lt);
  }

  /**
   * A processing instruction, skipped; also the XML declaration `<?xml ...?>`, which may only open the
   * document (its content is not read: the bytes were decoded as UTF-8 whatever it says).
   */
  private skipPi(lt: number): void {
    const src = this.src;
    const targetEnd = this.nameEnd(lt + 2, "processing instruction");
    if (targetEnd - lt - 2 === 3) {
      const target = src.slice(lt + 2, targetEnd);
      // Targets spelt xml in any case are reserved (XML 1.0 §2.6); only the declaration uses one.
      if (target.toLowerCase() === "xml" && (lt > 0 || target !== "xml")) {
        this.fail(
          target === "xml"
            ? "XML declaration allowed only at the start of the document"
            : `processing instruction target ${target} is reserved`,
          lt,
        );
      }
    }
    if (!isSpace(src.charCodeAt(targetEnd)) && !src.startsWith("?>", targetEnd))
      this.fail("unexpected character after a processing instruction target", targetEnd);
    const end = src.indexOf("?>", targetEnd);
    if (end === -1) this.fail("processing instruction is not closed", lt);
    this.pos = end + 2;
  }
}

/**
 * Elements and attributes one document may hold. An NFS-e or an event has a few hundred; the cap keeps
 * what one entry's tree costs in memory bounded by it rather than by ADN_MAX_DECOMPRESSED_BYTES (8 MiB of
 * `<a/>` is two million nodes, several hundred MB of tree), so a decode thread's heap limit holds for any
 * entry (docs/decisions/0038-store-decodes-in-worker-threads.md). Beyond it: a BAD_XML fault.
 */
export const MAX_XML_NODES = 100_000;

/** Parses a decoded document; the returned node's only child is the root element. */
export function parseDocument(src: string): XmlNode {
  return new Parser(src).parse();
}
