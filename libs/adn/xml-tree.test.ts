// Navigation semantics, and a differential check against the fast-xml-parser tree this parser replaced:
// over the simulator's documents every child/text/attr/childNames answer the field extractors could ask
// must be the same, so the extracted fields are too.
import { readFileSync } from "node:fs";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import { FeedGenerator } from "../../tools/adn-sim/generate.js";
import { attr, child, childNames, parseXml, root, text, type XmlNode } from "./xml-tree.js";

const tree = (xml: string) => parseXml(Buffer.from(xml, "utf8"));

describe("navigation", () => {
  const doc = tree('<r a=" 1 "><leaf> v </leaf><empty/><x k="1">t</x><g><n>1</n></g><g><n>2</n></g><leaf>second</leaf></r>');
  const r = root(doc)!.node;

  it("reads the first of repeated elements and lists distinct child names in order", () => {
    expect(text(r, "g", "n")).toBe("1");
    expect(text(r, "leaf")).toBe("v");
    expect(childNames(r)).toEqual(["leaf", "empty", "x", "g"]);
  });

  it("treats a text-only leaf as a value, an empty element or one with attributes as a node", () => {
    expect(child(r, "leaf")).toBeUndefined();
    expect(child(r, "empty")).toBeDefined();
    expect(text(child(r, "x"))).toBe("t");
    expect(attr(child(r, "x"), "k")).toBe("1");
  });

  it("answers empty for anything absent", () => {
    expect(text(r, "nope", "n")).toBe("");
    expect(text(r, "leaf", "deeper")).toBe("");
    expect(child(undefined, "g")).toBeUndefined();
    expect(attr(r, "nope")).toBe("");
    expect(attr(undefined, "a")).toBe("");
    expect(childNames(undefined)).toEqual([]);
  });

  it("trims attribute values when read; of two prefixed attributes with one local name the last wins", () => {
    expect(attr(r, "a")).toBe("1");
    expect(attr(root(tree('<p:r xmlns:p="urn:p" xmlns:q="urn:q" p:Id="1" q:Id="2"/>'))!.node, "Id")).toBe("2");
  });

  it("gives the root's name and node, none for a root that is only text", () => {
    expect(root(doc)?.name).toBe("r");
    expect(root(tree("<r>just text</r>"))).toBeUndefined();
    expect(root(tree("<r/>"))?.name).toBe("r");
  });
});

/** The previous implementation (fast-xml-parser object tree), kept here only as the reference. */
namespace reference {
  type Obj = Record<string, unknown>;
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
    removeNSPrefix: true,
  });
  const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" };
  const decode = (s: string) =>
    s.replace(/&(#x[0-9a-fA-F]+|#\d+|amp|lt|gt|quot|apos);/g, (_, e: string) =>
      e.startsWith("#x")
        ? String.fromCodePoint(parseInt(e.slice(2), 16))
        : e.startsWith("#")
          ? String.fromCodePoint(parseInt(e.slice(1), 10))
          : ENTITIES[e]!,
    );
  const first = (v: unknown) => (Array.isArray(v) ? v[0] : v);
  const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null;

  // biome-ignore lint/suspicious/noExportsInTest: a member of the local namespace `reference`, not a module export.
  export function parse(xml: string): Obj {
    expect(XMLValidator.validate(xml)).toBe(true);
    return parser.parse(xml) as Obj;
  }
  // biome-ignore lint/suspicious/noExportsInTest: a member of the local namespace `reference`, not a module export.
  export function child(node: Obj, name: string): Obj | undefined {
    const v = first(node[name]);
    if (v === "") return {};
    return isObj(v) ? v : undefined;
  }
  // biome-ignore lint/suspicious/noExportsInTest: a member of the local namespace `reference`, not a module export.
  export function text(node: Obj, name: string): string {
    const v = first(node[name]);
    if (typeof v === "string") return decode(v).trim();
    return isObj(v) && typeof v["#text"] === "string" ? decode(v["#text"]).trim() : "";
  }
  // biome-ignore lint/suspicious/noExportsInTest: a member of the local namespace `reference`, not a module export.
  export function attrs(node: Obj): Record<string, string> {
    const out: Record<string, string> = {};
    for (const [k, v] of Object.entries(node)) if (k.startsWith("@")) out[k.slice(1)] = decode(v as string).trim();
    return out;
  }
  // biome-ignore lint/suspicious/noExportsInTest: a member of the local namespace `reference`, not a module export.
  export function childNames(node: Obj): string[] {
    return Object.keys(node).filter((k) => !k.startsWith("@") && k !== "#text");
  }
}

/** Compares every answer below `node` with the reference; returns how many elements were compared. */
function compare(node: XmlNode, ref: Record<string, unknown>, path: string): number {
  const names = childNames(node);
  expect(names, path).toEqual(reference.childNames(ref));
  const own = Object.fromEntries((node.attrs ?? []).flatMap((v, i) => (i % 2 === 0 ? [[v, attr(node, v)]] : [])));
  expect(own, `${path} attributes`).toEqual(reference.attrs(ref));
  let compared = 1;
  for (const name of names) {
    expect(text(node, name), `${path}/${name}`).toBe(reference.text(ref, name));
    const mine = child(node, name);
    const theirs = reference.child(ref, name);
    expect(mine === undefined, `${path}/${name} is a node`).toBe(theirs === undefined);
    if (mine && theirs) compared += compare(mine, theirs, `${path}/${name}`);
    else compared++;
  }
  return compared;
}

function simulatorDocuments(): string[] {
  const docs: string[] = [];
  for (const ibge of ["3550308", "3304557", "4106902"]) {
    const gen = new FeedGenerator({ seed: 11, ibge, tipoNsu: "DISTRIBUICAO", tpAmb: 2 });
    for (const e of gen.next(120)) docs.push(e.xml);
  }
  for (const name of ["nfse-1.00.xml", "nfse-1.01.xml", "evento-101101-1.01.xml"]) {
    docs.push(readFileSync(new URL(`./testdata/${name}`, import.meta.url), "utf8"));
  }
  return docs;
}

describe("same answers as the fast-xml-parser tree it replaced", () => {
  const docs = simulatorDocuments();

  it("covers notes of both layouts, pretty and compact, and events", () => {
    const roots = new Set(docs.map((d) => root(tree(d))?.name));
    expect(roots).toEqual(new Set(["NFSe", "evento"]));
    expect(docs.some((d) => d.includes('versao="1.00"')) && docs.some((d) => d.includes('versao="1.01"'))).toBe(true);
    expect(docs.some((d) => d.includes("\n <")) && docs.some((d) => /^<\?xml[^>]*><NFSe/.test(d))).toBe(true);
    expect(docs.some((d) => d.includes("&amp;") && d.includes("&lt;") && d.includes("&#13;"))).toBe(true);
  });

  it("document by document, element by element", () => {
    let compared = 0;
    for (const [i, xml] of docs.entries()) {
      const mine = tree(xml);
      const ref = reference.parse(xml);
      const top = root(mine)!;
      expect([top.name], `document ${i}`).toEqual(reference.childNames(ref));
      compared += compare(top.node, reference.child(ref, top.name)!, `document ${i}: ${top.name}`);
    }
    expect(compared).toBeGreaterThan(docs.length * 15);
  });
});
