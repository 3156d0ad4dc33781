// Contracts of the lease layer, apart from the NATS implementation (nats.js style).

/**
 * Exclusive, expiring ownership of one key (a feed), held by one process. The lease renews itself in
 * the background; work done under it must watch `signal` and stop as soon as it aborts.
 */
export interface Lease {
  readonly key: string;
  readonly holder: string;
  /**
   * The KV revision at acquire time. Revisions only grow, so a later holder always has a larger token;
   * the store records it and refuses writes with an older one (fencing lives in MySQL, not here).
   */
  readonly fenceToken: bigint;
  /** Aborted (with a LeaseLostError or "released") when the lease ends for any reason. */
  readonly signal: AbortSignal;
  /** Milliseconds left before the holder must consider the lease gone, on the monotonic clock. */
  remainingMs(): number;
  /** Gives the lease back. False when it was already lost (someone else may hold the key now). */
  release(): Promise<boolean>;
}

export interface LeaseHolderInfo {
  holder: string;
  revision: bigint;
}

export interface LeaseManager {
  /** Takes the key if nobody holds it; null when it is held. Never waits. */
  tryAcquire(key: string): Promise<Lease | null>;
  /** Who holds the key right now, as the server sees it. */
  holderOf(key: string): Promise<LeaseHolderInfo | null>;
  /**
   * Who holds every key held right now, by key, in one read of the bucket (a sweep over thousands of
   * feeds asks once instead of once per feed). As racy as `holderOf`: a hint, the acquire decides.
   */
  holders(): Promise<Map<string, string>>;
  /** Stops renewing every lease this manager holds and releases them. */
  close(): Promise<void>;
}

export class LeaseLostError extends Error {
  constructor(
    readonly key: string,
    readonly why: "taken-over" | "deadline-passed",
  ) {
    super(
      why === "taken-over"
        ? `lease ${key} was taken over or expired on the server`
        : `lease ${key} could not be renewed before its deadline`,
    );
    this.name = "LeaseLostError";
  }
}
