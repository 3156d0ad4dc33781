// Billing's Prometheus series, on the service's metrics port beside the RPC ones.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { JobKind, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { oncePerScrape } from "../../libs/rpc/metrics.js";

export interface BillingMetrics {
  jobsFinished: Counter<"kind" | "state">;
  itemsFinished: Counter<"kind" | "state">;
  renderSeconds: Histogram;
  webhookAttempts: Counter<"outcome">;
  jobsPurged: Counter;
}

/** Unfinished jobs of one kind and state, and when the oldest one's current round began. */
export interface OpenJobs {
  kind: JobKind;
  state: JobState;
  count: number;
  oldestSince: Date;
}

/**
 * Read from MySQL at scrape time (every replica reports the same, hence max() in alerts): what is
 * waiting or running, and for how long, across every billing process.
 */
export function registerOpenJobGauges(registry: Registry, read: () => Promise<OpenJobs[]>, now: () => Date = () => new Date()): void {
  const rows = oncePerScrape(read);
  const kind = (k: JobKind) => JobKind[k]?.toLowerCase() ?? String(k);
  new Gauge({
    name: "malha_billing_open_jobs",
    help: "Jobs not yet finished, by kind and state (RECEIVED waits for its tenant's turn, VALIDATING/PROCESSING run).",
    labelNames: ["kind", "state"],
    registers: [registry],
    async collect() {
      const current = await rows();
      if (!current) return;
      this.reset();
      for (const r of current) this.set({ kind: kind(r.kind), state: JobState[r.state] ?? String(r.state) }, r.count);
    },
  });
  new Gauge({
    name: "malha_billing_oldest_open_job_age_seconds",
    help: "Age of the oldest unfinished job's current round (since its creation or its last retry), by kind.",
    labelNames: ["kind"],
    registers: [registry],
    async collect() {
      const current = await rows();
      if (!current) return;
      this.reset();
      const oldest = new Map<string, number>();
      for (const r of current) oldest.set(kind(r.kind), Math.min(oldest.get(kind(r.kind)) ?? Infinity, r.oldestSince.getTime()));
      for (const [k, since] of oldest) this.set({ kind: k }, Math.max(0, (now().getTime() - since) / 1000));
    },
  });
}

export function createBillingMetrics(registry: Registry): BillingMetrics {
  return {
    jobsFinished: new Counter({
      name: "malha_billing_jobs_finished_total",
      help: "Jobs that reached a final state, by kind and state.",
      labelNames: ["kind", "state"],
      registers: [registry],
    }),
    itemsFinished: new Counter({
      name: "malha_billing_items_finished_total",
      help: "Boleto items that reached a final state in this process.",
      labelNames: ["kind", "state"],
      registers: [registry],
    }),
    renderSeconds: new Histogram({
      name: "malha_billing_render_seconds",
      help: "PDF rendering time per boleto in the worker threads.",
      buckets: [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 5],
      registers: [registry],
    }),
    jobsPurged: new Counter({
      name: "malha_billing_jobs_purged_total",
      help: "Finished jobs deleted with their rows after BILLING_RETENTION_DAYS.",
      registers: [registry],
    }),
    webhookAttempts: new Counter({
      name: "malha_billing_webhook_attempts_total",
      help: "Webhook HTTP attempts by outcome (succeeded, retrying, dead_lettered, skipped).",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}
