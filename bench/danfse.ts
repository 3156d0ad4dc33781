// `npm run bench:danfse`: DANFSe figures of issue #17, printed as a table. Part 1 (here): one thread
// rendering DANFSe from the simulator's notes (both layouts, IBS/CBS, events), median ms per document.
// Part 2 (bench/danfse-bulk.ts): the bulk export through the danfse service, which needs the stack's
// NATS_URL and MYSQL_URL (bash scripts/stack.sh start). Not a test: nothing here asserts a target; on a
// shared machine wall times are noisy, so CPU time per render is shown too.
import { loadavg } from "node:os";
import type { DanfseInput } from "../libs/danfse/index.js";
import { renderDanfse } from "../libs/danfse/index.js";
import { eventFor, feed, inputOf } from "../libs/danfse/testing/notes.js";
import { runDanfseBulk } from "./danfse-bulk.js";
import { prepareRuntime } from "./runtime.js";
import { fmt, median } from "./stats.js";

const quantile = (xs: readonly number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) * q)]!;

const RENDERS = Number(process.env.BENCH_DANFSE_RENDERS ?? "400");
const rows: [string, string, string, string][] = [];
const row = (what: string, value: string, target: string, met: boolean | null) => {
  rows.push([what, value, target, met === null ? "" : met ? "met" : "MISSED"]);
  console.error(`  ${what}: ${value}`);
};

// ---- Part 1: the engine on one thread ------------------------------------------------------------
console.error(
  `danfse benchmark: ${RENDERS} renders on one thread (load average ${loadavg()
    .map((x) => fmt(x))
    .join(" ")})`,
);
const f = feed(23, 800);
const inputs: DanfseInput[] = f.notes.map((n, i) =>
  // One note in eight carries a cancellation or a substitution (the watermark path).
  i % 8 === 0 ? inputOf(n, [eventFor(f, n, i % 16 === 0 ? "101101" : "105102")]) : inputOf(n),
);

const t0 = performance.now();
const first = renderDanfse(inputs[0]!);
row("first render (fonts parsed, shared subset built), ms", fmt(performance.now() - t0), "", null);

for (let i = 0; i < 30; i++) renderDanfse(inputs[i % inputs.length]!);
const ms: number[] = [];
const cpuMs: number[] = [];
const bytes: number[] = [first.length];
for (let i = 0; i < RENDERS; i++) {
  const input = inputs[i % inputs.length]!;
  const c = process.cpuUsage();
  const s = performance.now();
  const pdf = renderDanfse(input);
  ms.push(performance.now() - s);
  const d = process.cpuUsage(c);
  cpuMs.push((d.user + d.system) / 1000);
  bytes.push(pdf.length);
}
const perRender = median(ms);
const cpuPerRender = median(cpuMs);
row(`ms per DANFSe, one thread (median of ${RENDERS}, ${inputs.length} distinct notes)`, fmt(perRender, 2), "≤ 10", perRender <= 10);
row("  p10 / p90 ms", `${fmt(quantile(ms, 0.1), 2)} / ${fmt(quantile(ms, 0.9), 2)}`, "", null);
// Wall time waits for the core on a loaded machine; CPU time is what one render costs a thread.
row("  CPU ms per DANFSe (median)", fmt(cpuPerRender, 2), "≤ 10", cpuPerRender <= 10);
row("  DANFSe per CPU-second, one thread", fmt(1000 / cpuPerRender, 0), "", null);
row("  PDF bytes (median)", fmt(median(bytes), 0), "", null);

// ---- Part 2: bulk export through the service (end to end on 2 cores) -------------------------------
const runtime = prepareRuntime((msg) => console.error(msg));

const sizes = (process.env.BENCH_DANFSE_SIZES ?? "1000,3000").split(",").map(Number);
const warmup = Number(process.env.BENCH_DANFSE_WARMUP ?? "1000");
const bulk = await runDanfseBulk({ sizes, warmup, compiled: runtime.compiled, log: (m) => console.error(m) });
row(
  `first export of the process (${bulk.cold.notes} notes, cold: JIT warming up), notes/s`,
  fmt(bulk.cold.notes / (bulk.cold.wallMs / 1000), 0),
  "",
  null,
);
for (const r of bulk.runs) {
  const perS = r.notes / (r.wallMs / 1000);
  const cpuAll = Object.values(r.cpu).reduce((s, v) => s + v, 0);
  row(`bulk export of ${r.notes} notes end to end (2 cores, warm process), notes/s`, fmt(perS, 0), "≥ 200", perS >= 200);
  row(`  wall s / zip MB`, `${fmt(r.wallMs / 1000, 2)} / ${fmt(r.zipBytes / 1048576, 1)}`, "", null);
  row(
    `  request → COMPLETED (zip stored, link signed, before the client's download), notes/s`,
    fmt(r.notes / (r.serviceMs / 1000), 0),
    "",
    null,
  );
  row(
    `  CPU s: all services / ${Object.keys(r.cpu).join(" / ")}`,
    `${fmt(cpuAll, 2)} / ${Object.values(r.cpu)
      .map((v) => fmt(v, 2))
      .join(" / ")}`,
    "",
    null,
  );
  row("  danfse peak RSS after it, MB", fmt(r.danfsePeakRssMb, 0), "≤ 256, flat with size", r.danfsePeakRssMb <= 256);
}

const widths = [0, 1, 2, 3].map((i) => Math.max(...[["figure", "value", "target", ""], ...rows].map((r) => r[i]!.length)));
const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
console.log(`\ndanfse benchmark (${new Date().toISOString()}, services ${runtime.label}; shared machine: figures noisy)\n`);
console.log(line(["figure", "value", "target", ""]));
console.log(line(widths.map((w) => "-".repeat(w))));
for (const r of rows) console.log(line(r));
