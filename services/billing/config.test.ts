import { availableParallelism } from "node:os";
import { describe, expect, it } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { readBillingConfig } from "./config.js";

const read = (env: Record<string, string>) => readBillingConfig(new EnvReader({ MYSQL_URL: "mysql://u:p@127.0.0.1:3306/malha", NATS_URL: "nats://127.0.0.1:4222", ...env }));

describe("billing render defaults", () => {
  it("keeps 16 items in flight and one render thread per CPU, at most 4 unless set", () => {
    const c = read({});
    expect(c.renderConcurrency).toBe(16);
    expect(c.renderThreads).toBe(Math.max(1, Math.min(16, availableParallelism(), 4)));
  });

  it("never starts more threads than items in flight, and takes explicit values as given", () => {
    expect(read({ BILLING_RENDER_CONCURRENCY: "1" }).renderThreads).toBe(1);
    expect(read({ BILLING_RENDER_THREADS: "12" }).renderThreads).toBe(12);
  });
});
