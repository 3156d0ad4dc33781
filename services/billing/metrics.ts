// Billing's Prometheus series, on the service's metrics port beside the RPC ones.
import { Counter, Histogram, type Registry } from "prom-client";

export interface BillingMetrics {
  jobsFinished: Counter<"kind" | "state">;
  itemsFinished: Counter<"kind" | "state">;
  renderSeconds: Histogram;
  webhookAttempts: Counter<"outcome">;
}

export function createBillingMetrics(registry: Registry): BillingMetrics {
  return {
    jobsFinished: new Counter({ name: "malha_billing_jobs_finished_total", help: "Jobs that reached a final state, by kind and state.", labelNames: ["kind", "state"], registers: [registry] }),
    itemsFinished: new Counter({ name: "malha_billing_items_finished_total", help: "Boleto items that reached a final state in this process.", labelNames: ["kind", "state"], registers: [registry] }),
    renderSeconds: new Histogram({
      name: "malha_billing_render_seconds",
      help: "PDF rendering time per boleto in the worker threads.",
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    }),
    webhookAttempts: new Counter({ name: "malha_billing_webhook_attempts_total", help: "Webhook HTTP attempts by outcome (succeeded, retrying, dead_lettered, skipped).", labelNames: ["outcome"], registers: [registry] }),
  };
}
