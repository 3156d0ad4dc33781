// Coalesces single requests that arrive close together into one batched call, and hands each caller
// its own answer (docs/decisions/0036-batched-run-begin-and-finish.md). A batch goes out when it is full
// (`maxSize`), when its first entry has waited `maxDelayMs`, and at most `maxInFlight` batches are out at
// once: while they are, new entries wait and the next batch grows, so under load the batches grow by
// themselves and when idle an entry waits at most `maxDelayMs`. Each entry is answered exactly once:
// with its own result or error from the batch, the batch call's error if the whole call failed, or its
// abort reason if its signal aborted first.

/** One entry's answer from the batch call, in the order the entries were given. */
export type BatchAnswer<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface MicroBatcherOptions<I, O> {
  /** Sends one batch; must answer every entry, in order. */
  send: (entries: I[]) => Promise<BatchAnswer<O>[]>;
  /** Most entries per batch (≥ 1). */
  maxSize: number;
  /** Longest an entry waits for others before its batch goes out (≥ 0). */
  maxDelayMs: number;
  /** Most batches out at once (≥ 1; default 1). */
  maxInFlight?: number;
}

interface Waiting<I, O> {
  entry: I;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
  signal: AbortSignal | undefined;
  onAbort: (() => void) | undefined;
  settled: boolean;
}

export class BatcherClosedError extends Error {
  constructor() {
    super("the batcher is closed");
    this.name = "BatcherClosedError";
  }
}

export class MicroBatcher<I, O> {
  private pending: Waiting<I, O>[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight = 0;
  private due = false;
  private closed = false;
  private readonly idle = new Set<() => void>();
  private readonly maxInFlight: number;

  constructor(private readonly opts: MicroBatcherOptions<I, O>) {
    if (!(opts.maxSize >= 1) || !(opts.maxDelayMs >= 0)) throw new RangeError("maxSize must be ≥ 1 and maxDelayMs ≥ 0");
    this.maxInFlight = opts.maxInFlight ?? 1;
    if (!(this.maxInFlight >= 1)) throw new RangeError("maxInFlight must be ≥ 1");
  }

  /** Queues one entry; resolves with its answer. Refused (BatcherClosedError) once close() was called. */
  submit(entry: I, signal?: AbortSignal): Promise<O> {
    if (this.closed) return Promise.reject(new BatcherClosedError());
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<O>((resolve, reject) => {
      const w: Waiting<I, O> = { entry, resolve, reject, signal, onAbort: undefined, settled: false };
      if (signal) {
        w.onAbort = () => {
          // Still queued: it leaves the queue. Already sent: its answer will be dropped.
          const at = this.pending.indexOf(w);
          if (at >= 0) this.pending.splice(at, 1);
          this.settle(w, { ok: false, error: signal.reason });
        };
        signal.addEventListener("abort", w.onAbort, { once: true });
      }
      this.pending.push(w);
      if (this.pending.length >= this.opts.maxSize) this.flush();
      else this.timer ??= setTimeout(() => this.onTimer(), this.opts.maxDelayMs);
    });
  }

  /** Refuses new entries, sends what is queued and waits until every batch is answered. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.pending.length > 0 || this.inFlight > 0) {
      this.due = true;
      this.flush();
      await new Promise<void>((resolve) => this.idle.add(resolve));
    }
  }

  private onTimer(): void {
    this.timer = undefined;
    this.due = true;
    this.flush();
  }

  private flush(): void {
    while (this.pending.length > 0 && this.inFlight < this.maxInFlight && (this.due || this.pending.length >= this.opts.maxSize)) {
      const batch = this.pending.splice(0, this.opts.maxSize);
      this.due = false;
      this.inFlight++;
      void this.send(batch);
    }
    if (this.pending.length === 0) {
      clearTimeout(this.timer);
      this.timer = undefined;
      this.due = false;
    } else if (!this.due) this.timer ??= setTimeout(() => this.onTimer(), this.opts.maxDelayMs);
  }

  private async send(batch: Waiting<I, O>[]): Promise<void> {
    try {
      const answers = await this.opts.send(batch.map((w) => w.entry));
      if (answers.length !== batch.length) {
        const err = new Error(`the batch call answered ${answers.length} of ${batch.length} entries`);
        for (const w of batch) this.settle(w, { ok: false, error: err });
      } else batch.forEach((w, i) => this.settle(w, answers[i]!));
    } catch (err) {
      for (const w of batch) this.settle(w, { ok: false, error: err });
    } finally {
      this.inFlight--;
      this.flush();
      // close() looks again at what is left.
      for (const resolve of this.idle) resolve();
      this.idle.clear();
    }
  }

  private settle(w: Waiting<I, O>, answer: BatchAnswer<O>): void {
    if (w.settled) return;
    w.settled = true;
    if (w.onAbort) w.signal?.removeEventListener("abort", w.onAbort);
    if (answer.ok) w.resolve(answer.value);
    else w.reject(answer.error);
  }
}
