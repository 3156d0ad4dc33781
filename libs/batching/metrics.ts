// How much the batched calls share: entries per call, by call. Under load the batches grow by themselves
// (micro-batcher.ts); an operator reads here whether they do (decisions 0036 and 0040).
import { Histogram, type Registry } from "prom-client";

/** Records one batched call of `entries` entries. */
export type BatchObserver = (entries: number) => void;

/** One histogram per registry, one observer per call name (`ApplyBatches`, `BeginRuns`, …). */
export function batchSizeObservers(registry: Registry): (call: string) => BatchObserver {
  const entries = new Histogram({
    name: "malha_batched_call_entries",
    help: "Entries per batched call (pages per ApplyBatches, runs per BeginRuns and FinishRuns), by call.",
    labelNames: ["call"],
    buckets: [1, 2, 4, 8, 16, 32, 64, 128],
    registers: [registry],
  });
  return (call) => (n) => entries.observe({ call }, n);
}
