// `npm run bench:billing`: the billing figures of issue #9 from one run, printed as a table. Figures
// are medians of repetitions; on a shared machine they are noisy, ratios less so. Needs the stack's
// NATS_URL and MYSQL_URL (bash scripts/stack.sh start). Not a test: nothing here asserts a target.
import { checkCnab, gerarRemessa, lerRetorno } from "../libs/cobranca/index.js";
import { remessaInput, retorno240 } from "./billing/cnab.js";
import { runE2e } from "./billing/e2e.js";
import { runPdf } from "./billing/pdf.js";
import { prepareRuntime } from "./runtime.js";
import { fmt, median, sample } from "./stats.js";

const REPS = Number(process.env.BENCH_REPS ?? "5");
const rows: [string, string, string, string][] = [];
const row = (what: string, value: string, target: string, met: boolean | null) => {
  rows.push([what, value, target, met === null ? "" : met ? "met" : "MISSED"]);
  console.error(`  ${what}: ${value}`);
};

console.error(`billing benchmark: ${REPS} repetitions per figure (after warm-up)`);
const runtime = prepareRuntime((msg) => console.error(msg));

// (3) CNAB 240 remessa of 10 000 títulos.
const input = remessaInput(10_000);
const remessa = gerarRemessa(input);
if (remessa.check.errors.length) throw new Error("remessa failed its structural check");
const remessaMs = median(await sample(REPS, 1, () => gerarRemessa(input)));
row("CNAB 240 remessa, 10 000 títulos (BB), ms", fmt(remessaMs), "≤ 300", remessaMs <= 300);
// Every writer and reader runs the structural checker: its share tells what the rest costs.
const remessaCheckMs = median(await sample(REPS, 1, () => checkCnab(remessa.text)));
row("  of which structural check (checkCnab), ms", fmt(remessaCheckMs), "", null);
row("  remessa records / bytes", `${remessa.records} / ${remessa.bytes.length}`, "", null);

// (4) Retorno parsing of 100 000 lines.
const LINES = 100_000;
const text = retorno240(LINES);
const parsed = lerRetorno(text);
if (parsed.warnings.length) throw new Error(`synthetic retorno has warnings: ${parsed.warnings[0]!.message}`);
const retornoMs = median(await sample(REPS, 1, () => lerRetorno(text)));
const linesPerS = LINES / (retornoMs / 1000);
row("CNAB 240 retorno parse, 100 000 lines (Caixa), ms", fmt(retornoMs), "", null);
row("  of which structural check (checkCnab), ms", fmt(median(await sample(REPS, 1, () => checkCnab(text)))), "", null);
row("  retorno lines/s", fmt(linesPerS, 0), "≥ 200 000", linesPerS >= 200_000);
row("  retorno occurrences (T/U pairs)", String(parsed.eventos.length), "", null);

// (2) PDF per boleto against gerar-boletos@1.4.5.
const pdf = await runPdf(Number(process.env.BENCH_PDFS ?? "40"));
row(`PDF per boleto, libs/cobranca (median of ${pdf.boletos}), ms`, fmt(pdf.oursMs, 2), "", null);
row(`PDF per boleto, gerar-boletos 1.4.5 (median of ${pdf.boletos}), ms`, fmt(pdf.peerMs, 2), "", null);
row("  ratio peer / libs/cobranca", `${fmt(pdf.peerMs / pdf.oursMs, 2)}×`, "≥ 5×", pdf.peerMs / pdf.oursMs >= 5);
row("  PDF bytes, libs/cobranca / peer", `${fmt(pdf.oursBytes, 0)} / ${fmt(pdf.peerBytes, 0)}`, "", null);

