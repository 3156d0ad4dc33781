// Summarises V8 sampling heap profiles (.heapprofile, from bench/cpu-prof-preload.mjs with BENCH_ALLOC_PROF=1,
// freed objects included): bytes allocated by function and by package, and by the nearest frame of our own
// code (dist/ or the sources) above each allocation, top N.
//   npx tsx bench/alloc-top.ts <dir-or-file>... [--top 25]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface Frame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface HeapNode {
  callFrame: Frame;
  selfSize: number;
  children: HeapNode[];
}

function files(path: string): string[] {
  if (statSync(path).isDirectory()) return readdirSync(path).flatMap((f) => files(join(path, f)));
  return path.endsWith(".heapprofile") ? [path] : [];
}

const args = process.argv.slice(2);
const topIdx = args.indexOf("--top");
const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 25;
const paths = args.filter((_, i) => topIdx < 0 || (i !== topIdx && i !== topIdx + 1));

const shortUrl = (url: string) =>
  url
    .replace(/^file:\/\//, "")
    .replace(/.*\/node_modules\//, "nm/")
    .replace(/.*\/(dist|services|libs)\//, "$1/");
const isOurs = (url: string) => !url.includes("node_modules") && /\/(dist|services|libs)\//.test(url);
const label = (f: Frame) => `${f.functionName || "(anonymous)"}  ${shortUrl(f.url)}${f.url ? `:${f.lineNumber + 1}` : ""}`;
const packageOf = (url: string) => {
  const m = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (m) return `nm/${m[1]}`;
  if (url.startsWith("node:")) return url;
  return url === "" ? "(native)" : shortUrl(url);
};

function add(map: Map<string, number>, key: string, bytes: number): void {
  map.set(key, (map.get(key) ?? 0) + bytes);
}

function print(title: string, map: Map<string, number>, total: number): void {
  console.log(`-- ${title}`);
  for (const [k, v] of [...map].sort((a, b) => b[1] - a[1]).slice(0, top))
    console.log(`${((100 * v) / total).toFixed(1).padStart(6)}%  ${(v / 1e6).toFixed(1).padStart(8)} MB  ${k}`);
}

for (const file of paths.flatMap(files)) {
  const head = (JSON.parse(readFileSync(file, "utf8")) as { head: HeapNode }).head;
  const byFunction = new Map<string, number>();
  const byPackage = new Map<string, number>();
  const byOurFrame = new Map<string, number>();
  let total = 0;
  const walk = (node: HeapNode, ours: string) => {
    const here = isOurs(node.callFrame.url) ? label(node.callFrame) : ours;
    if (node.selfSize > 0) {
      total += node.selfSize;
      add(byFunction, label(node.callFrame), node.selfSize);
      add(byPackage, packageOf(node.callFrame.url), node.selfSize);
      add(byOurFrame, here, node.selfSize);
    }
    for (const child of node.children) walk(child, here);
  };
  walk(head, "(none of ours)");
  console.log(`\n== ${file}: ${(total / 1e6).toFixed(1)} MB allocated (sampled, freed objects included)`);
  print("by function", byFunction, total);
  print("by package", byPackage, total);
  print("by the nearest frame of our code", byOurFrame, total);
}
