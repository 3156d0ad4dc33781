import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import type { NatsConnection } from "@nats-io/transport-node";
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import type { KV } from "@nats-io/kv";
import { createOrOpenBucket } from "./bucket.js";
import { assertLeaseKey } from "./keys.js";
import { LeaseLostError, type Lease, type LeaseHolderInfo, type LeaseManager } from "./types.js";

export interface KvLeaseOptions {
  /** A bucket used for leases only: every key in it expires after `ttlMs`. */
  bucket: string;
  /** Lease length: the bucket's max age. NATS 2.9 has no per-key TTL. */
  ttlMs: number;
  /** JetStream replicas of the bucket when this creates it (default 1; 3 on a 3-node cluster). */
  replicas?: number;
  /** Who we are, as other replicas will see it; defaults to host, pid and a random suffix. */
  holder?: string;
  /** Renew period (default ttl/3). */
  renewEveryMs?: number;
  /** Stop this long before the lease could expire on the server (default max(10% of ttl, 100 ms)). */
  safetyMarginMs?: number;
  onRenewError?: (key: string, err: unknown) => void;
}

const WRONG_LAST_SEQUENCE = 10071;
/** Creates of one key before it counts as held although no holder shows (a delete marker ageing out meanwhile). */
const ACQUIRE_ATTEMPTS = 3;
/** KV gets in flight at once while reading every held lease. */
const HOLDERS_READ_BATCH = 64;

export function isWrongLastSequence(err: unknown): boolean {
  const e = err as { code?: unknown; api_error?: { err_code?: number }; message?: string } | null;
  return (
    e?.api_error?.err_code === WRONG_LAST_SEQUENCE ||
    e?.code === WRONG_LAST_SEQUENCE ||
    /wrong last sequence/i.test(String(e?.message ?? ""))
  );
}

export function defaultHolderId(): string {
  return `${hostname()}-${process.pid}-${randomBytes(3).toString("hex")}`;
}

/**
 * Leases on a NATS JetStream KV bucket (docs/domain/toolchain.md §2.1; fencing on top of them:
 * docs/decisions/0008-fencing-in-mysql.md): acquire = create (fails if the key exists),
 * renew = update with the last revision, release = delete with the last revision. A dead holder's key
 * disappears when the bucket's max age passes. The holder keeps its own deadline on the monotonic
 * clock, measured from the moment it *sent* its last successful write, so it gives up before the
 * server can let anyone else in — even if its process was paused or the server is unreachable.
 */
export class KvLeaseManager implements LeaseManager {
  private readonly leases = new Set<KvLease>();

  private constructor(
    private readonly kv: KV,
    private readonly jsm: JetStreamManager,
    private readonly opts: Required<Omit<KvLeaseOptions, "onRenewError">> & Pick<KvLeaseOptions, "onRenewError">,
  ) {}

  static async open(nc: NatsConnection, opts: KvLeaseOptions): Promise<KvLeaseManager> {
    if (!(opts.ttlMs >= 300)) throw new Error("lease ttl must be at least 300 ms");
    const replicas = opts.replicas ?? 1;
    let kv: KV;
    try {
      kv = await createOrOpenBucket(nc, opts.bucket, { ttl: opts.ttlMs, history: 1, replicas });
    } catch (err) {
      throw new Error(`cannot open lease bucket ${opts.bucket} with ${replicas} replica(s): ${(err as Error).message}`);
    }
    const status = await kv.status();
    // Never edit a bucket's config live (nats-server#6920): a mismatch is an operator decision.
    if (status.ttl !== opts.ttlMs) {
      throw new Error(`lease bucket ${opts.bucket} has ttl ${status.ttl} ms, configured ${opts.ttlMs} ms`);
    }
    if (status.replicas !== replicas) {
      throw new Error(
        `lease bucket ${opts.bucket} has ${status.replicas} replica(s), configured ${replicas} (NATS_REPLICAS); change one of them`,
      );
    }
    const ttl = opts.ttlMs;
    return new KvLeaseManager(kv, await jetstreamManager(nc), {
      bucket: opts.bucket,
      ttlMs: ttl,
      replicas,
      holder: opts.holder ?? defaultHolderId(),
      renewEveryMs: opts.renewEveryMs ?? Math.floor(ttl / 3),
      safetyMarginMs: opts.safetyMarginMs ?? Math.max(Math.floor(ttl / 10), 100),
      onRenewError: opts.onRenewError,
    });
  }

  get holder(): string {
    return this.opts.holder;
  }

