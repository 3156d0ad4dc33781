// Memory of 429s per certificate — per (municipality, ambiente), since one e-CNPJ serves every feed of
// the municipality there. While a cool-down runs the gateway answers RESOURCE_EXHAUSTED without calling
// the ADN: calling during a block is what prolongs it. Lost on restart by design: the store persists the
// caller's `cooldown_until`.

export interface Cooldown {
  until: number;
  observedAt: number;
}

export class Cooldowns {
  private readonly active = new Map<string, Cooldown>();

  constructor(private readonly durationMs: number) {}

  /** The cool-down still running for this key at `now`, if any. */
  current(key: string, now: number): Cooldown | undefined {
    const c = this.active.get(key);
    if (c && c.until > now) return c;
    if (c) this.active.delete(key);
    return undefined;
  }

  record(key: string, now: number): Cooldown {
    const c = { observedAt: now, until: now + this.durationMs };
    this.active.set(key, c);
    return c;
  }
}
