// A note from the store, drawn in a worker thread: the one path both GetDanfse and the exports take.
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import type { DanfseInput } from "../../libs/danfse/index.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { TaskFailed, TaskTimeoutError, WorkerDiedError, WorkerPool, workerUrl } from "../../libs/worker-pool/index.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { fromStore, notRenderable } from "./errors.js";
import type { DanfseMetrics } from "./metrics.js";
import type { DanfseRefusal } from "./render-worker.js";

export interface Renderer {
  /** The PDF of (ibge, chave), or a ConnectError: NOT_FOUND, FAILED_PRECONDITION NOT_RENDERABLE, UNAVAILABLE… */
  render(ibge: string, chave: string, signal?: AbortSignal): Promise<Uint8Array>;
  close(): Promise<void>;
}

const outcomeOf = (err: unknown): string => {
  if (!(err instanceof ConnectError)) return "other";
  if (err.code === Code.NotFound) return "not_found";
  return err.findDetails(ErrorInfoSchema)[0]?.reason === "NOT_RENDERABLE" ? "not_renderable" : "other";
};

export function createRenderer(p: {
  store: Client<typeof StoreService>;
  threads: number;
  timeoutMs: number;
  metrics?: DanfseMetrics;
}): Renderer {
  const pool = new WorkerPool<DanfseInput, Uint8Array, DanfseRefusal>(
    workerUrl(import.meta.url, "./render-worker"),
    p.threads,
    p.timeoutMs,
  );

  async function render(ibge: string, chave: string, signal?: AbortSignal): Promise<Uint8Array> {
    let input: DanfseInput;
    try {
      const res = await p.store.getDocument({ ibge, chave, includeXml: true }, signal ? { signal } : {});
      const xml = res.document?.xml;
      if (!xml || xml.length === 0) throw notRenderable(chave, "xml", "is not stored");
      input = { xml, events: res.events.map((e) => ({ tipo: e.event?.codigo ?? "", xml: e.xml })) };
    } catch (err) {
      throw fromStore(err, ibge, chave);
    }
    try {
      return await pool.run(input);
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

  return {
    async render(ibge, chave, signal) {
      const stop = p.metrics?.renderSeconds.startTimer();
      try {
        const pdf = await render(ibge, chave, signal);
        p.metrics?.notes.inc({ outcome: "ok" });
        return pdf;
      } catch (err) {
        p.metrics?.notes.inc({ outcome: outcomeOf(err) });
        throw err;
      } finally {
        stop?.();
      }
    },
    close: () => pool.close(),
  };
}
