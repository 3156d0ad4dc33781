// Which municipalities' upserts go as prepared statements (docs/decisions/0024-fleet-sized-defaults.md).
// Each municipality has its own two tables, so its own two statement texts, and any pooled connection may
// serve any municipality: once more municipalities write at once than a connection's statement cache
// holds, every connection prepares, evicts (COM_STMT_CLOSE) and prepares again. Instead a fixed set of
// municipalities, as many as the cache holds, use prepared statements and the others write as text, the
// fallback decision 0005 already has; a member idle for a while gives its place to the next one.

export class PreparedMunicipalities {
  private readonly lastUse = new Map<string, number>();

  constructor(
    /** Municipalities whose statements every connection can keep cached at once. */
    readonly capacity: number,
    /** A member not written to for this long gives its place up to the next municipality that asks. */
    private readonly idleMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** Whether `ibge`'s rows may go as prepared statements now; takes a place for it when one is free. */
  admit(ibge: string): boolean {
    const t = this.now();
    if (this.lastUse.has(ibge)) {
      this.lastUse.set(ibge, t);
      return true;
    }
    if (this.lastUse.size >= this.capacity) {
      // The set is small (the cache's size): a scan is cheaper than keeping it ordered.
      let oldest: string | undefined;
      let oldestAt = Number.POSITIVE_INFINITY;
      for (const [key, at] of this.lastUse) {
        if (at < oldestAt) {
          oldest = key;
          oldestAt = at;
        }
      }
      if (oldest === undefined || t - oldestAt < this.idleMs) return false;
      this.lastUse.delete(oldest);
    }
    this.lastUse.set(ibge, t);
    return true;
  }

  /** The municipalities holding a place now. */
  members(): string[] {
    return [...this.lastUse.keys()];
  }
}
