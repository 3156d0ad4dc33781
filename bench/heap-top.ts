// npx tsx bench/heap-top.ts <file.heapsnapshot> [more…] — what a V8 heap snapshot holds, summed by
// constructor (or node type for strings, arrays, code): count and self size, biggest first. Given several
// snapshots of one process (bench:fleet --heap-snapshots writes one per phase), prints each one's column
// side by side, so what grows from phase to phase stands out.
import { readFileSync } from "node:fs";

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

function summarize(file: string): Map<string, { count: number; size: number }> {
  const s = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
  const fields = s.snapshot.meta.node_fields;
  const width = fields.length;
  const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
  const types = s.snapshot.meta.node_types[0];
  const out = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < s.nodes.length; i += width) {
    const type = types[s.nodes[i + typeAt!]!]!;
    const key = type === "object" || type === "closure" ? `${type} ${s.strings[s.nodes[i + nameAt!]!]}` : `(${type})`;
    const e = out.get(key) ?? { count: 0, size: 0 };
    e.count++;
    e.size += s.nodes[i + sizeAt!]!;
    out.set(key, e);
  }
  return out;
}

const files = process.argv.slice(2);
if (files.length === 0) throw new Error("usage: tsx bench/heap-top.ts <file.heapsnapshot> [more…]");
const sums = files.map(summarize);
const keys = new Set(sums.flatMap((m) => [...m.keys()]));
const last = sums[sums.length - 1]!;
const top = [...keys].sort((a, b) => (last.get(b)?.size ?? 0) - (last.get(a)?.size ?? 0)).slice(0, Number(process.env.TOP ?? 40));
const kb = (n = 0) => (n / 1024).toFixed(0).padStart(8);
console.log(`${"self KB / count per snapshot →".padEnd(60)} ${files.map((_, i) => `#${i + 1}`.padStart(18)).join("")}`);
for (const [label, m] of [["total", null] as const, ...top.map((k) => [k, k] as const)]) {
  const cells = sums.map((s) => {
    const e =
      m === null
        ? [...s.values()].reduce((a, b) => ({ count: a.count + b.count, size: a.size + b.size }), { count: 0, size: 0 })
        : s.get(m);
    return `${kb(e?.size)} ${String(e?.count ?? 0).padStart(9)}`;
  });
  console.log(`${label.slice(0, 60).padEnd(60)} ${cells.join(" ")}`);
}
