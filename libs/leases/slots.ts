// Spacing shared by every replica: a slot per key that at most one taker gets per period. A slot is a
// NATS KV key created with `create()` (fails if present) in a bucket whose max age is the period, so it
// vanishes by itself when the period is over; nobody renews or deletes it. Used to spread a budget of
// calls evenly (one ADN look-up per certificate every 3600/budget seconds) across coordinator replicas.
import type { KV } from "@nats-io/kv";
import type { NatsConnection } from "@nats-io/transport-node";
import { createOrOpenBucket } from "./bucket.js";
import { assertLeaseKey } from "./keys.js";
import { isWrongLastSequence } from "./nats-kv-leases.js";

export interface SlotOptions {
  /**
   * Bucket name prefix; the period (ms) is appended, so a changed period gets a bucket of its own
   * instead of an edit of a live bucket's config (the old one empties itself within its period).
   */
  bucketPrefix: string;
  periodMs: number;
  replicas?: number;
  holder: string;
}

export class KvSlots {
  private constructor(
    private readonly kv: KV,
    private readonly holder: string,
  ) {}

  static async open(nc: NatsConnection, opts: SlotOptions): Promise<KvSlots> {
    if (!(opts.periodMs >= 300)) throw new Error("slot period must be at least 300 ms");
    const bucket = `${opts.bucketPrefix}_${Math.round(opts.periodMs)}`;
    const replicas = opts.replicas ?? 1;
    let kv: KV;
    try {
      kv = await createOrOpenBucket(nc, bucket, { ttl: Math.round(opts.periodMs), history: 1, replicas });
    } catch (err) {
      throw new Error(`cannot open slot bucket ${bucket} with ${replicas} replica(s): ${(err as Error).message}`);
    }
    return new KvSlots(kv, opts.holder);
  }

  /** True for the one caller that takes `key` in this period; false while someone's slot is still there. */
  async take(key: string): Promise<boolean> {
    assertLeaseKey(key);
    try {
      await this.kv.create(key, new TextEncoder().encode(this.holder));
      return true;
    } catch (err) {
      if (isWrongLastSequence(err)) return false;
      throw err;
    }
  }
}
