// Summarises V8 .cpuprofile files (node --cpu-prof, or bench/cpu-prof-preload.mjs): self time by function
// and by file, top N, and optionally inclusive time of named functions (substring of "name file").
//   npx tsx bench/profile-top.ts <dir-or-file>... [--top 25] [--incl "decodeItem ,toBinary ,fromBinary "]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface Profile {
  nodes: Node[];
  startTime: number;
  endTime: number;
  samples?: number[];
  timeDeltas?: number[];
}

function files(path: string): string[] {
  if (statSync(path).isDirectory()) return readdirSync(path).flatMap((f) => files(join(path, f)));
  return path.endsWith(".cpuprofile") ? [path] : [];
}

const args = process.argv.slice(2);
const topIdx = args.indexOf("--top");
const top = topIdx >= 0 ? Number(args[topIdx + 1]) : 25;
const inclIdx = args.indexOf("--incl");
const inclNames = inclIdx >= 0 ? (args[inclIdx + 1] ?? "").split(",").filter(Boolean) : [];
// Flag positions and their values are not paths (an absent flag has index -1, which must exclude nothing).
const flagSlots = new Set([topIdx, inclIdx].filter((i) => i >= 0).flatMap((i) => [i, i + 1]));
const paths = args.filter((_, i) => !flagSlots.has(i));
const root = process.cwd();

for (const file of paths.flatMap(files)) {
  const p = JSON.parse(readFileSync(file, "utf8")) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  // Self time per node from samples × time deltas (µs).
  const self = new Map<number, number>();
  const samples = p.samples ?? [];
  const deltas = p.timeDeltas ?? [];
  for (let i = 0; i < samples.length; i++) self.set(samples[i]!, (self.get(samples[i]!) ?? 0) + (deltas[i + 1] ?? deltas[i] ?? 0));
  let total = 0;
  let idle = 0;
  const byFn = new Map<string, number>();
  const byFile = new Map<string, number>();
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    if (inclNames.length > 0 && n.callFrame.functionName !== "(idle)") {
      const seen = new Set<string>();
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const c = byId.get(cur)!;
        const key = `${c.callFrame.functionName} ${c.callFrame.url}`;
        for (const want of inclNames) {
          if (!seen.has(want) && key.includes(want)) {
            seen.add(want);
            incl.set(want, (incl.get(want) ?? 0) + us);
          }
        }
      }
    }
    const name = n.callFrame.functionName || "(anonymous)";
    if (name === "(idle)") {
      idle += us;
      continue;
    }
    total += us;
    const url = n.callFrame.url.replace(/^file:\/\//, "");
    const short = url ? relative(root, url).replace(/^node_modules\//, "nm/") : "";
    const key = `${name}  ${short}${url ? `:${n.callFrame.lineNumber + 1}` : ""}`;
    byFn.set(key, (byFn.get(key) ?? 0) + us);
    const fileKey = short.startsWith("nm/")
      ? short
          .split("/")
          .slice(0, short.startsWith("nm/@") ? 3 : 2)
          .join("/")
      : short || name;
    byFile.set(fileKey, (byFile.get(fileKey) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%`;
  console.log(`\n== ${relative(root, file)}: ${(total / 1e6).toFixed(2)} s busy, ${(idle / 1e6).toFixed(2)} s idle`);
  console.log("-- self time by function");
  for (const [k, us] of [...byFn].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${pct(us)}  ${k}`);
  if (inclNames.length > 0) {
    console.log("-- inclusive time of named functions");
    for (const w of inclNames) console.log(`${pct(incl.get(w) ?? 0)}  ${((incl.get(w) ?? 0) / 1e6).toFixed(2)} s  ${w}`);
  }
  console.log("-- self time by file / package");
  for (const [k, us] of [...byFile].sort((a, b) => b[1] - a[1]).slice(0, Math.ceil(top / 2))) console.log(`${pct(us)}  ${k}`);
}