// (1) 200-boleto job end to end.
const e2e = await runE2e(Number(process.env.BENCH_E2E_REPS ?? "3"));
const msPerItem = median(e2e.runs.map((r) => r.wallMs / r.items));
row(`e2e 200-boleto job, client wall, median of ${e2e.runs.length}, ms`, fmt(median(e2e.runs.map((r) => r.wallMs)), 0), "", null);
row(
  `  e2e ms per item (client wall / 200; ${e2e.renderConcurrency} in flight, ${e2e.renderThreads} render threads)`,
  fmt(msPerItem),
  "≤ 10 (2 cores)",
  msPerItem <= 10,
);
row(
  "  e2e job duracao_ms / ms_por_item (service)",
  `${fmt(median(e2e.runs.map((r) => r.duracaoMs)), 0)} / ${fmt(median(e2e.runs.map((r) => r.msPorItem)))}`,
  "",
  null,
);
for (const name of Object.keys(e2e.runs[0]!.cpu)) {
  const cpu = median(e2e.runs.map((r) => r.cpu[name]!));
  const rss = e2e.peakRssMb[name];
  row(`  ${name}: CPU s per job / peak RSS MB`, `${fmt(cpu, 2)} / ${rss === undefined ? "-" : fmt(rss, 0)}`, "", null);
}
// Bytes between billing and artifacts. Before ComposeZip billing also uploaded the zip it had built
// (and, on another replica or after its 64 MiB cache, read every PDF back first): the zip's size on top
// of today's figure is that former path's lower bound (measured on 2026-12-02: see bench/README.md).
const moved = median(e2e.runs.map((r) => r.artifactBytes.received + r.artifactBytes.sent));
const formerPath = median(e2e.runs.map((r) => r.artifactBytes.received + r.artifactBytes.sent + r.zipBytes));
row(
  "  bytes billing ↔ artifacts per job, KiB (received / sent by artifacts)",
  `${fmt(moved / 1024, 0)} (${fmt(median(e2e.runs.map((r) => r.artifactBytes.received)) / 1024, 0)} / ${fmt(median(e2e.runs.map((r) => r.artifactBytes.sent)) / 1024, 0)})`,
  "",
  null,
);
row("  bytes per job before ComposeZip (+ the zip uploaded by billing), KiB", fmt(formerPath / 1024, 0), "", null);
row("  after / before", fmt(moved / formerPath, 2), "≈ 0.5", null);
row("  MariaDB statements per item (all services)", fmt(median(e2e.runs.map((r) => r.sqlStatements)) / 200), "", null);
const serviceCpu = median(
  e2e.runs.map((r) =>
    Object.entries(r.cpu)
      .filter(([k]) => k !== "bench client")
      .reduce((s, [, v]) => s + v, 0),
  ),
);
row("  CPU ms per item, all server processes", fmt((serviceCpu * 1000) / 200), "", null);

// The same job with only 4 items in flight (the default before 2026-11-29): how much of the figure
// above is latency hidden by concurrency rather than CPU saved.
const narrow = await runE2e(Number(process.env.BENCH_E2E_REPS ?? "3"), 200, "4", e2e.renderThreads);
const narrowMsPerItem = median(narrow.runs.map((r) => r.wallMs / r.items));
row(`  e2e ms per item, BILLING_RENDER_CONCURRENCY=4 (threads ${e2e.renderThreads})`, fmt(narrowMsPerItem), "(diagnostic)", null);
row("  speed-up of the defaults over 4 in flight", `${fmt(narrowMsPerItem / msPerItem, 2)}×`, "", null);

const widths = [0, 1, 2, 3].map((i) => Math.max(...[["figure", "value", "target", ""], ...rows].map((r) => r[i]!.length)));
const line = (r: readonly string[]) => `| ${r.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
console.log(
  `\nbilling benchmark (${new Date().toISOString()}, ${REPS} reps, services ${runtime.label}; shared machine: figures noisy, ratios less so)\n`,
);
console.log(line(["figure", "value", "target", ""]));
console.log(line(widths.map((w) => "-".repeat(w))));
for (const r of rows) console.log(line(r));
