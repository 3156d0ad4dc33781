// Where a service's memory goes during a bench phase: its Prometheus endpoint scraped once a second (the
// default Node metrics of libs/rpc/metrics.ts), keeping each figure's highest value. The resident set says
// how much; the V8 heap (young and old generation, total against used) and external memory say whether it
// is the heap's sizing policy, objects kept alive, or buffers outside the heap; /proc splits the resident set
// into anonymous memory (heap, malloc) and file pages (the node binary's code, shared with other processes).
import { readFileSync } from "node:fs";

const FIGURES = {
  rss: "process_resident_memory_bytes",
  heapTotal: "nodejs_heap_size_total_bytes",
  heapUsed: "nodejs_heap_size_used_bytes",
  newTotal: 'nodejs_heap_space_size_total_bytes{space="new"}',
  oldTotal: 'nodejs_heap_space_size_total_bytes{space="old"}',
  oldUsed: 'nodejs_heap_space_size_used_bytes{space="old"}',
  external: "nodejs_external_memory_bytes",
  // The gateway's certificate pools open (one TLS context each); absent elsewhere.
  pools: "malha_adn_open_pools",
} as const;
type Figure = keyof typeof FIGURES | "rssAnon" | "rssFile";

function procStatus(pid: number): Partial<Record<Figure, number>> {
  try {
    const text = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text)?.[1] ?? Number.NaN) * 1024;
    return { rssAnon: kb("RssAnon"), rssFile: kb("RssFile") };
  } catch {
    return {};
  }
}

function parse(text: string): Partial<Record<Figure, number>> {
  const out: Partial<Record<Figure, number>> = {};
  for (const line of text.split("\n")) {
    for (const [figure, name] of Object.entries(FIGURES) as [keyof typeof FIGURES, string][]) {
      // Series carry the registry's default label (malha_service) too: match the name and our label only.
      const [metric, labels] = name.includes("{") ? [name.slice(0, name.indexOf("{")), name.slice(name.indexOf("{") + 1, -1)] : [name, ""];
      if (!line.startsWith(metric) || (line[metric.length] !== "{" && line[metric.length] !== " ")) continue;
      if (labels && !line.includes(labels)) continue;
      out[figure] = Number(line.slice(line.lastIndexOf(" ") + 1));
    }
  }
  return out;
}

export class MemorySampler {
  private peaks = new Map<string, Partial<Record<Figure, number>>>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly services: Record<string, { metricsPort: number | undefined; pid: number | undefined }>) {}

  start(intervalMs = 1000): void {
    this.peaks.clear();
    // Unreferenced: a phase that throws before stop() must not keep the bench alive.
    this.timer = setInterval(() => void this.sample(), intervalMs).unref();
  }

  private async sample(): Promise<void> {
    await Promise.all(
      Object.entries(this.services).map(async ([name, { metricsPort, pid }]) => {
        if (metricsPort === undefined || pid === undefined) return;
        const text = await fetch(`http://127.0.0.1:${metricsPort}/metrics`)
          .then((r) => r.text())
          .catch(() => "");
        const peak = this.peaks.get(name) ?? {};
        for (const [figure, value] of Object.entries({ ...parse(text), ...procStatus(pid) }) as [Figure, number][])
          peak[figure] = Math.max(peak[figure] ?? 0, value);
        this.peaks.set(name, peak);
      }),
    );
  }

  /** Stops sampling; one line per service of each figure's peak, in MB. */
  stop(): string[] {
    clearInterval(this.timer);
    const mb = (b: number | undefined) => (b === undefined ? "-" : (b / 2 ** 20).toFixed(0));
    return [...this.peaks].map(
      ([name, p]) =>
        `${name}: rss ${mb(p.rss)} (anonymous ${mb(p.rssAnon)}, file ${mb(p.rssFile)}), heap ${mb(p.heapUsed)} used / ${mb(p.heapTotal)} total (old ${mb(p.oldUsed)} / ${mb(p.oldTotal)}, new ${mb(p.newTotal)}), external ${mb(p.external)} MB${p.pools === undefined ? "" : `; at most ${p.pools} certificate pools open`}`,
    );
  }
}
