// Natural batching of small artifact puts: the first put goes out at once; puts that arrive while a
// call is in flight wait and leave together in the next call, so no put ever waits on a timer and a
// busy worker makes one round trip for several PDFs. When a batch call fails, its puts are retried one
// by one, so each caller gets its own artifact's answer (a refusal of one never fails the others).

/** Blobs up to this size are batched; larger ones stream on their own. */
export const BATCHABLE_BYTES = 1024 * 1024;
/** The artifacts service accepts up to 100 artifacts and 16 MiB per PutArtifacts call. */
export const MAX_BATCH_ITEMS = 100;
export const MAX_BATCH_BYTES = 8 * 1024 * 1024;

interface Waiting<I, O> {
  input: I;
  bytes: number;
  resolve: (out: O) => void;
  reject: (err: unknown) => void;
}

export class PutBatcher<I extends { data: Uint8Array }, O> {
  private queue: Waiting<I, O>[] = [];
  private sending = false;

  constructor(
    private readonly sendMany: (batch: readonly I[]) => Promise<O[]>,
    private readonly sendOne: (input: I) => Promise<O>,
    private readonly limits = { items: MAX_BATCH_ITEMS, bytes: MAX_BATCH_BYTES },
  ) {}

  put(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, bytes: input.data.byteLength, resolve, reject });
      void this.pump();
    });
  }

  private async pump(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      while (this.queue.length > 0) await this.send(this.take());
    } finally {
      this.sending = false;
    }
  }

  private take(): Waiting<I, O>[] {
    let bytes = 0;
    let n = 0;
    while (n < this.queue.length && n < this.limits.items && (n === 0 || bytes + this.queue[n]!.bytes <= this.limits.bytes)) {
      bytes += this.queue[n]!.bytes;
      n++;
    }
    return this.queue.splice(0, n);
  }

  private async send(batch: Waiting<I, O>[]): Promise<void> {
    if (batch.length === 1) return settle(batch[0]!, this.sendOne(batch[0]!.input));
    let outs: O[];
    try {
      outs = await this.sendMany(batch.map((w) => w.input));
    } catch {
      await Promise.all(batch.map((w) => settle(w, this.sendOne(w.input))));
      return;
    }
    batch.forEach((w, i) => w.resolve(outs[i]!));
  }
}

async function settle<O>(w: Waiting<unknown, O>, work: Promise<O>): Promise<void> {
  try {
    w.resolve(await work);
  } catch (err) {
    w.reject(err);
  }
}
