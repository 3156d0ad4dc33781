import { describe, expect, it } from "vitest";
import { createLogger } from "../../libs/log/logger.js";
import { currentScope, runInScope } from "../../libs/rpc/context.js";
import { WorkerPool } from "./pool.js";

function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { open, opened };
}

describe("WorkerPool", () => {
  it("never runs more than its concurrency, and runs every job once in FIFO order", async () => {
    let active = 0;
    let peak = 0;
    const order: string[] = [];
    const pool = new WorkerPool<{ key: string }>("t", 3, async (job) => {
      active++;
      peak = Math.max(peak, active);
      order.push(job.key);
      await new Promise((r) => setTimeout(r, 5));
      active--;
    });
    for (let i = 0; i < 20; i++) expect(pool.enqueue({ key: `k${i}` })).toBe(true);
    await pool.idle();
    expect(peak).toBe(3);
    expect(order).toEqual(Array.from({ length: 20 }, (_, i) => `k${i}`));
  });

  it("refuses a key that is queued or running, and accepts it again once done", async () => {
    const g = gate();
    const pool = new WorkerPool<{ key: string }>("t", 1, () => g.opened);
    expect(pool.enqueue({ key: "a" })).toBe(true);
    expect(pool.isRunning("a")).toBe(true);
    expect(pool.enqueue({ key: "a" })).toBe(false);
    expect(pool.enqueue({ key: "b" })).toBe(true);
    expect(pool.enqueue({ key: "b" })).toBe(false);
    expect(pool.dequeue("b")).toBe(true);
    g.open();
    await pool.idle();
    expect(pool.enqueue({ key: "a" })).toBe(true);
    await pool.idle();
  });

  it("reports a failing job and keeps going", async () => {
    const failed: string[] = [];
    const done: string[] = [];
    const pool = new WorkerPool<{ key: string }>(
      "t",
      2,
      async (job) => {
        if (job.key === "bad") throw new Error("boom");
        done.push(job.key);
      },
      (job) => failed.push(job.key),
    );
    pool.enqueue({ key: "bad" });
    pool.enqueue({ key: "good" });
    await pool.idle();
    expect(failed).toEqual(["bad"]);
    expect(done).toEqual(["good"]);
  });

  it("on close drops what is queued and waits for what runs", async () => {
    const g = gate();
    const ran: string[] = [];
    const pool = new WorkerPool<{ key: string }>("t", 1, async (job) => {
      ran.push(job.key);
      await g.opened;
    });
    pool.enqueue({ key: "running" });
    pool.enqueue({ key: "queued" });
    const closing = pool.close();
    expect(pool.enqueue({ key: "late" })).toBe(false);
    g.open();
    await closing;
    expect(ran).toEqual(["running"]);
  });

  it("runs a job enqueued from inside an RPC outside that RPC's scope (it outlives the call)", async () => {
    const seen: unknown[] = [];
    const pool = new WorkerPool<{ key: string }>("t", 1, async () => {
      seen.push(currentScope());
    });
    const rpc = new AbortController();
    const scope = { requestId: "r1", signal: rpc.signal, log: createLogger({ service: "t", level: "silent" }) };
    runInScope(scope, () => pool.enqueue({ key: "a" }));
    rpc.abort();
    await pool.idle();
    expect(seen).toEqual([undefined]);
  });
});
