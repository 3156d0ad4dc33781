// Text boxes of a PDF as poppler's `pdftotext -bbox` sees them, and the pairs that overlap: what a reader
// would see as text printed over text.
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface WordBox {
  page: number;
  text: string;
  xMin: number;
  yMin: number;
  xMax: number;
  yMax: number;
}

export function wordBoxes(pdf: Uint8Array): { pages: { width: number; height: number }[]; words: WordBox[] } {
  const dir = mkdtempSync(join(tmpdir(), "pdf-bbox-"));
  try {
    const file = join(dir, "in.pdf");
    writeFileSync(file, pdf);
    const html = execFileSync("pdftotext", ["-bbox", file, "-"], { maxBuffer: 64 * 1024 * 1024 }).toString("utf8");
    const pages: { width: number; height: number }[] = [];
    const words: WordBox[] = [];
    const tag =
      /<page width="([\d.]+)" height="([\d.]+)">|<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)<\/word>/g;
    for (const m of html.matchAll(tag)) {
      if (m[1] !== undefined) pages.push({ width: Number(m[1]), height: Number(m[2]) });
      else
        words.push({
          page: pages.length - 1,
          text: unescapeXml(m[7]!),
          xMin: Number(m[3]),
          yMin: Number(m[4]),
          xMax: Number(m[5]),
          yMax: Number(m[6]),
        });
    }
    return { pages, words };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const unescapeXml = (s: string) =>
  s
    .replace(/&lt;/g, "<")
    .replace(/&gt;/g, ">")
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, "&");

/** Pairs of words whose boxes share more than `tolerance` points in both directions, and words off the page. */
export function overlaps(pdf: Uint8Array, tolerance = 0.2): string[] {
  const { pages, words } = wordBoxes(pdf);
  const out: string[] = [];
  const where = (w: WordBox) => `${JSON.stringify(w.text)}@p${w.page + 1}(${w.xMin.toFixed(1)},${w.yMin.toFixed(1)})`;
  for (let i = 0; i < words.length; i++) {
    const a = words[i]!;
    const page = pages[a.page]!;
    if (a.xMin < 0 || a.yMin < 0 || a.xMax > page.width || a.yMax > page.height) out.push(`${where(a)} leaves the page`);
    for (let j = i + 1; j < words.length; j++) {
      const b = words[j]!;
      if (b.page !== a.page) continue;
      const dx = Math.min(a.xMax, b.xMax) - Math.max(a.xMin, b.xMin);
      const dy = Math.min(a.yMax, b.yMax) - Math.max(a.yMin, b.yMin);
      if (dx > tolerance && dy > tolerance) out.push(`${where(a)} overlaps ${where(b)}`);
    }
  }
  return out;
}
