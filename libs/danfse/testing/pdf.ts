// Reading a DANFSe back as a person or a phone would: its text (poppler's pdftotext) and the QR code on a
// raster of the page (pdftoppm, then zxing, whose wasm comes from node_modules).
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { prepareZXingModule, readBarcodes } from "zxing-wasm/reader";

const require = createRequire(import.meta.url);

function withFile<T>(pdf: Uint8Array, fn: (file: string, dir: string) => T): T {
  const dir = mkdtempSync(join(tmpdir(), "danfse-"));
  try {
    const file = join(dir, "in.pdf");
    writeFileSync(file, pdf);
    return fn(file, dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The text layer, reading order (`pdftotext -raw`): words in the order they were drawn. */
export function pdfText(pdf: Uint8Array): string {
  return withFile(pdf, (file) => execFileSync("pdftotext", ["-raw", file, "-"]).toString("utf8"));
}

export function pdfPages(pdf: Uint8Array): number {
  return withFile(pdf, (file) => {
    const info = execFileSync("pdfinfo", [file]).toString("utf8");
    return Number(/^Pages:\s+(\d+)/m.exec(info)?.[1] ?? 0);
  });
}

let ready: Promise<unknown> | undefined;

function zxing(): Promise<unknown> {
  ready ??= (async () => {
    const wasm = readFileSync(join(require.resolve("zxing-wasm/reader").replace(/dist[/\\].*$/, ""), "dist/reader/zxing_reader.wasm"));
    await prepareZXingModule({
      overrides: { wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength) as ArrayBuffer },
      fireImmediately: true,
    });
  })();
  return ready;
}

/** Pixels of page 1 (72 dpi, so 1 px = 1 pt) in the box [x, x + w) × [y, y + h) that are clearly red. */
export function redPixels(pdf: Uint8Array, box: { x: number; y: number; w: number; h: number }): number {
  const ppm = withFile(pdf, (file) => execFileSync("pdftoppm", ["-r", "72", "-f", "1", "-l", "1", file], { maxBuffer: 16 * 1024 * 1024 }));
  // Binary PPM: "P6\n<width> <height>\n255\n" then RGB triplets.
  const m = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.subarray(0, 32).toString("latin1"));
  if (!m) throw new Error("pdftoppm did not write a binary PPM");
  const width = Number(m[1]);
  const start = m[0].length;
  let red = 0;
  for (let yy = box.y; yy < box.y + box.h; yy++)
    for (let xx = box.x; xx < box.x + box.w; xx++) {
      const i = start + (yy * width + xx) * 3;
      if (ppm[i]! > 150 && ppm[i + 1]! < 90 && ppm[i + 2]! < 90) red++;
    }
  return red;
}

export interface QrRead {
  text: string;
  /** Side of the symbol on paper, from the decoder's corner points. */
  sideMm: number;
}

/** The QR codes of page 1, decoded from a 150 dpi raster. */
export async function readQr(pdf: Uint8Array): Promise<QrRead[]> {
  await zxing();
  const dpi = 150;
  const png = withFile(pdf, (file, dir) => {
    execFileSync("pdftoppm", ["-r", String(dpi), "-f", "1", "-l", "1", "-png", file, join(dir, "p")]);
    const page = readdirSync(dir).find((f) => f.endsWith(".png"));
    if (!page) throw new Error("pdftoppm wrote no page");
    return readFileSync(join(dir, page));
  });
  const res = await readBarcodes(new Blob([png]), { formats: ["QRCode"], tryHarder: true });
  return res.map((r) => ({
    text: r.text,
    sideMm: (Math.hypot(r.position.topRight.x - r.position.topLeft.x, r.position.topRight.y - r.position.topLeft.y) / dpi) * 25.4,
  }));
}
