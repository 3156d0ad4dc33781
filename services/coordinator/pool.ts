import { runDetached } from "../../libs/rpc/context.js";

/**
 * A bounded worker pool over a FIFO of keyed jobs. A key is either queued or running, never both and
 * never twice: the pool is how one coordinator avoids asking itself to sync a feed it is already
 * syncing (across replicas, the lease does that).
 */
export class WorkerPool<J extends { key: string }> {
  /** Queued jobs by key, in insertion order: FIFO with O(1) look-up and removal. */
  private readonly queue = new Map<string, J>();
  private readonly running = new Map<string, J>();
  private closed = false;
  private idleWaiters: (() => void)[] = [];

  constructor(
    readonly name: string,
    private concurrency: number,
    private readonly work: (job: J) => Promise<void>,
    private readonly onError: (job: J, err: unknown) => void = () => undefined,
  ) {
    if (!(concurrency >= 1)) throw new Error(`pool ${name}: concurrency must be at least 1`);
  }

  /** False when the key is already queued or running here, or the pool is closed. */
  enqueue(job: J): boolean {
    if (this.closed || this.has(job.key)) return false;
    this.queue.set(job.key, job);
    this.pump();
    return true;
  }

  has(key: string): boolean {
    return this.running.has(key) || this.queue.has(key);
  }

  /** The jobs waiting for a worker, in FIFO order. */
  queued(): J[] {
    return [...this.queue.values()];
  }

  isRunning(key: string): boolean {
    return this.running.has(key);
  }

  /** Removes a job that has not started yet. */
  dequeue(key: string): boolean {
    return this.queue.delete(key);
  }

  setConcurrency(n: number): void {
    if (!(n >= 1)) throw new Error(`pool ${this.name}: concurrency must be at least 1`);
    this.concurrency = n;
    this.pump();
  }

  get size(): { queued: number; running: number } {
    return { queued: this.queue.size, running: this.running.size };
  }

  /** Resolves when nothing is queued or running. */
  idle(): Promise<void> {
    if (this.queue.size === 0 && this.running.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** Stops taking jobs, drops the queue and waits for the running ones. */
  async close(): Promise<void> {
    this.closed = true;
    this.queue.clear();
    await this.idle();
  }

  private pump(): void {
    while (this.running.size < this.concurrency && this.queue.size > 0) {
      const [key, job] = this.queue.entries().next().value as [string, J];
      this.queue.delete(key);
      this.running.set(job.key, job);
      // Started from an RPC (SyncNow) or a timer alike: the job must not inherit the RPC's cancellation.
      void runDetached(() => this.work(job))
        .catch((err: unknown) => this.onError(job, err))
        .finally(() => {
          this.running.delete(job.key);
          this.pump();
          if (this.queue.size === 0 && this.running.size === 0) {
            const waiters = this.idleWaiters;
            this.idleWaiters = [];
            for (const w of waiters) w();
          }
        });
    }
  }
}