  async tryAcquire(key: string): Promise<Lease | null> {
    assertLeaseKey(key);
    const value = new TextEncoder().encode(this.opts.holder);
    for (let attempt = 1; ; attempt++) {
      const sentAt = performance.now();
      try {
        const revision = await this.kv.create(key, value);
        const lease = new KvLease(this.kv, key, revision, sentAt, this.opts, () => this.leases.delete(lease));
        this.leases.add(lease);
        return lease;
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
      // "Wrong last sequence" also answers a create whose key held a released lease's delete marker that
      // aged out between create's write and its read of the marker (nats.js KV create): nobody holds the
      // key then, and calling it held would leave the feed to a later sweep (decision 0039).
      if (attempt >= ACQUIRE_ATTEMPTS) return null;
      const entry = await this.kv.get(key);
      if (entry?.operation === "PUT") return null;
    }
  }

  async holderOf(key: string): Promise<LeaseHolderInfo | null> {
    assertLeaseKey(key);
    const entry = await this.kv.get(key);
    if (entry?.operation !== "PUT") return null;
    return { holder: entry.string(), revision: BigInt(entry.revision) };
  }

  async holders(): Promise<Map<string, string>> {
    // The bucket's stream names every key that has an entry (a lease, or the delete marker of a released
    // one, both gone at max age) in one JetStream API request; only those keys are read, so the cost
    // follows the leases taken within one TTL, not the feeds. (A KV watch or history would do it in one
    // pass, but its end is only known from a pending count of 0, and with leases churning it waited
    // 40 s at times on nats-server 2.9.)
    const prefix = `$KV.${this.opts.bucket}.`;
    const info = await this.jsm.streams.info(`KV_${this.opts.bucket}`, { subjects_filter: `${prefix}>` });
    const keys = Object.keys(info.state.subjects ?? {}).map((subject) => subject.slice(prefix.length));
    const held = new Map<string, string>();
    for (let i = 0; i < keys.length; i += HOLDERS_READ_BATCH) {
      const entries = await Promise.all(keys.slice(i, i + HOLDERS_READ_BATCH).map((key) => this.kv.get(key)));
      for (const entry of entries) if (entry?.operation === "PUT") held.set(entry.key, entry.string());
    }
    return held;
  }

  async close(): Promise<void> {
    await Promise.all([...this.leases].map((l) => l.release().catch(() => false)));
  }
}

class KvLease implements Lease {
  readonly fenceToken: bigint;
  readonly holder: string;
  private readonly controller = new AbortController();
  private revision: number;
  private deadline: number;
  private renewTimer?: NodeJS.Timeout;
  private deadlineTimer?: NodeJS.Timeout;
  private ended = false;

  constructor(
    private readonly kv: KV,
    readonly key: string,
    revision: number,
    sentAt: number,
    private readonly opts: Required<Omit<KvLeaseOptions, "onRenewError">> & Pick<KvLeaseOptions, "onRenewError">,
    private readonly onEnd: () => void,
  ) {
    this.revision = revision;
    this.fenceToken = BigInt(revision);
    this.holder = opts.holder;
    this.deadline = sentAt + opts.ttlMs - opts.safetyMarginMs;
    this.armDeadline();
    this.scheduleRenew();
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  remainingMs(): number {
    return this.ended ? 0 : Math.max(0, this.deadline - performance.now());
  }

  async release(): Promise<boolean> {
    if (this.ended) return false;
    this.end("released");
    try {
      await this.kv.delete(this.key, { previousSeq: this.revision });
      return true;
    } catch (err) {
      if (isWrongLastSequence(err)) return false;
      throw err;
    }
  }

  private scheduleRenew(): void {
    this.renewTimer = setTimeout(() => void this.renew(), this.opts.renewEveryMs);
    this.renewTimer.unref();
  }

  private async renew(): Promise<void> {
    if (this.ended) return;
    const sentAt = performance.now();
    try {
      const revision = await this.kv.update(
        this.key,
        new TextEncoder().encode(this.holder),
        this.revision,
        Math.max(100, Math.min(this.remainingMs(), 5000)),
      );
      if (this.ended) return;
      this.revision = revision;
      this.deadline = sentAt + this.opts.ttlMs - this.opts.safetyMarginMs;
      this.armDeadline();
    } catch (err) {
      if (this.ended) return;
      if (isWrongLastSequence(err)) {
        this.end(new LeaseLostError(this.key, "taken-over"));
        return;
      }
      // Transient (server restarting, network): keep trying until the deadline decides.
      this.opts.onRenewError?.(this.key, err);
    }
    if (!this.ended) this.scheduleRenew();
  }

  private armDeadline(): void {
    clearTimeout(this.deadlineTimer);
    this.deadlineTimer = setTimeout(
      () => {
        if (performance.now() >= this.deadline) this.end(new LeaseLostError(this.key, "deadline-passed"));
        else this.armDeadline();
      },
      Math.max(0, this.deadline - performance.now()),
    );
    this.deadlineTimer.unref();
  }

  private end(reason: LeaseLostError | "released"): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.renewTimer);
    clearTimeout(this.deadlineTimer);
    this.controller.abort(reason);
    this.onEnd();
  }
}
