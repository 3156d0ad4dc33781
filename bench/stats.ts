// Timing helpers: medians of repetitions, because one sample on a shared 2-core machine is noise.

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Runs fn `warmup` times unmeasured (JIT, lazy font loading), then `reps` times; returns each ms. */
export async function sample(reps: number, warmup: number, fn: () => unknown): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const out: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    await fn();
    out.push(performance.now() - t0);
  }
  return out;
}

export const fmt = (x: number, digits = 1) => (Number.isFinite(x) ? x.toFixed(digits) : "-");

/**
 * CPU time of this process for two ways of doing the same work, run alternately `rounds` times after one
 * unmeasured run each (JIT): the median of each, in CPU µs. Alternating keeps a drifting host from
 * favouring whichever ran last.
 */
export function alternatingCpuMicros(rounds: number, a: () => void, b: () => void): [number, number] {
  const micros = (run: () => void) => {
    const start = process.cpuUsage();
    run();
    const used = process.cpuUsage(start);
    return used.user + used.system;
  };
  a();
  b();
  const as: number[] = [];
  const bs: number[] = [];
  for (let r = 0; r < rounds; r++) {
    as.push(micros(a));
    bs.push(micros(b));
  }
  return [median(as), median(bs)];
}
