// Notes from the store, drawn in worker threads: the one path both GetDanfse (one note, GetDocument) and
// the exports (many notes, one BatchGetDocuments per batch) take.
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { DanfseInput } from "../../libs/danfse/index.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { DocumentRecord, EventRecord } from "../../libs/gen/malha/store/v1/types_pb.js";
import { TaskFailed, TaskTimeoutError, WorkerDiedError, WorkerPool, workerUrl } from "../../libs/worker-pool/index.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { documentNotFound, fromStore, notRenderable } from "./errors.js";
import type { DanfseMetrics } from "./metrics.js";
import type { DanfseRefusal } from "./render-worker.js";

/** One note of a batch: its PDF, or the refusal that belongs to that note alone. */
export type NoteOutcome = { chave: string; pdf: Uint8Array } | { chave: string; error: ConnectError };

export interface Renderer {
  /** The PDF of (ibge, chave), or a ConnectError: NOT_FOUND, FAILED_PRECONDITION NOT_RENDERABLE, UNAVAILABLE… */
  render(ibge: string, chave: string, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * The notes of one municipality (at most MAX_BATCH), read in one store call and drawn on the threads, in
   * the order asked. A note the store lacks or the engine refuses is that note's outcome; trouble with the
   * store or the threads (UNAVAILABLE, a dead or stuck thread) rejects the whole batch.
   */
  renderMany(ibge: string, chaves: readonly string[], signal?: AbortSignal): Promise<NoteOutcome[]>;
  close(): Promise<void>;
}

/** Refusals that belong to one note (not stored, not renderable, its drawing stuck); the rest stop a batch. */
const NOTE_CODES = new Set([Code.NotFound, Code.FailedPrecondition, Code.DeadlineExceeded]);

/** The store's BatchGetDocuments limit. */
export const MAX_BATCH = 100;

const outcomeOf = (err: unknown): string => {
  if (!(err instanceof ConnectError)) return "other";
  if (err.code === Code.NotFound) return "not_found";
  return err.findDetails(ErrorInfoSchema)[0]?.reason === "NOT_RENDERABLE" ? "not_renderable" : "other";
};

/**
 * The note and its events in buffers of their own, moved to the drawing thread rather than copied: a
 * decoded field is a view into the whole store answer (a batch of notes), and posting a view clones the
 * buffer under it entire.
 */
function inputOf(chave: string, document: DocumentRecord | undefined, events: readonly EventRecord[]): DanfseInput {
  const xml = document?.xml;
  if (!xml || xml.length === 0) throw notRenderable(chave, "xml", "is not stored");
  return { xml: new Uint8Array(xml), events: events.map((e) => ({ tipo: e.event?.codigo ?? "", xml: new Uint8Array(e.xml) })) };
}

const buffersOf = (input: DanfseInput): ArrayBuffer[] => [input.xml, ...input.events.map((e) => e.xml)].map((b) => b.buffer as ArrayBuffer);

export function createRenderer(p: {
  store: Client<typeof StoreService>;
  threads: number;
  timeoutMs: number;
  /** V8 heap limits of each render thread (decision 0019). */
  threadHeap?: { youngMb: number; oldMb: number };
  metrics?: DanfseMetrics;
}): Renderer {
  const pool = new WorkerPool<DanfseInput, Uint8Array, DanfseRefusal>(
    workerUrl(import.meta.url, "./render-worker"),
    p.threads,
    p.timeoutMs,
    p.threadHeap ? { maxYoungGenerationSizeMb: p.threadHeap.youngMb, maxOldGenerationSizeMb: p.threadHeap.oldMb } : undefined,
  );

  async function draw(chave: string, input: DanfseInput): Promise<Uint8Array> {
    try {
      return await pool.run(input, buffersOf(input));
    } catch (err) {
      if (err instanceof TaskFailed) {
        const f = err.failure as DanfseRefusal;
        if (f.field !== undefined) throw notRenderable(chave, f.field, f.reason);
        throw new ConnectError(`the DANFSe renderer failed on note ${chave}: ${f.reason}`, Code.Internal);
      }
      if (err instanceof TaskTimeoutError) throw new ConnectError(`rendering note ${chave} ${err.message}`, Code.DeadlineExceeded);
      if (err instanceof WorkerDiedError) throw new ConnectError(`rendering note ${chave}: ${err.message}`, Code.Unavailable);
      throw err;
    }
  }

  /** Counts each note's outcome and times it (from the store read to the PDF). */
  async function measured<T>(fn: () => Promise<T>): Promise<T> {
    const stop = p.metrics?.renderSeconds.startTimer();
    try {
      const value = await fn();
      p.metrics?.notes.inc({ outcome: "ok" });
      return value;
    } catch (err) {
      p.metrics?.notes.inc({ outcome: outcomeOf(err) });
      throw err;
    } finally {
      stop?.();
    }
  }

  async function render(ibge: string, chave: string, signal?: AbortSignal): Promise<Uint8Array> {
    return measured(async () => {
      let input: DanfseInput;
      try {
        const res = await p.store.getDocument({ ibge, chave, includeXml: true }, signal ? { signal } : {});
        input = inputOf(chave, res.document, res.events);
      } catch (err) {
        throw fromStore(err, ibge, chave);
      }
      return draw(chave, input);
    });
  }

  async function renderMany(ibge: string, chaves: readonly string[], signal?: AbortSignal): Promise<NoteOutcome[]> {
    if (chaves.length > MAX_BATCH) throw new RangeError(`at most ${MAX_BATCH} notes per batch, got ${chaves.length}`);
    let results;
    try {
      ({ results } = await p.store.batchGetDocuments({ ibge, chaves: [...chaves], includeXml: true }, signal ? { signal } : {}));
    } catch (err) {
      throw fromStore(err, ibge);
    }
    return Promise.all(
      results.map(async ({ chave, document, events }): Promise<NoteOutcome> => {
        try {
          const pdf = await measured(async () => {
            if (!document) throw documentNotFound(ibge, chave);
            return draw(chave, inputOf(chave, document, events));
          });
          return { chave, pdf };
        } catch (err) {
          if (err instanceof ConnectError && NOTE_CODES.has(err.code)) return { chave, error: err };
          throw err;
        }
      }),
    );
  }

  return { render, renderMany, close: () => pool.close() };
}
