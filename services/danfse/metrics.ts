// The danfse service's Prometheus series, on its metrics port beside the RPC ones.
import { Counter, Histogram, type Registry } from "prom-client";

export interface DanfseMetrics {
  /** Notes rendered (ok) or refused (not_found, not_renderable, other) by GetDanfse and exports alike. */
  notes: Counter<"outcome">;
  renderSeconds: Histogram;
  /** Exports that reached a final state in this process (completed, failed); interrupted ones are counted by the sweep. */
  exports: Counter<"state">;
}

export function createDanfseMetrics(registry: Registry): DanfseMetrics {
  return {
    notes: new Counter({
      name: "malha_danfse_notes_total",
      help: "Notes asked for a DANFSe, by outcome (ok, not_found, not_renderable, other).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    renderSeconds: new Histogram({
      name: "malha_danfse_render_seconds",
      help: "Time to read a note from the store and render its DANFSe in a worker thread.",
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    }),
    exports: new Counter({
      name: "malha_danfse_exports_total",
      help: "Exports that ended, by state (completed, failed, interrupted).",
      labelNames: ["state"],
      registers: [registry],
    }),
  };
}
