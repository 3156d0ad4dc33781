import { createServer, type Server } from "node:http";
import { Counter, Histogram, Registry, collectDefaultMetrics } from "prom-client";

const NON_COUNTER_TOTALS = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** One Prometheus registry per process, with the RPC metrics every service shares. */
export class Metrics {
  readonly registry = new Registry();
  readonly rpcHandled: Counter<"service" | "method" | "code">;
  readonly rpcDuration: Histogram<"service" | "method">;

  constructor(serviceName: string) {
    this.registry.setDefaultLabels({ malha_service: serviceName });
    collectDefaultMetrics({ register: this.registry });
    // prom-client also exports nodejs_active_{handles,requests,resources}_total as gauges: a `_total`
    // suffix promises a counter (promtool check metrics refuses them, and rate() over them is nonsense).
    // The per-type gauges stay: sum(nodejs_active_handles) is the same number.
    for (const name of NON_COUNTER_TOTALS) this.registry.removeSingleMetric(name);
    this.rpcHandled = new Counter({
      name: "malha_rpc_handled_total",
      help: "RPCs completed by the server, by gRPC status code.",
      labelNames: ["service", "method", "code"],
      registers: [this.registry],
    });
    this.rpcDuration = new Histogram({
      name: "malha_rpc_duration_seconds",
      help: "Server-side RPC latency until the response (or stream) ends.",
      labelNames: ["service", "method"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [this.registry],
    });
  }
}

/**
 * One read per scrape, shared by every collect() that needs it (a scrape collects its gauges together).
 * A failed read gives undefined, so the gauges keep their last values instead of failing the scrape.
 */
export function oncePerScrape<T>(read: () => Promise<T>, onError?: (err: unknown) => void): () => Promise<T | undefined> {
  let snapshot: Promise<T | undefined> | undefined;
  return () =>
    (snapshot ??= read()
      .catch((err: unknown) => {
        onError?.(err);
        return undefined;
      })
      .finally(() => setTimeout(() => (snapshot = undefined), 0)));
}

/** Serves GET /metrics in the Prometheus text format on its own port, away from the RPC listener. */
export function serveMetrics(metrics: Metrics, host: string, port: number): Promise<Server> {
  const server = createServer((req, res) => {
    if (req.method !== "GET" || (req.url ?? "").split("?")[0] !== "/metrics") {
      res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { "content-type": metrics.registry.contentType }).end(text),
      () => res.writeHead(500, { "content-type": "text/plain" }).end("metrics unavailable\n"),
    );
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}
