// The store's own Prometheus series, beside the RPC ones on its metrics port: where a page's time goes once
// it reaches the store — waiting for and running in a decode thread, then the call's transactions. Read
// together with malha_rpc_duration_seconds they tell a saturated decode pool (0038) from a slow database.
import { Histogram, type Registry } from "prom-client";

/** Each starts timing one event and returns what ends it (prom-client's `startTimer`). */
export interface StoreMetrics {
  /** One page of entries, from its hand-off to the decode pool until its rows came back (or it failed). */
  pageDecode(): () => void;
  /** The writing of one ApplyBatch or ApplyBatches call: its transactions, once every page of it was decoded. */
  applyWrite(method: "ApplyBatch" | "ApplyBatches"): () => void;
}

const untimed = () => () => undefined;
export const noStoreMetrics: StoreMetrics = { pageDecode: untimed, applyWrite: untimed };

const BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createStoreMetrics(registry: Registry): StoreMetrics {
  const decode = new Histogram({
    name: "malha_store_page_decode_seconds",
    help: "Per page of ADN entries: the wait for a decode thread and the decode itself, until its rows are back.",
    buckets: BUCKETS,
    registers: [registry],
  });
  const write = new Histogram({
    name: "malha_store_apply_write_seconds",
    help: "Per ApplyBatch or ApplyBatches call: its transactions, from the last page decoded to the last commit.",
    labelNames: ["method"],
    buckets: BUCKETS,
    registers: [registry],
  });
  return {
    pageDecode: () => decode.startTimer(),
    applyWrite: (method) => write.startTimer({ method }),
  };
}
