// Reads a service's /metrics (Prometheus text format) into samples, so tests assert on values instead
// of matching text.
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

export function parsePrometheusText(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split("\n")) {
    if (line === "" || line.startsWith("#")) continue;
    const m = LINE.exec(line);
    if (!m) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? "").matchAll(LABEL)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[3]) });
  }
  return out;
}

export async function scrape(metricsPort: number | undefined): Promise<Sample[]> {
  if (metricsPort === undefined) throw new Error("the process has no metrics port");
  const res = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
  if (res.status !== 200) throw new Error(`/metrics answered ${res.status}`);
  return parsePrometheusText(await res.text());
}

/** Sum of the samples of `name` whose labels include `labels`; undefined when there is none. */
export function sampleValue(samples: Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  return hits.length === 0 ? undefined : hits.reduce((n, s) => n + s.value, 0);
}
