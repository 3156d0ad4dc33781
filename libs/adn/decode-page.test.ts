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
  it("decodes every entry in order, a bad one as a fault item", async () => {
    const items = await decodePage([entry(1, "<x/>"), { ...entry(2, ""), arquivoXml: "@@" }, entry(3, "<DPS/>")], opts);
    expect(items.map((i) => [i.nsu, i.content.case])).toEqual([
      [1n, "fault"],
      [2n, "fault"],
      [3n, "fault"],
    ]);
    expect(items[1]!.content.case === "fault" && items[1]!.content.value.message).toBe("ArquivoXml is not valid Base64");
  });

  it("gives the event loop turns while a long page decodes", async () => {
    // ≈ 200 KiB of XML per entry: the page takes several slices of the loop.
    const page = Array.from({ length: 40 }, (_, i) => entry(i + 1, `<a>${"<b>x</b>".repeat(25_000)}</a>`));
    let turns = 0;
    const tick = () => {
      turns++;
      if (!done) setImmediate(tick);
    };
    let done = false;
    setImmediate(tick);
    await decodePage(page, { ...opts, maxPageXmlBytes: 64 << 20 });
    done = true;
    expect(turns).toBeGreaterThan(1);
  });

  it("stops at the entry whose XML takes the page past its cap", async () => {
    const page = [1, 2, 3].map((n) => entry(n, `<a>${"y".repeat(400)}</a>`));
    const err = await decodePage(page, { ...opts, maxPageXmlBytes: 1000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PageTooLargeError);
    expect(err).toMatchObject({ nsu: 3n, limit: 1000 });
  });

  it("stops when its signal is aborted between slices", async () => {
    const page = Array.from({ length: 40 }, (_, i) => entry(i + 1, `<a>${"<b>x</b>".repeat(25_000)}</a>`));
    const ac = new AbortController();
    setImmediate(() => ac.abort(new Error("gone")));
    await expect(decodePage(page, { ...opts, maxPageXmlBytes: 64 << 20, signal: ac.signal })).rejects.toThrow("gone");
  });
});
