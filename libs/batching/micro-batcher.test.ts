import { describe, expect, it } from "vitest";
import { type BatchAnswer, BatcherClosedError, MicroBatcher } from "./micro-batcher.js";

/** A send that records its batches and answers when told to. */
function recorder<I>() {
  const batches: I[][] = [];
  const answers: ((a: BatchAnswer<string>[] | Error) => void)[] = [];
  const send = (entries: I[]) =>
    new Promise<BatchAnswer<string>[]>((resolve, reject) => {
      batches.push(entries);
      answers.push((a) => (a instanceof Error ? reject(a) : resolve(a)));
    });
  return { batches, answers, send };
}
const echo = (entries: number[]): BatchAnswer<string>[] => entries.map((e) => ({ ok: true, value: `n${e}` }));
const tick = () => new Promise<void>((r) => setImmediate(r));

describe("MicroBatcher", () => {
  it("sends a full batch at once, without waiting for the delay", async () => {
    const r = recorder<number>();
    const b = new MicroBatcher({ send: r.send, maxSize: 3, maxDelayMs: 60_000 });
    const answers = [1, 2, 3].map((n) => b.submit(n));
    await tick();
    expect(r.batches).toEqual([[1, 2, 3]]);
    r.answers[0]!(echo([1, 2, 3]));
    expect(await Promise.all(answers)).toEqual(["n1", "n2", "n3"]);
  });

  it("sends a partial batch when its first entry has waited the delay", async () => {
    const r = recorder<number>();
    const b = new MicroBatcher({ send: r.send, maxSize: 100, maxDelayMs: 5 });
    const one = b.submit(1);
    const two = b.submit(2);
    await tick();
    expect(r.batches).toEqual([]);
    await new Promise((res) => setTimeout(res, 20));
    expect(r.batches).toEqual([[1, 2]]);
    r.answers[0]!(echo([1, 2]));
    expect([await one, await two]).toEqual(["n1", "n2"]);
  });

  it("delivers each entry its own error, and the whole call's error to every entry of that batch only", async () => {
    const r = recorder<number>();
    const b = new MicroBatcher({ send: r.send, maxSize: 2, maxDelayMs: 0, maxInFlight: 2 });
    const first = [b.submit(1), b.submit(2)].map((p) =>
      p.then(
        (v) => v,
        (e: Error) => `error ${e.message}`,
      ),
    );
    const second = [b.submit(3), b.submit(4)].map((p) =>
      p.then(
        (v) => v,
        (e: Error) => `error ${e.message}`,
      ),
    );
    await tick();
    expect(r.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    r.answers[0]!([
      { ok: false, error: new Error("one refused") },
      { ok: true, value: "n2" },
    ]);
    r.answers[1]!(new Error("call failed"));
    expect(await Promise.all(first)).toEqual(["error one refused", "n2"]);
    expect(await Promise.all(second)).toEqual(["error call failed", "error call failed"]);
  });

  it("refuses every entry of a batch answered with the wrong number of answers", async () => {
    const b = new MicroBatcher<number, string>({ send: async () => [{ ok: true, value: "only one" }], maxSize: 2, maxDelayMs: 0 });
    const results = await Promise.allSettled([b.submit(1), b.submit(2)]);
    expect(results.map((x) => x.status)).toEqual(["rejected", "rejected"]);
  });

  it("keeps at most maxInFlight batches out; what arrives meanwhile goes in the next batch, nothing lost or answered twice", async () => {
    const r = recorder<number>();
    const b = new MicroBatcher({ send: r.send, maxSize: 4, maxDelayMs: 0, maxInFlight: 1 });
    const all: Promise<string>[] = [];
    all.push(b.submit(0));
    await new Promise((res) => setTimeout(res, 5));
    expect(r.batches).toEqual([[0]]);
    for (let n = 1; n <= 9; n++) all.push(b.submit(n));
    await new Promise((res) => setTimeout(res, 5));
    expect(r.batches).toHaveLength(1);
    r.answers[0]!(echo([0]));
    await tick();
    expect(r.batches[1]).toEqual([1, 2, 3, 4]);
    r.answers[1]!(echo([1, 2, 3, 4]));
    await tick();
    expect(r.batches[2]).toEqual([5, 6, 7, 8]);
    r.answers[2]!(echo([5, 6, 7, 8]));
    await new Promise((res) => setTimeout(res, 5));
    expect(r.batches[3]).toEqual([9]);
    r.answers[3]!(echo([9]));
    expect(await Promise.all(all)).toEqual(Array.from({ length: 10 }, (_, n) => `n${n}`));
  });

  it("an aborted entry leaves the queue (or has its late answer dropped) and is answered with its abort reason once", async () => {
    const r = recorder<number>();
    const b = new MicroBatcher({ send: r.send, maxSize: 10, maxDelayMs: 5 });
    const queued = new AbortController();
    const sent = new AbortController();
    const a = b.submit(1, queued.signal);
    const c = b.submit(2, sent.signal);
    queued.abort(new Error("lease lost"));
    await expect(a).rejects.toThrow("lease lost");
    await new Promise((res) => setTimeout(res, 20));
    expect(r.batches).toEqual([[2]]);
    sent.abort(new Error("gone"));
    await expect(c).rejects.toThrow("gone");
    r.answers[0]!(echo([2]));
    await tick();
    const already = new AbortController();
    already.abort(new Error("before"));
    await expect(b.submit(3, already.signal)).rejects.toThrow("before");
    expect(r.batches).toHaveLength(1);
  });

  it("close() sends what is queued, waits for the answers and refuses new entries", async () => {
    const r = recorder<number>();
    const b = new MicroBatcher({ send: r.send, maxSize: 10, maxDelayMs: 60_000 });
    const queued = b.submit(1);
    const closed = b.close();
    await tick();
    expect(r.batches).toEqual([[1]]);
    await expect(b.submit(2)).rejects.toBeInstanceOf(BatcherClosedError);
    let done = false;
    void closed.then(() => {
      done = true;
    });
    await tick();
    expect(done).toBe(false);
    r.answers[0]!(echo([1]));
    await closed;
    expect(await queued).toBe("n1");
  });
});
