// The pool's threads with real worker_threads: heap limits reach each thread, a thread that runs out of
// them dies alone and is replaced.
import { afterEach, describe, expect, it } from "vitest";
import { WorkerDiedError, WorkerPool, workerUrl } from "./index.js";

const hog = workerUrl(import.meta.url, "./testing/hog-worker");
const pools: WorkerPool<{ mb: number }, number, string>[] = [];
const pool = (limits?: ConstructorParameters<typeof WorkerPool>[3]) => {
  const p = new WorkerPool<{ mb: number }, number, string>(hog, 1, 60_000, limits);
  pools.push(p);
  return p;
};
afterEach(async () => {
  await Promise.all(pools.splice(0).map((p) => p.close()));
});

describe("WorkerPool heap limits", () => {
  it("lets a thread without limits hold 96 MB", async () => {
    expect(await pool().run({ mb: 96 })).toBe(96);
  });

  it("kills a thread that needs more than its limit, replaces it, and runs the next task", async () => {
    const limited = pool({ maxOldGenerationSizeMb: 32, maxYoungGenerationSizeMb: 4 });
    await expect(limited.run({ mb: 96 })).rejects.toBeInstanceOf(WorkerDiedError);
    expect(await limited.run({ mb: 4 })).toBe(4);
  });
});
