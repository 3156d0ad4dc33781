// `npm run bench:danfse`: the DANFSe figures of issue #17, printed as a table. Needs the stack's NATS_URL
// and MYSQL_URL (bash scripts/stack.sh start). Not a test: nothing here asserts a target.
// The bulk export's part lives in bench/danfse-bulk.ts.
import { runDanfseBulk } from "./danfse-bulk.js";
import { prepareRuntime } from "./runtime.js";
import { fmt } from "./stats.js";

const rows: [string, string, string, string][] = [];
const row = (what: string, value: string, target: string, met: boolean | null) => {
  rows.push([what, value, target, met === null ? "" : met ? "met" : "MISSED"]);
  console.error(`  ${what}: ${value}`);
};

console.error("danfse benchmark");
const runtime = prepareRuntime((msg) => console.error(msg));

const sizes = (process.env.BENCH_DANFSE_SIZES ?? "1000,3000").split(",").map(Number);
const bulk = await runDanfseBulk({ sizes, compiled: runtime.compiled, log: (m) => console.error(m) });
for (const r of bulk.runs) {
  const perS = r.notes / (r.wallMs / 1000);
  const cpuAll = Object.values(r.cpu).reduce((s, v) => s + v, 0);
  row(`bulk export of ${r.notes} notes end to end (2 cores), notes/s`, fmt(perS, 0), "≥ 200", perS >= 200);
  row(`  wall s / zip MB`, `${fmt(r.wallMs / 1000, 2)} / ${fmt(r.zipBytes / 1048576, 1)}`, "", null);
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
