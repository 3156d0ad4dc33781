// The single-pass parser: what it refuses (with a message that names the fault and its line) and what it
// builds (local names, decoded references, trimmed text, raw CDATA).
import { describe, expect, it } from "vitest";
import { XmlError } from "./xml-error.js";
import { MAX_XML_NODES, parseDocument, type XmlNode } from "./xml-parse.js";
import { parseXml } from "./xml-tree.js";

const rootOf = (xml: string): XmlNode => parseDocument(xml).children![0]!;

function fault(xml: string): string {
  try {
    parseDocument(xml);
  } catch (err) {
    expect(err).toBeInstanceOf(XmlError);
    return (err as Error).message;
  }
  throw new Error(`accepted: ${xml}`);
}

describe("refuses XML that is not well formed", () => {
  it("refuses a document of more than MAX_XML_NODES elements and attributes, counting both", () => {
    const children = (n: number) => "<a/>".repeat(n);
    // The root and its attribute count too.
    expect(rootOf(`<r x="1">${children(MAX_XML_NODES - 2)}</r>`).children).toHaveLength(MAX_XML_NODES - 2);
    expect(fault(`<r x="1">${children(MAX_XML_NODES - 1)}</r>`)).toMatch(`more than ${MAX_XML_NODES} elements and attributes`);
    const attrs = Array.from({ length: MAX_XML_NODES }, (_, i) => ` a${i}="1"`).join("");
    expect(fault(`<r${attrs}/>`)).toMatch(`more than ${MAX_XML_NODES} elements and attributes`);
  });

  it.each([
    ["mismatched tags", "<a><b></a></b>", "closing tag </a> does not match <b> (line 1)"],
    ["a prefix mismatch", "<p:a></q:a>", "closing tag </q:a> does not match <p:a>"],
    ["a close tag that only starts like the open one", "<a><bc></b></bc></a>", "closing tag </b> does not match <bc>"],
    ["an unclosed element", "<a><b></b>", "element <a> is not closed"],
    ["an unclosed start tag", '<a x="1"', "tag <a> is not closed"],
    ["a close tag without '>'", "<a></a", "closing tag </a> is not closed by '>'"],
    ["a close tag with nothing open", "</a>", "closing tag </a> without an open element"],
    ["two roots", "<a/><b/>", "second root element <b>"],
    ["text before the root", "x<a/>", "text outside the root element"],
    ["text after the root", "<a/>junk", "text outside the root element"],
    ["an unquoted attribute", "<a x=1/>", "value of attribute x of <a> is not quoted"],
    ["an attribute without a value", "<a x/>", "attribute x of <a> has no value"],
    ["attributes without whitespace between", '<a x="1"y="2"/>', "unexpected character 'y' in <a>"],
    ["a repeated attribute", '<a x="1" x="2"/>', "attribute x of <a> is repeated"],
    ["an unclosed attribute value", '<a x="1/>', "value of attribute x of <a> is not closed"],
    ["'<' in an attribute value", '<a x="<"/>', "'<' in the value of attribute x of <a>"],
    ["a stray '&'", "<a>x & y</a>", "'&' is not part of a reference (write &amp;)"],
    ["an '&' without ';'", "<a>&amp</a>", "'&' is not part of a reference"],
    ["a stray '&' in an attribute", '<a x="a&b"/>', "'&' is not part of a reference"],
    ["an undeclared entity", "<a>&nbsp;</a>", "reference to undeclared entity &nbsp; (no DTD is accepted)"],
    ["an entity named like an object member", "<a>&constructor;</a>", "reference to undeclared entity &constructor;"],
    ["a reference to NUL", "<a>&#0;</a>", "invalid character reference &#0;"],
    ["a reference beyond Unicode", "<a>&#x110000;</a>", "invalid character reference &#x110000;"],
    ["a reference without digits", "<a>&#x;</a>", "invalid character reference &#x;"],
    ["a stray '<'", "<a>1 < 2</a>", "invalid element name"],
    ["a bad element name", "<1a/>", "invalid element name"],
    ["a control character", "<a>\u0001</a>", "character U+0001 is not allowed in XML"],
    ["an unclosed comment", "<a><!-- x</a>", "comment is not closed"],
    ["an unclosed CDATA section", "<a><![CDATA[x</a>", "CDATA section is not closed"],
    ["CDATA outside the root", "<![CDATA[x]]><a/>", "CDATA section outside the root element"],
    ["a late XML declaration", '<a><?xml version="1.0"?></a>', "XML declaration allowed only at the start of the document"],
    ["an unclosed processing instruction", "<a><?pi x</a>", "processing instruction is not closed"],
    ["unknown markup", "<a><!FOO></a>", "unexpected '<!'"],
    ["']]>' in text", "<a>x]]>y</a>", "']]>' is not allowed in text"],
    ["'--' inside a comment", "<a><!-- a -- b --></a>", "'--' inside a comment"],
    ["a comment ending in '--->'", "<a><!-- a ---></a>", "'--' inside a comment"],
    ["a PI target spelt XML", "<a><?XML x?></a>", "processing instruction target XML is reserved"],
    ["a PI target spelt Xml, even first", '<?Xml version="1.0"?><a/>', "processing instruction target Xml is reserved"],
    ["a PI target run into its data", "<a><?pi!x?></a>", "unexpected character after a processing instruction target"],
    ["a bad reference in a namespace declaration", '<a xmlns="&"/>', "'&' is not part of a reference"],
  ])("%s", (_name, xml, message) => {
    expect(fault(xml)).toContain(message);
  });

  it("names the line of the fault", () => {
    expect(fault("<a>\n  <b>\n  </c>\n</a>")).toBe("XML is not well formed: closing tag </c> does not match <b> (line 3)");
  });

  it("refuses a document without a root element", () => {
    expect(() => parseDocument('<?xml version="1.0"?>\n<!-- nothing -->\n')).toThrow(new XmlError("XML has no root element"));
  });

  it.each([
    ["DOCTYPE", '<!DOCTYPE NFSe [<!ENTITY x "boom">]><NFSe>&x;</NFSe>'],
    ["a DOCTYPE without internal subset", '<!DOCTYPE NFSe SYSTEM "file:///etc/passwd"><NFSe/>'],
    ["a bare ENTITY declaration", '<a><!ENTITY x "boom"></a>'],
  ])("refuses %s", (_name, xml) => {
    expect(() => parseDocument(xml)).toThrow(new XmlError("XML declares a DTD or entities (refused)"));
  });

  it("refuses invalid UTF-8 before parsing", () => {
    expect(() => parseXml(Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x61, 0x3e]))).toThrow(
      new XmlError("XML is not valid UTF-8"),
    );
    // An encoded surrogate is not UTF-8 either.
    expect(() => parseXml(Buffer.from([0x3c, 0x61, 0x3e, 0xed, 0xa0, 0x80, 0x3c, 0x2f, 0x61, 0x3e]))).toThrow(
      new XmlError("XML is not valid UTF-8"),
    );
  });
});

