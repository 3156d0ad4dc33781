// On-CPU profile of every process, from Linux perf: where the CPU time of each process went, its V8
// background threads (optimizing compiler, garbage collector) and its kernel time included. V8's own
// --cpu-prof samples the main thread by wall clock, so on a busy machine it also charges to a syscall the
// time its thread waited for a core after waking another process; perf's cpu-clock event counts only time
// on a CPU. Usage (bench/README.md, "Profiles"):
//   perf record -e cpu-clock -F 1999 -a -g -o /tmp/perf.data -- <a bench run with
//     --service-node-options "--perf-basic-prof" so JIT frames have names>
//   perf script -i /tmp/perf.data -F pid,tid,time,ip,sym,dso > /tmp/perf.txt
//   npx tsx bench/perf-summary.ts /tmp/perf.txt [--pids 123,456] [--from S --to S] [--top 25]
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";

const args = process.argv.slice(2);
const file = args[0]?.startsWith("--") ? undefined : args[0];
const opt = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
if (!file) throw new Error("usage: bench/perf-summary.ts PERF_SCRIPT_OUTPUT [--pids a,b] [--from S --to S] [--top N]");
const from = Number(opt("from") ?? 0);
const to = Number(opt("to") ?? Number.POSITIVE_INFINITY);
const top = Number(opt("top") ?? 25);
const chosen = new Set((opt("pids") ?? "").split(",").filter(Boolean).map(Number));

/** What a sample's stack was doing, from its frames (innermost first). */
function category(frames: readonly { sym: string; dso: string }[]): string {
  const any = (re: RegExp) => frames.some((f) => re.test(f.sym));
  if (any(/OptimizingCompileDispatcher|compiler::Pipeline|Compiler::Compile/)) return "V8 optimizing compiler";
  if (any(/Scavenge|MarkCompact|ConcurrentMarking|Sweeper|Heap::CollectGarbage|MinorMarkSweep|IncrementalMarking/))
    return "V8 garbage collector";
  const leaf = frames[0];
  if (!leaf) return "(no stack)";
  if (leaf.dso.includes("kernel")) return "kernel (syscalls, scheduling, network)";
  if (leaf.dso.includes("perf-") || leaf.sym.startsWith("JS:") || leaf.sym.startsWith("Builtins_")) return "JavaScript and V8 builtins";
  return `native: ${leaf.dso.split("/").at(-1)}`;
}

interface ProcessTally {
  samples: number;
  byCategory: Map<string, number>;
  byLeaf: Map<string, number>;
  threads: Map<number, number>;
}
const tallies = new Map<number, ProcessTally>();
let total = 0;
const bump = <K>(m: Map<K, number>, k: K) => m.set(k, (m.get(k) ?? 0) + 1);

const header = /^\s*(\d+)\/(\d+)\s+([\d.]+):/;
const frameLine = /^\s+[0-9a-f]+ (.*) \((.*)\)$/;
let current: { pid: number; tid: number; frames: { sym: string; dso: string }[] } | undefined;

function flush(): void {
  if (!current) return;
  total++;
  let t = tallies.get(current.pid);
  if (!t) tallies.set(current.pid, (t = { samples: 0, byCategory: new Map(), byLeaf: new Map(), threads: new Map() }));
  t.samples++;
  bump(t.threads, current.tid);
  if (chosen.has(current.pid)) {
    bump(t.byCategory, category(current.frames));
    bump(t.byLeaf, current.frames[0]?.sym ?? "(none)");
  }
  current = undefined;
}

for await (const line of createInterface({ input: createReadStream(file) })) {
  const h = header.exec(line);
  if (h) {
    flush();
    const time = Number(h[3]);
    if (time >= from && time <= to) current = { pid: Number(h[1]), tid: Number(h[2]), frames: [] };
    continue;
  }
  const f = current && frameLine.exec(line);
  if (f && current) current.frames.push({ sym: f[1]!, dso: f[2]! });
}
flush();

const pct = (n: number, of: number) => `${((100 * n) / of).toFixed(1).padStart(5)}%`;
console.log(`${total} samples${Number.isFinite(to) || from > 0 ? ` between ${from} and ${to} s` : ""}; by process (pid 0: idle):`);
for (const [pid, t] of [...tallies].sort((a, b) => b[1].samples - a[1].samples).slice(0, 12)) {
  console.log(`  ${String(pid).padStart(7)} ${pct(t.samples, total)}  ${t.threads.size} threads`);
}
for (const pid of chosen) {
  const t = tallies.get(pid);
  if (!t) continue;
  console.log(`\n== ${pid}: ${t.samples} samples`);
  for (const [c, n] of [...t.byCategory].sort((a, b) => b[1] - a[1])) console.log(`  ${pct(n, t.samples)}  ${c}`);
  console.log("  -- innermost frames");
  for (const [s, n] of [...t.byLeaf].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`  ${pct(n, t.samples)}  ${s.slice(0, 140)}`);
}
