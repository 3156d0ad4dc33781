// Group commit for directory fsyncs. A rename is durable once its directory has been fsynced by a sync
// that STARTED after the rename; concurrent publishes into one directory can therefore share a single
// sync: whoever arrives while one runs waits for the next one, which all late arrivals share.

export class DirSyncer {
  private readonly running = new Map<string, Promise<void>>();
  private readonly next = new Map<string, Promise<void>>();

  constructor(private readonly fsync: (dir: string) => Promise<void>) {}

  /** Resolves after an fsync of `dir` that started after this call. */
  sync(dir: string): Promise<void> {
    const queued = this.next.get(dir);
    if (queued) return queued;
    const current = this.running.get(dir);
    if (!current) return this.start(dir);
    const after = current.then(
      () => this.start(dir),
      () => this.start(dir),
    );
    this.next.set(dir, after);
    return after;
  }

  private start(dir: string): Promise<void> {
    this.next.delete(dir);
    const run: Promise<void> = this.fsync(dir).finally(() => {
      if (this.running.get(dir) === run) this.running.delete(dir);
    });
    this.running.set(dir, run);
    return run;
  }
}
