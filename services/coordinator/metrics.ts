// The coordinator's Prometheus series, beside the RPC ones on its metrics port: what this replica's runs
// ended with, and the fleet view of its last full sweep (deploy/k8s/components/monitoring alerts on them).
import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { RunOutcome, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import { FEED_STATES, type FleetView } from "./fleet-view.js";
import type { RunResult } from "./runner.js";

export interface CoordinatorMetrics {
  runEnded(pool: SyncPool, result: RunResult, seconds: number): void;
  fleet(view: FleetView): void;
}

/** Label of a run's end: the store's outcome, or why no run took place. */
export function runOutcomeLabel(result: RunResult): string {
  if (result.kind === "finished") return (RunOutcome[result.outcome] ?? "UNSPECIFIED").toLowerCase();
  return result.kind.replace(/-/g, "_");
}

const poolLabel = (pool: SyncPool) => (pool === SyncPool.BOOTSTRAP ? "bootstrap" : "incremental");

export function createCoordinatorMetrics(registry: Registry): CoordinatorMetrics {
  const runs = new Counter({
    name: "malha_sync_runs_total",
    help: "Feed jobs of this replica by pool and how they ended: the run's outcome (caught_up, yielded, rate_limited, failed, cancelled), or lease_held, lease_lost, not_eligible.",
    labelNames: ["pool", "outcome"],
    registers: [registry],
  });
  const shortPageEnds = new Counter({
    name: "malha_sync_short_page_ends_total",
    help: "Runs of this replica that ended at a page shorter than NFSE_ADN_PAGE_SIZE, without the ADN call that only hears 'nothing newer' (decision 0061).",
    labelNames: ["pool"],
    registers: [registry],
  });
  const items = new Counter({
    name: "malha_sync_items_total",
    help: "Items (documents, events, faults) applied by this replica's runs.",
    labelNames: ["pool"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "malha_sync_run_duration_seconds",
    help: "Duration of this replica's feed runs (lease taken to lease given back).",
    labelNames: ["pool"],
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600],
    registers: [registry],
  });
  const feeds = new Gauge({
    name: "malha_sync_feeds",
    help: "Feeds by state at the last full sweep (disabled, cooling_down, running, error, idle).",
    labelNames: ["state"],
    registers: [registry],
  });
  const lag = new Gauge({
    name: "malha_sync_lag_nsu_max",
    help: "Largest max_nsu − last_nsu of an enabled feed at the last full sweep.",
    registers: [registry],
  });
  const age = new Gauge({
    name: "malha_sync_last_success_age_seconds_max",
    help: "Age of the oldest last successful run among enabled feeds that have had one, at the last full sweep.",
    registers: [registry],
  });
  const never = new Gauge({
    name: "malha_sync_feeds_never_synced",
    help: "Enabled feeds without a successful run yet, at the last full sweep.",
    registers: [registry],
  });
  const faults = new Gauge({
    name: "malha_sync_faults",
    help: "Quarantined items over every feed, at the last full sweep.",
    registers: [registry],
  });
  const holes = new Gauge({
    name: "malha_sync_holes",
    help: "Confirmed NSU holes over every feed, at the last full sweep.",
    registers: [registry],
  });
  const at = new Gauge({
    name: "malha_sync_fleet_view_timestamp_seconds",
    help: "When the last full sweep read every feed (Unix seconds); stale = the sweep cannot read the store.",
    registers: [registry],
  });
  return {
    runEnded(pool, result, seconds) {
      runs.inc({ pool: poolLabel(pool), outcome: runOutcomeLabel(result) });
      if (result.kind === "finished" && result.endedAtShortPage) shortPageEnds.inc({ pool: poolLabel(pool) });
      const n = result.kind === "finished" || result.kind === "lease-lost" ? result.items : 0;
      if (n > 0) items.inc({ pool: poolLabel(pool) }, n);
      if (result.kind === "finished" || result.kind === "lease-lost") duration.observe({ pool: poolLabel(pool) }, seconds);
    },
    fleet(view) {
      for (const s of FEED_STATES) feeds.set({ state: s }, view.feeds[s]);
      lag.set(view.lagNsuMax);
      age.set(view.lastSuccessAgeSecondsMax);
      never.set(view.neverSynced);
      faults.set(view.faults);
      holes.set(view.holes);
      at.set(view.at / 1000);
    },
  };
}
