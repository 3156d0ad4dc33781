/**
 * Maps `items` through `fn` with at most `concurrency` calls running, yielding the results in the
 * items' order. Only the window is held, so memory does not grow with the number of items; the caller
 * pulling slowly (a zip upload held back by flow control) holds the window back too.
 */
export async function* mapInOrder<T, R>(items: readonly T[], concurrency: number, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const window: Promise<R>[] = [];
  let next = 0;
  const fill = () => {
    while (window.length < concurrency && next < items.length) {
      const p = fn(items[next++]!);
      p.catch(() => undefined); // awaited below, in order; do not report it as unhandled meanwhile
      window.push(p);
    }
  };
  fill();
  while (window.length > 0) {
    const r = await window.shift()!;
    fill();
    yield r;
  }
}
