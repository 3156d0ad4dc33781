// The sending side of a stream as a queue: messages go out in the order they are pushed, as the stream
// takes them, and the iteration ends once the queue is closed and empty. The coordinator's DeliverFeeds
// requests and the gateway's responses are both written this way (decision 0044).
export class MessageQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private closed = false;
  private wake: (() => void) | undefined;

  /** Queues `message`; after close() it is dropped (the stream has ended its side). */
  push(message: T): void {
    if (this.closed) return;
    this.items.push(message);
    this.wake?.();
  }

  /** No more messages: the iteration ends after the ones queued. */
  close(): void {
    this.closed = true;
    this.wake?.();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<T> {
    for (;;) {
      if (this.items.length > 0) {
        yield this.items.shift()!;
        continue;
      }
      if (this.closed) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
      this.wake = undefined;
    }
  }
}
