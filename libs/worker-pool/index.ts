// A fixed pool of worker threads running one kind of CPU-bound task (PDF rendering), so the event loop
// that serves RPCs and heartbeats is never blocked by it. The worker module is `<name>.js` once compiled
// (dist/) and `<name>.ts` from source: a .ts worker starts from a tiny bootstrap that registers tsx's
// loader inside the thread first, because loader flags in a Worker's execArgv are not honoured on Node 20
// and the parent may run under another transformer (vitest).
// Why threads: docs/decisions/0010-pdf-rendering-in-worker-threads.md.
import { createRequire } from "node:module";
import { availableParallelism } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import { parentPort, type ResourceLimits, Worker, type Transferable } from "node:worker_threads";

/**
 * One thread per CPU, at most `max`: each thread holds its own heap and engine, and
 * availableParallelism() counts the host's CPUs, not a container's quota (docs/decisions/0010-…).
 */
export const threadsPerCpu = (max = 4): number => Math.max(1, Math.min(availableParallelism(), max));

/** The task ran longer than the pool's timeout; its thread was replaced (a stuck task cannot be interrupted). */
export class TaskTimeoutError extends Error {
  override name = "TaskTimeoutError";
}

/** The task's function threw; `failure` is what the worker's `describe` made of the error. */
export class TaskFailed<F> extends Error {
  override name = "TaskFailed";
  constructor(readonly failure: F) {
    super("task failed in its worker thread");
  }
}

/** The thread running the task died (uncaught error, out of memory); it was replaced. */
export class WorkerDiedError extends Error {
  override name = "WorkerDiedError";
}

type Reply<O, F> = { id: number; ok: true; value: O } | { id: number; ok: false; failure: F };

/**
 * The worker module beside the caller: `workerUrl(import.meta.url, "./render-worker")` is render-worker.ts
 * when the caller runs from source and render-worker.js when compiled.
 */
export function workerUrl(callerUrl: string, relative: string): URL {
  return new URL(`${relative}${callerUrl.endsWith(".ts") ? ".ts" : ".js"}`, callerUrl);
}

function spawnWorker(url: URL, resourceLimits: ResourceLimits | undefined): Worker {
  const limits = resourceLimits ? { resourceLimits } : {};
  if (!url.pathname.endsWith(".ts")) return new Worker(url, limits);
  // The ESM entry of tsx's API (require.resolve would pick its CommonJS one).
  const tsxDir = dirname(createRequire(import.meta.url).resolve("tsx/package.json"));
  const tsx = pathToFileURL(join(tsxDir, "dist/esm/api/index.mjs")).href;
  const bootstrap = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url.href)}); })`;
  return new Worker(bootstrap, { eval: true, ...limits });
}

interface Slot {
  worker: Worker;
  busy: boolean;
}

interface Pending<O> {
  resolve: (value: O) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  slot: Slot;
}

export class WorkerPool<I, O, F> {
  private readonly slots: Slot[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly pending = new Map<number, Pending<O>>();
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly module: URL,
    threads: number,
    private readonly timeoutMs: number,
    /**
     * V8 heap limits of each thread. Without them a thread's heap grows to V8's defaults for the whole
     * machine, and a few busy threads hold far more memory than their live data; a task that needs more than
     * the limit kills its thread (WorkerDiedError), which is then replaced.
     */
    private readonly resourceLimits?: ResourceLimits,
  ) {
    for (let i = 0; i < threads; i++) this.slots.push(this.spawn());
  }

  get threads(): number {
    return this.slots.length;
  }

  private spawn(): Slot {
    const slot: Slot = { worker: spawnWorker(this.module, this.resourceLimits), busy: false };
    slot.worker.on("message", (reply: Reply<O, F>) => this.settle(reply));
    slot.worker.on("error", (err) => this.failSlot(slot, err));
    slot.worker.unref();
    return slot;
  }

  private settle(reply: Reply<O, F>): void {
    const p = this.pending.get(reply.id);
    if (!p) return;
    this.pending.delete(reply.id);
    clearTimeout(p.timer);
    this.release(p.slot);
    if (reply.ok) p.resolve(reply.value);
    else p.reject(new TaskFailed(reply.failure));
  }

  private failSlot(slot: Slot, err: Error): void {
    for (const [id, p] of this.pending) {
      if (p.slot !== slot) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.reject(new WorkerDiedError(`worker thread died: ${err.message}`));
    }
    this.replace(slot);
  }

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
      if (this.closed) throw new Error("worker pool closed");
      const free = this.slots.find((s) => !s.busy);
      if (free) {
        free.busy = true;
        return free;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  /** Runs one task on the next free thread; `transfer` moves buffers of `input` instead of copying them. */
  async run(input: I, transfer: readonly Transferable[] = []): Promise<O> {
    const slot = await this.acquire();
    const id = this.nextId++;
    return new Promise<O>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new TaskTimeoutError(`task exceeded ${this.timeoutMs} ms`));
        this.replace(slot);
      }, this.timeoutMs);
      this.pending.set(id, { resolve, reject, timer, slot });
      slot.worker.postMessage({ id, input }, transfer as Transferable[]);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const w of this.waiting.splice(0)) w();
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/**
 * The worker side: answers each task with `task(input)`, moving the buffers `transferOf` names, or with
 * `describe(error)` (a plain, cloneable object) when it throws.
 */
export function serveTasks<I, O, F>(
  task: (input: I) => O | Promise<O>,
  describe: (err: unknown) => F,
  transferOf: (value: O) => Transferable[] = () => [],
): void {
  parentPort?.on("message", ({ id, input }: { id: number; input: I }) => {
    Promise.resolve()
      .then(() => task(input))
      .then(
        (value) => parentPort!.postMessage({ id, ok: true, value } satisfies Reply<O, F>, transferOf(value)),
        (err: unknown) => parentPort!.postMessage({ id, ok: false, failure: describe(err) } satisfies Reply<O, F>),
      );
  });
}
