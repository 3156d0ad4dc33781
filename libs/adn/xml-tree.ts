// Lenient navigation over fast-xml-parser output. Entity and DTD processing are off: a document with a
// DOCTYPE is refused outright, and only the five predefined entities and numeric character references
// are decoded, by us, in text values.
import { XMLParser, XMLValidator } from "fast-xml-parser";

export type XmlNode = Record<string, unknown>;

export class XmlError extends Error {
  override name = "XmlError";
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: "@",
  parseTagValue: false,
  parseAttributeValue: false,
  processEntities: false,
  htmlEntities: false,
  trimValues: true,
  ignoreDeclaration: true,
  ignorePiTags: true,
  // Our documents use no prefixes (the layout forbids them), but a transcription that does still parses.
  removeNSPrefix: true,
});

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parses bytes into a tree; throws XmlError for invalid UTF-8, a DTD, or XML that is not well formed. */
export function parseXml(bytes: Uint8Array): XmlNode {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new XmlError("XML is not valid UTF-8");
  }
  if (/<!DOCTYPE|<!ENTITY/i.test(text)) throw new XmlError("XML declares a DTD or entities (refused)");
  const valid = XMLValidator.validate(text);
  if (valid !== true) throw new XmlError(`XML is not well formed: ${valid.err.msg} (line ${valid.err.line})`);
  const tree = parser.parse(text) as unknown;
  if (typeof tree !== "object" || tree === null) throw new XmlError("XML has no root element");
  return tree as XmlNode;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };

function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) => {
    if (e.startsWith("#x")) return String.fromCodePoint(parseInt(e.slice(2), 16));
    if (e.startsWith("#")) return String.fromCodePoint(parseInt(e.slice(1), 10));
    return ENTITIES[e] ?? _;
  });
}

/** First element when repeated, so a duplicated group never breaks parsing. */
function first(v: unknown): unknown {
  return Array.isArray(v) ? v[0] : v;
}

/** The child element `name` (first one if repeated) as a node; undefined when absent or a leaf. */
export function child(node: XmlNode | undefined, ...path: string[]): XmlNode | undefined {
  let cur: unknown = node;
  for (const name of path) {
    if (typeof cur !== "object" || cur === null) return undefined;
    cur = first((cur as XmlNode)[name]);
  }
  if (cur === "") return {};
  return typeof cur === "object" && cur !== null ? (cur as XmlNode) : undefined;
}

/** Text of the element at `path`, entities decoded and trimmed; "" when absent. */
export function text(node: XmlNode | undefined, ...path: string[]): string {
  let cur: unknown = node;
  for (const name of path) {
    if (typeof cur !== "object" || cur === null) return "";
    cur = first((cur as XmlNode)[name]);
  }
  if (typeof cur === "string") return decodeEntities(cur).trim();
  if (typeof cur === "object" && cur !== null && typeof (cur as XmlNode)["#text"] === "string") {
    return decodeEntities((cur as XmlNode)["#text"] as string).trim();
  }
  return "";
}

/** An attribute of a node. */
export function attr(node: XmlNode | undefined, name: string): string {
  const v = node?.[`@${name}`];
  return typeof v === "string" ? decodeEntities(v).trim() : "";
}

/** Element names of a node's children (attributes and text excluded), in document order. */
export function childNames(node: XmlNode | undefined): string[] {
  return node ? Object.keys(node).filter((k) => !k.startsWith("@") && k !== "#text") : [];
}

/** The single root element: its name and node. */
export function root(tree: XmlNode): { name: string; node: XmlNode } | undefined {
  const name = childNames(tree)[0];
  if (!name) return undefined;
  const node = child(tree, name);
  return node ? { name, node } : undefined;
}
