// The page's content stream, gathered as text while the page is drawn and written once at the end. pdfkit
// turns each operator into bytes with a per-character loop and deflates the stream at zlib's default level;
// one native Latin-1 conversion and zlib's fastest level (the operators compress almost as well there) take
// about a tenth off a render (decision 0018). The bytes of the page are the same as pdfkit would write
// before compression, so the PDF stays a function of the note.
import { constants, deflateSync } from "node:zlib";

/** What this touches of pdfkit's page and its content stream (pdfkit 0.20). */
interface PageLike {
  write(chunk: string | Uint8Array): unknown;
  content: {
    compress: boolean;
    buffer: Uint8Array[];
    uncompressedLength: number;
    data: { Length?: number; Filter?: string };
    write(chunk: Uint8Array): unknown;
  };
}

/** Takes over `page.write` until `flush()`, which writes everything gathered and hands `write` back. */
export function gatherContent(page: PageLike): { flush(): void } {
  const original = page.write;
  let text = "";
  page.write = (chunk) => {
    if (typeof chunk !== "string") throw new Error("a binary chunk in the page content: gatherContent cannot order it");
    text += `${chunk}\n`;
  };
  return {
    flush() {
      page.write = original;
      const c = page.content;
      // What pdfkit wrote before the hook (its initial transform), then the gathered operators.
      const bytes = Buffer.concat([...c.buffer, Buffer.from(text, "latin1")]);
      c.buffer = [];
      c.uncompressedLength = 0;
      c.data.Length = 0;
      if (c.compress) {
        c.compress = false;
        c.data.Filter = "FlateDecode";
        c.write(deflateSync(bytes, { level: constants.Z_BEST_SPEED }));
      } else {
        c.write(bytes);
      }
    },
  };
}
