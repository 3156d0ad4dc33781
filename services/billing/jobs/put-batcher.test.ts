import { describe, expect, it } from "vitest";
import { PutBatcher } from "./put-batcher.js";

interface In {
  name: string;
  data: Uint8Array;
}

/** Records the calls the batcher makes; each call completes when the test says so. */
function recorder(opts: { failMany?: boolean; refuse?: string } = {}) {
  const calls: { kind: "many" | "one"; names: string[]; release: () => void }[] = [];
  const gate = (kind: "many" | "one", names: string[]) => new Promise<void>((release) => calls.push({ kind, names, release }));
  const sendMany = async (batch: readonly In[]) => {
    await gate(
      "many",
      batch.map((b) => b.name),
    );
    if (opts.failMany) throw new Error("batch refused");
    return batch.map((b) => `stored:${b.name}`);
  };
  const sendOne = async (x: In) => {
    await gate("one", [x.name]);
    if (x.name === opts.refuse) throw new Error(`refused ${x.name}`);
    return `stored:${x.name}`;
  };
  return { calls, sendMany, sendOne };
}

const item = (name: string, bytes = 1): In => ({ name, data: new Uint8Array(bytes) });
const tick = () => new Promise((r) => setImmediate(r));

describe("PutBatcher", () => {
  it("sends the first put at once and the ones that arrive meanwhile together, in order", async () => {
    const r = recorder();
    const b = new PutBatcher<In, string>(r.sendMany, r.sendOne);
    const first = b.put(item("a"));
    const rest = ["b", "c", "d"].map((n) => b.put(item(n)));
    await tick();
    expect(r.calls.map((c) => [c.kind, c.names])).toEqual([["one", ["a"]]]);
    r.calls[0]!.release();
    expect(await first).toBe("stored:a");
    await tick();
    expect(r.calls[1]).toMatchObject({ kind: "many", names: ["b", "c", "d"] });
    r.calls[1]!.release();
    expect(await Promise.all(rest)).toEqual(["stored:b", "stored:c", "stored:d"]);
  });

  it("splits a queue by item count and by bytes (a single oversized item still goes alone)", async () => {
    const r = recorder();
    const b = new PutBatcher<In, string>(r.sendMany, r.sendOne, { items: 2, bytes: 10 });
    const all = [b.put(item("a")), b.put(item("b", 4)), b.put(item("c", 4)), b.put(item("d", 4)), b.put(item("e", 20))];
    for (let i = 0; i < 4; i++) {
      await tick();
      r.calls[i]!.release();
    }
    await Promise.all(all);
    expect(r.calls.map((c) => c.names)).toEqual([["a"], ["b", "c"], ["d"], ["e"]]);
  });

  it("retries a failed batch one by one, so only the refused put fails", async () => {
    const r = recorder({ failMany: true, refuse: "c" });
    const b = new PutBatcher<In, string>(r.sendMany, r.sendOne);
    const first = b.put(item("a"));
    const rest = ["b", "c", "d"].map((n) => b.put(item(n)).catch((e: Error) => e.message));
    await tick();
    r.calls[0]!.release();
    await first;
    await tick();
    r.calls[1]!.release();
    await tick();
    for (const c of r.calls.slice(2)) c.release();
    expect(await Promise.all(rest)).toEqual(["stored:b", "refused c", "stored:d"]);
    expect(r.calls.slice(2).map((c) => c.kind)).toEqual(["one", "one", "one"]);
  });
});
