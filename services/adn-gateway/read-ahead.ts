// A bounded read-ahead over an async source: a background reader keeps up to `limit` values the consumer
// has not taken yet, so the source's work (the next ADN call, decoding) overlaps the consumer's (the
// store's transaction); past the limit it stops pulling, and the source waits where it yields.

export class ReadAhead<T> {
  private readonly values: T[] = [];
  private failure: { error: unknown } | undefined;
  private ended = false;
  private wakeReader: (() => void) | undefined;
  private wakeTaker: (() => void) | undefined;

  constructor(
    source: AsyncIterator<T>,
    private readonly limit: number,
  ) {
    void this.read(source);
  }

  /** The next value; undefined once the source ended and every value was taken; the source's error after the values before it. */
  async next(): Promise<T | undefined> {
    for (;;) {
      const value = this.values.shift();
      if (value !== undefined) {
        this.wakeReader?.();
        return value;
      }
      if (this.failure) throw this.failure.error;
      if (this.ended) return undefined;
      await new Promise<void>((resolve) => (this.wakeTaker = resolve));
    }
  }

  private async read(source: AsyncIterator<T>): Promise<void> {
    try {
      for (;;) {
        while (this.values.length >= this.limit) await new Promise<void>((resolve) => (this.wakeReader = resolve));
        const r = await source.next();
        if (r.done) break;
        this.values.push(r.value);
        this.wakeTaker?.();
      }
    } catch (error) {
      this.failure = { error };
    } finally {
      this.ended = true;
      this.wakeTaker?.();
    }
  }
}
