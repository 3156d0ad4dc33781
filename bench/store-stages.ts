// The store's decode and write histograms (services/store/metrics.ts) read as running totals, so a bench
// can say, for one phase, how long a page waited for and took in a decode thread and how long a call's
// transactions took: the two stages a page goes through in the store.
import { sampleValue, scrape } from "../test/support/prom-text.js";

export interface StoreStageTotals {
  pages: number;
  decodeSeconds: number;
  calls: number;
  writeSeconds: number;
}

/** Means over what happened between two readings. */
export interface StoreStages {
  pages: number;
  /** Mean ms per page, its wait for a decode thread included. */
  decodeMs: number;
  /** ApplyBatch and ApplyBatches calls. */
  calls: number;
  /** Mean ms of a call's transactions. */
  writeMs: number;
}

export async function storeStageTotals(metricsPort: number | undefined): Promise<StoreStageTotals> {
  const samples = await scrape(metricsPort);
  const v = (name: string) => sampleValue(samples, name) ?? 0;
  return {
    pages: v("malha_store_page_decode_seconds_count"),
    decodeSeconds: v("malha_store_page_decode_seconds_sum"),
    calls: v("malha_store_apply_write_seconds_count"),
    writeSeconds: v("malha_store_apply_write_seconds_sum"),
  };
}

/** What the store did between two readings; undefined when it decoded or wrote nothing. */
export function storeStagesBetween(before: StoreStageTotals, after: StoreStageTotals): StoreStages | undefined {
  const pages = after.pages - before.pages;
  const calls = after.calls - before.calls;
  if (pages <= 0 || calls <= 0) return undefined;
  return {
    pages,
    decodeMs: (1000 * (after.decodeSeconds - before.decodeSeconds)) / pages,
    calls,
    writeMs: (1000 * (after.writeSeconds - before.writeSeconds)) / calls,
  };
}

/** The bench row's text: both means and the pages per call. */
export function describeStoreStages(s: StoreStages): string {
  const ms = (n: number) => n.toLocaleString("en-US", { minimumFractionDigits: 1, maximumFractionDigits: 1 });
  return `${ms(s.decodeMs)} ms per page (its wait for a decode thread included), ${ms(s.writeMs)} ms per apply call of ${ms(s.pages / s.calls)} pages (its transactions)`;
}
