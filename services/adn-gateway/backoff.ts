// Bounded exponential backoff with "equal jitter": half the step is fixed, half random, so retries of
// many feeds do not synchronise while each wait stays within [step/2, step].

export interface BackoffPolicy {
  baseMs: number;
  maxMs: number;
}

/** Wait before retry number `retry` (1 = first retry). */
export function backoffDelayMs(retry: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const step = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.max(0, retry - 1));
  return Math.round(step / 2 + random() * (step / 2));
}

/** Sleeps unless the signal aborts first (then rejects with the signal's reason). */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
