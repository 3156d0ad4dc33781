// The boleto PDFs' thread pool (libs/worker-pool) with billing's errors: a refusal from libs/cobranca
// is deterministic (not worth retrying), a thread that died or timed out is not.
// Why threads: docs/decisions/0010-pdf-rendering-in-worker-threads.md.
import type { FichaInput } from "../../../libs/cobranca/index.js";
import { TaskFailed, TaskTimeoutError, WorkerDiedError, WorkerPool, workerUrl } from "../../../libs/worker-pool/index.js";
import type { RenderRefusal } from "./render-worker.js";

export class RenderTimeoutError extends Error {
  override name = "RenderTimeoutError";
}

export class RenderFailure extends Error {
  override name = "RenderFailure";
  constructor(
    readonly code: string,
    readonly field: string,
    message: string,
    /** A deterministic refusal of the input (not worth retrying). */
    readonly deterministic: boolean,
  ) {
    super(message);
  }
}

export class RenderPool {
  private readonly pool: WorkerPool<FichaInput, Uint8Array, RenderRefusal>;

  constructor(threads: number, timeoutMs: number) {
    this.pool = new WorkerPool(workerUrl(import.meta.url, "./render-worker"), threads, timeoutMs);
  }

  async render(ficha: FichaInput): Promise<Uint8Array> {
    try {
      return await this.pool.run(ficha);
    } catch (err) {
      if (err instanceof TaskTimeoutError) throw new RenderTimeoutError(`render exceeded ${err.message.replace(/^task exceeded /, "")}`);
      if (err instanceof TaskFailed) {
        const f = err.failure as RenderRefusal;
        throw new RenderFailure(f.code, f.field, f.message, f.cobranca);
      }
      if (err instanceof WorkerDiedError) throw new RenderFailure("PDF_FALHOU", "", `render thread died: ${err.message}`, false);
      throw err;
    }
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
