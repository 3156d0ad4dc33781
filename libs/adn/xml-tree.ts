// Navigation over the element tree of xml-parse.ts, lenient by design: a missing element or attribute reads
// as absent/empty and a repeated one as its first occurrence, so layout drift never breaks extraction.
import { XmlError } from "./xml-error.js";
import { parseDocument, type XmlNode } from "./xml-parse.js";

export { XmlError, type XmlNode };

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Parses bytes into a tree; throws XmlError for invalid UTF-8, a DTD, or XML that is not well formed. */
export function parseXml(bytes: Uint8Array): XmlNode {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new XmlError("XML is not valid UTF-8");
  }
  return parseDocument(text);
}

// A leaf holding only text is a value, not a place to look further: `child` answers undefined for it, so a
// path never descends into a value. An empty element, or one with attributes, is still a container.
function isContainer(n: XmlNode): boolean {
  return n.children !== undefined || n.attrs !== undefined || n.text === "";
}

function firstChild(node: XmlNode, name: string): XmlNode | undefined {
  const children = node.children;
  if (children === undefined) return undefined;
  for (let i = 0; i < children.length; i++) if (children[i]!.name === name) return children[i];
  return undefined;
}

function walk(node: XmlNode | undefined, path: string[]): XmlNode | undefined {
  let cur = node;
  for (let i = 0; i < path.length && cur !== undefined; i++) cur = firstChild(cur, path[i]!);
  return cur;
}

/** The child element `name` (first one if repeated) as a node; undefined when absent or a text-only leaf. */
export function child(node: XmlNode | undefined, ...path: string[]): XmlNode | undefined {
  const n = walk(node, path);
  return n !== undefined && isContainer(n) ? n : undefined;
}

/** Text of the element at `path`, references decoded and trimmed; "" when absent. */
export function text(node: XmlNode | undefined, ...path: string[]): string {
  return walk(node, path)?.text ?? "";
}

/** An attribute of a node (local name), trimmed; "" when absent. When prefixes give two attributes one local name, the last wins. */
export function attr(node: XmlNode | undefined, name: string): string {
  const attrs = node?.attrs;
  if (attrs === undefined) return "";
  for (let i = attrs.length - 2; i >= 0; i -= 2) if (attrs[i] === name) return attrs[i + 1]!.trim();
  return "";
}

/** Distinct element names of a node's children, in document order. */
export function childNames(node: XmlNode | undefined): string[] {
  const names: string[] = [];
  for (const c of node?.children ?? []) if (!names.includes(c.name)) names.push(c.name);
  return names;
}

/** The single root element: its name and node. */
export function root(tree: XmlNode): { name: string; node: XmlNode } | undefined {
  const top = tree.children?.[0];
  return top !== undefined && isContainer(top) ? { name: top.name, node: top } : undefined;
}
