import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodePage, PageTooLargeError } from "./decode-page.js";
import type { RawLoteItem } from "./envelope.js";

const entry = (nsu: number, xml: string): RawLoteItem => ({
  nsu: String(nsu),
  chaveAcesso: "",
  tipoDocumento: "NFSE",
  tipoEvento: "",
  arquivoXml: gzipSync(Buffer.from(xml)).toString("base64"),
});
const opts = { decode: { maxDecompressedBytes: 1 << 20 }, maxPageXmlBytes: 1 << 20 };

describe("decodePage", () => {
  it("decodes every entry in order, a bad one as a fault item", () => {
    const items = decodePage([entry(1, "<x/>"), { ...entry(2, ""), arquivoXml: "@@" }, entry(3, "<DPS/>")], opts);
    expect(items.map((i) => [i.nsu, i.content.case])).toEqual([
      [1n, "fault"],
      [2n, "fault"],
      [3n, "fault"],
    ]);
    expect(items[1]!.content.case === "fault" && items[1]!.content.value.message).toBe("ArquivoXml is not valid Base64");
  });

  it("stops at the entry whose XML takes the page past its cap", () => {
    const page = [1, 2, 3].map((n) => entry(n, `<a>${"y".repeat(400)}</a>`));
    let err: unknown;
    try {
      decodePage(page, { ...opts, maxPageXmlBytes: 1000 });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(PageTooLargeError);
    expect(err).toMatchObject({ nsu: 3n, limit: 1000 });
  });
});
