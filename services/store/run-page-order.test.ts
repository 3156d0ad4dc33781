// RunPageOrder: a call's pages that follow a cursor wait for the calls of their runs that arrived before
// theirs, never for later ones nor for other runs, and nothing is kept once the calls are answered.
import { describe, expect, it } from "vitest";
import { RunPageOrder } from "./run-page-order.js";

const state = async (p: Promise<void>) => Promise.race([p.then(() => "done"), new Promise((r) => setImmediate(() => r("waiting")))]);

describe("RunPageOrder", () => {
  it("makes a following page wait for its run's call that arrived before it, and only for that", async () => {
    const order = new RunPageOrder();
    const first = order.enter(["a", "b"], new Set());
    const other = order.enter(["c"], new Set(["c"]));
    const second = order.enter(["a", "c"], new Set(["a"]));
    expect(other.before).toHaveLength(0);
    expect(second.before).toHaveLength(1);
    const waiting = Promise.all(second.before);
    expect(await state(waiting.then(() => undefined))).toBe("waiting");
    other.done();
    expect(await state(waiting.then(() => undefined))).toBe("waiting");
    first.done();
    expect(await state(waiting.then(() => undefined))).toBe("done");
    second.done();
    expect(order.size).toBe(0);
  });

  it("lets a page that follows no cursor go at once, while a later following page still waits for it", async () => {
    const order = new RunPageOrder();
    const first = order.enter(["a"], new Set());
    const plain = order.enter(["a"], new Set());
    expect(plain.before).toHaveLength(0);
    const third = order.enter(["a"], new Set(["a"]));
    expect(third.before).toHaveLength(1);
    const waiting = Promise.all(third.before).then(() => undefined);
    first.done();
    expect(await state(waiting)).toBe("waiting");
    plain.done();
    expect(await state(waiting)).toBe("done");
    third.done();
    expect(order.size).toBe(0);
  });

  it("keeps a run's latest call when an earlier one ends after it", async () => {
    const order = new RunPageOrder();
    const first = order.enter(["a"], new Set());
    const second = order.enter(["a"], new Set(["a"]));
    second.done();
    expect(order.size).toBe(0);
    first.done();
    const third = order.enter(["a"], new Set(["a"]));
    expect(third.before).toHaveLength(0);
    third.done();
  });
});
