import { describe, expect, it } from "vitest";
import { DirSyncer } from "./dir-sync.js";

/** An fsync whose completion the test controls, recording when each one started. */
function controlledFsync() {
  const calls: { dir: string; finish: (err?: Error) => void }[] = [];
  const fsync = (dir: string) =>
    new Promise<void>((resolve, reject) => calls.push({ dir, finish: (err) => (err ? reject(err) : resolve()) }));
  return { calls, fsync };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("DirSyncer", () => {
  it("lets callers that arrive during a sync share the next one, which starts only after it", async () => {
    const { calls, fsync } = controlledFsync();
    const s = new DirSyncer(fsync);
    const done: string[] = [];
    const a = s.sync("/d").then(() => done.push("a"));
    await tick();
    const b = s.sync("/d").then(() => done.push("b"));
    const c = s.sync("/d").then(() => done.push("c"));
    await tick();
    expect(calls.length).toBe(1);
    calls[0]!.finish();
    await a;
    await tick();
    // b and c arrived after the first sync started, so it does not cover them.
    expect(done).toEqual(["a"]);
    expect(calls.length).toBe(2);
    calls[1]!.finish();
    await Promise.all([b, c]);
    expect(done).toEqual(["a", "b", "c"]);
    expect(calls.length).toBe(2);
  });

  it("keeps directories apart and starts fresh once idle", async () => {
    const { calls, fsync } = controlledFsync();
    const s = new DirSyncer(fsync);
    const x = s.sync("/x");
    const y = s.sync("/y");
    expect(calls.map((c) => c.dir)).toEqual(["/x", "/y"]);
    calls[0]!.finish();
    calls[1]!.finish();
    await Promise.all([x, y]);
    const again = s.sync("/x");
    expect(calls.length).toBe(3);
    calls[2]!.finish();
    await again;
  });

  it("gives a failed sync's error to everyone who shared it, and the next caller a new sync", async () => {
    const { calls, fsync } = controlledFsync();
    const s = new DirSyncer(fsync);
    const first = s.sync("/d");
    await tick();
    const shared1 = s.sync("/d");
    const shared2 = s.sync("/d");
    calls[0]!.finish();
    await first;
    await tick();
    calls[1]!.finish(new Error("EIO"));
    await expect(shared1).rejects.toThrow("EIO");
    await expect(shared2).rejects.toThrow("EIO");
    const later = s.sync("/d");
    expect(calls.length).toBe(3);
    calls[2]!.finish();
    await later;
  });
});
