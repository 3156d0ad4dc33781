// The store's decode threads: ApplyBatch hands each page of ADN entries to one of them and gets back the
// rows to write, so the event loop that runs every feed's SQL and serves the queries never spends a
// page's decode on one call (docs/decisions/0038-store-decodes-in-worker-threads.md).
import { Code, ConnectError } from "@connectrpc/connect";
import { PageTooLargeError } from "../../libs/adn/decode-page.js";
import { fromLoteDfeEntry } from "../../libs/adn/lote-entry.js";
import type { LoteDfeEntry } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { resourceExhausted } from "../../libs/rpc/errors.js";
import { TaskFailed, TaskTimeoutError, WorkerDiedError, WorkerPool, workerUrl } from "../../libs/worker-pool/index.js";
import type { FeedColumns, ItemRow } from "./mapping/item-rows.js";
import { type PageDecodeLimits, type PageRowsTask, pageRows } from "./mapping/page-rows.js";
import type { PageRowsFailure } from "./mapping/page-rows-worker.js";
import { isRendered } from "./sql/multi-insert.js";

export interface PageDecoder {
  /** The rows of one page of entries; RESOURCE_EXHAUSTED when the page inflates past its cap. */
  rows(feed: FeedColumns, runId: string, entries: readonly LoteDfeEntry[]): Promise<ItemRow[]>;
  close(): Promise<void>;
}

export interface PageDecoderOptions {
  threads: number;
  limits: PageDecodeLimits;
  /**
   * V8 old-generation limit of each thread, MB. The young generation is kept at 16 MB at most: what a page
   * leaves behind is short-lived, and each thread's young generation is resident memory of the store.
   */
  threadHeapMb: number;
  /** A page that takes longer is a stuck thread: it is replaced and the call fails UNAVAILABLE. */
  timeoutMs: number;
  /** Times each page, its wait for a thread included (the store's metrics): called at the start, its result at the end. */
  pageTimer?: () => () => void;
  /**
   * Pages of at most this many entries are decoded on the event loop: for the one or two entries of an
   * incremental run, the hand-off to a thread and back costs more than the decode (decision 0054).
   */
  inlineEntries?: number;
}

/** The default of `inlineEntries`: a page of a run that found one or two new NSUs. */
export const INLINE_PAGE_ENTRIES = 2;

/** Bytes come back as plain Uint8Arrays (a written row's, a quarantine row's byte columns): handed on as Buffers, as pageRows makes them on the event loop. */
function asBuffers(rows: ItemRow[]): ItemRow[] {
  for (const row of rows) {
    const values = row.values;
    if (isRendered(values)) {
      values.bytes = asBuffer(values.bytes);
      continue;
    }
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (v instanceof Uint8Array) values[i] = asBuffer(v);
    }
  }
  return rows;
}

const asBuffer = (v: Uint8Array): Buffer => (Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength));

function tooLarge(nsu: string, limit: number): ConnectError {
  return resourceExhausted(
    `entries inflate to more than STORE_MAX_PAGE_XML_BYTES (${limit} bytes) at NSU ${nsu}; nothing of the page was written`,
  );
}

export function createPageDecoder(opts: PageDecoderOptions): PageDecoder {
  const pool = new WorkerPool<PageRowsTask, ItemRow[], PageRowsFailure>(
    workerUrl(import.meta.url, "./mapping/page-rows-worker"),
    opts.threads,
    opts.timeoutMs,
    { maxOldGenerationSizeMb: opts.threadHeapMb, maxYoungGenerationSizeMb: Math.min(16, Math.floor(opts.threadHeapMb / 4)) },
  );
  const inlineEntries = opts.inlineEntries ?? INLINE_PAGE_ENTRIES;
  return {
    async rows(feed, runId, entries) {
      const task: PageRowsTask = { feed, runId, entries: entries.map(fromLoteDfeEntry), limits: opts.limits };
      const done = opts.pageTimer?.();
      try {
        if (entries.length <= inlineEntries) return asBuffers(pageRows(task));
        return asBuffers(await pool.run(task));
      } catch (err) {
        if (err instanceof PageTooLargeError) throw tooLarge(err.nsu.toString(), err.limit);
        if (err instanceof TaskFailed) {
          const f = err.failure as PageRowsFailure;
          if ("tooLarge" in f) throw tooLarge(f.tooLarge.nsu, f.tooLarge.limit);
          // A bug: a plain Error, so the caller gets INTERNAL with the request id and the stack stays in our log.
          throw new Error(`decoding the page's entries failed in a decode thread: ${f.message}`);
        }
        if (err instanceof TaskTimeoutError || err instanceof WorkerDiedError) {
          // Nothing was written: the gateway's retry sends the page again.
          throw new ConnectError(`decoding the page's entries: ${err.message}`, Code.Unavailable);
        }
        throw err;
      } finally {
        done?.();
      }
    },
    close: () => pool.close(),
  };
}
