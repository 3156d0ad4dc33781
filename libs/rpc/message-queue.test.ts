import { describe, expect, it } from "vitest";
import { MessageQueue } from "./message-queue.js";

describe("MessageQueue", () => {
  it("sends what is pushed in order, waits for more while open, and ends once closed and empty", async () => {
    const q = new MessageQueue<number>();
    q.push(1);
    q.push(2);
    const seen: number[] = [];
    const done = (async () => {
      for await (const m of q) seen.push(m);
    })();
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([1, 2]);
    // Pushed while the reader waits: it is woken.
    q.push(3);
    await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual([1, 2, 3]);
    q.push(4);
    q.close();
    q.push(5);
    await done;
    expect(seen).toEqual([1, 2, 3, 4]);
  });
});