describe("builds the element tree", () => {
  it("decodes the five predefined entities and numeric references, nothing else", () => {
    const a = rootOf("<a>&lt;&gt;&amp;&quot;&apos; &#65;&#x42;&#x1f600;&#128512; &amp;lt;</a>");
    expect(a.text).toBe("<>&\"' AB\u{1F600}\u{1F600} &lt;");
  });

  it("refuses &#X: the hex marker of a character reference is a lower-case x", () => {
    // `&#X43;` is not a reference in XML: only `x` introduces hex.
    expect(fault("<a>&#X43;</a>")).toContain("invalid character reference &#X43;");
  });

  it("reads attributes in either quote, with references, spaces around '=' and local names", () => {
    const a = rootOf(`<p:a xmlns="urn:x" xmlns:p="urn:p" Id = 'v&amp;1"' p:versao="1.01" e="" sp="  x  ">t</p:a>`);
    expect(a.name).toBe("a");
    expect(a.attrs).toEqual(["Id", 'v&1"', "versao", "1.01", "e", "", "sp", "  x  "]);
    expect(a.text).toBe("t");
  });

  it("keeps namespace declarations out of the attributes", () => {
    expect(rootOf('<a xmlns="urn:x"/>').attrs).toBeUndefined();
  });

  it("trims text, ignores indentation between elements and reads a comment as absent from its text run", () => {
    const a = rootOf("<a>\n  <b>  x y \n</b>\r\n\t<c> 1 <!-- note --> 2 </c>\n  <d/><e></e>\n</a>");
    expect(a.text).toBe("");
    expect(a.children!.map((c) => [c.name, c.text, c.children])).toEqual([
      ["b", "x y", undefined],
      ["c", "1  2", undefined],
      ["d", "", undefined],
      ["e", "", undefined],
    ]);
  });

  it("takes CDATA verbatim: markup characters allowed, references not decoded", () => {
    expect(rootOf("<a><![CDATA[ <b>&amp;</b> ]]></a>").text).toBe("<b>&amp;</b>");
  });

  it("reads CDATA, comments and PIs as part of the text run around them: trimmed only at its ends", () => {
    expect(rootOf("<a> x <![CDATA[ y ]]> z </a>").text).toBe("x  y  z");
    expect(rootOf("<a><![CDATA[ ]]>x<?pi?> <!-- c -->y</a>").text).toBe("x y");
    // ']]>' split by a comment is no ']]>'.
    expect(rootOf("<a>]]<!-- -->></a>").text).toBe("]]>");
  });

  it("normalises line ends (CR LF and CR read as LF) everywhere; a referenced CR stays", () => {
    const a = rootOf("<a x='1\r\n2\r3'>l1\r\nl2\rl3<![CDATA[c\r\nd]]>&#13;e</a>");
    expect(a.text).toBe("l1\nl2\nl3c\nd\re");
    expect(a.attrs).toEqual(["x", "1 2 3"]);
  });

  it("turns literal tabs and line feeds in attribute values into spaces, not referenced ones", () => {
    expect(rootOf('<a x="a\tb\nc" y="&#9;&#10;&#13;" z="&amp;\t"/>').attrs).toEqual(["x", "a b c", "y", "\t\n\r", "z", "& "]);
  });

  it("skips the declaration, comments and processing instructions around the root", () => {
    const doc = parseDocument('<?xml version="1.0" encoding="UTF-8"?>\n<!-- c --><?pi data?>\n<r><?pi x?>v</r>\n<!-- end -->\n');
    expect(doc.children!.map((c) => [c.name, c.text])).toEqual([["r", "v"]]);
  });

  it("accepts names with dots, dashes, digits and non-ASCII letters, and '>' in text and attributes", () => {
    const a = rootOf('<a.b-c1 x-y="a>b"><ção>1 > 0</ção></a.b-c1>');
    expect([a.name, a.attrs, a.children![0]!.name, a.children![0]!.text]).toEqual(["a.b-c1", ["x-y", "a>b"], "ção", "1 > 0"]);
  });

  it("stays linear on a large document: a million text runs before the only '&', a tag with many attributes", () => {
    // A scan per run reaching the next '&' (≈ 4·10¹² characters here) would far exceed the test timeout.
    const runs = 1_000_000;
    const attrs = Array.from({ length: 20_000 }, (_, i) => ` a${i}="${i}"`).join("");
    const xml = `<r${attrs}>${"x<!---->".repeat(runs)}<v>&amp;</v></r>`;
    expect(xml.length).toBeGreaterThan(8_000_000);
    const r = rootOf(xml);
    expect(r.text).toHaveLength(runs);
    expect(r.children!.map((c) => c.text)).toEqual(["&"]);
    expect(r.attrs).toHaveLength(40_000);
  });

  it("takes names that are JavaScript object members as names", () => {
    const a = rootOf('<constructor prototype="1"><__proto__/><toString>x</toString></constructor>');
    expect([a.name, a.attrs, a.children!.map((c) => c.name)]).toEqual(["constructor", ["prototype", "1"], ["__proto__", "toString"]]);
  });

  it("drops a UTF-8 byte order mark", () => {
    expect(parseXml(Buffer.from("\uFEFF<a>1</a>", "utf8")).children![0]!.text).toBe("1");
  });
});
