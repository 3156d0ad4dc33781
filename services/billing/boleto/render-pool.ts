// A fixed pool of worker threads rendering PDFs. The worker file is render-worker.js once compiled
// (dist/) and render-worker.ts from source: a .ts worker starts from a tiny bootstrap that registers
// tsx's loader inside the thread first, because loader flags in a Worker's execArgv are not honoured
// on Node 20 and the parent may run under another transformer (vitest).
// Why threads: docs/decisions/0010-pdf-rendering-in-worker-threads.md.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import type { FichaInput } from "../../../libs/cobranca/index.js";
import type { RenderReply } from "./render-worker.js";

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

interface Slot {
  worker: Worker;
  busy: boolean;
}

interface Pending {
  resolve: (pdf: Uint8Array) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  slot: Slot;
}

function newRenderWorker(): Worker {
  if (!import.meta.url.endsWith(".ts")) return new Worker(new URL("./render-worker.js", import.meta.url));
  // The ESM entry of tsx's API (require.resolve would pick its CommonJS one).
  const tsxDir = dirname(createRequire(import.meta.url).resolve("tsx/package.json"));
  const tsx = pathToFileURL(join(tsxDir, "dist/esm/api/index.mjs")).href;
  const worker = new URL("./render-worker.ts", import.meta.url).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(worker)}); })`;
  return new Worker(bootstrap, { eval: true });
}

export class RenderPool {
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;
  private closed = false;

  constructor(
    threads: number,
    private readonly timeoutMs: number,
  ) {
    for (let i = 0; i < threads; i++) this.slots.push(this.spawn());
  }

  private spawn(): Slot {
    const slot: Slot = { worker: newRenderWorker(), busy: false };
    slot.worker.on("message", (reply: RenderReply) => this.settle(reply));
    slot.worker.on("error", (err) => this.failSlot(slot, err));
    slot.worker.unref();
    return slot;
  }

  private settle(reply: RenderReply): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    clearTimeout(p.timer);
    this.release(p.slot);
    if (reply.ok) p.resolve(reply.pdf);
    else p.reject(new RenderFailure(reply.code, reply.field, reply.message, reply.cobranca));
  }

  private failSlot(slot: Slot, err: Error): void {
    for (const [id, p] of this.pending) {
      if (p.slot !== slot) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new RenderFailure("PDF_FALHOU", "", `render thread died: ${err.message}`, false));
    }
    this.replace(slot);
  }

  /** A stuck render cannot be interrupted inside its thread: the thread is replaced. */
  private replace(slot: Slot): void {
    void slot.worker.terminate();
    const i = this.slots.indexOf(slot);
    if (i >= 0 && !this.closed) {
      this.slots[i] = this.spawn();
      this.release(this.slots[i]!);
    }
  }

  private release(slot: Slot): void {
    slot.busy = false;
    this.waiting.shift()?.();
  }

  private async acquire(): Promise<Slot> {
    for (;;) {
      if (this.closed) throw new Error("render pool closed");
      const free = this.slots.find((s) => !s.busy);
      if (free) {
        free.busy = true;
        return free;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  async render(ficha: FichaInput): Promise<Uint8Array> {
    const slot = await this.acquire();
    const id = this.nextId++;
    return new Promise<Uint8Array>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new RenderTimeoutError(`render exceeded ${this.timeoutMs} ms`));
        this.replace(slot);
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer, slot });
      slot.worker.postMessage({ id, ficha });
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}
