// When the scheduler's periodic work runs: the sweep at the start and every NFSE_SYNC_INTERVAL_SECONDS,
// the gap scan half a sweep interval later and then every NFSE_RECONCILIATION_INTERVAL_SECONDS, so that
// the two fleet-wide reads never fall on the same moment (decision 0063). Only the clock is simulated:
// the timers are the scheduler's own.
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { createLogger } from "../../libs/log/logger.js";
import { readCoordinatorConfig } from "./config.js";
import { gapScanOffsetMs, Scheduler, type SchedulerDeps } from "./scheduler.js";

const MINUTE = 60_000;

function scheduler(env: Record<string, string>) {
  const config = readCoordinatorConfig(new EnvReader({ NATS_URL: "nats://127.0.0.1:4222", ...env }));
  const store = { expireStaleRuns: async () => ({}), purgeRunLogs: async () => ({}) };
  const deps = { config, store, log: createLogger({ service: "schedule-test", level: "silent" }), now: () => Date.now() };
  const withSlots = { ...deps, reconciliationSlots: { take: async () => false } };
  const s = new Scheduler((config.reconciliationBudgetPerHour > 0 ? withSlots : deps) as unknown as SchedulerDeps);
  const calls = { sweep: 0, scan: 0 };
  vi.spyOn(s, "sweep").mockImplementation(async () => {
    calls.sweep++;
    return [];
  });
  vi.spyOn(s, "scanGaps").mockImplementation(async () => {
    calls.scan++;
    return 0;
  });
  vi.spyOn(s, "reconcileStep").mockResolvedValue({ looked: 0, filled: 0, holes: 0 });
  return { s, calls, config };
}

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

describe("Scheduler.start", () => {
  it("with the defaults, scans for gaps 150 s after the start and then hourly, between two sweeps", async () => {
    const { s, calls, config } = scheduler({});
    expect(gapScanOffsetMs(config)).toBe(150_000);
    s.start();
    expect(calls).toEqual({ sweep: 1, scan: 0 });
    await vi.advanceTimersByTimeAsync(150_000 - 1);
    expect(calls).toEqual({ sweep: 1, scan: 0 });
    await vi.advanceTimersByTimeAsync(1);
    expect(calls).toEqual({ sweep: 1, scan: 1 });
    // Sweeps at 0, 5, 10, … minutes; scans at 2.5 and 62.5: never within a minute of a sweep.
    await vi.advanceTimersByTimeAsync(60 * MINUTE);
    expect(calls).toEqual({ sweep: 13, scan: 2 });
    await s.stop();
    await vi.advanceTimersByTimeAsync(120 * MINUTE);
    expect(calls).toEqual({ sweep: 13, scan: 2 });
  });

  it("scans half a scan interval after the start when scans come more often than sweeps", async () => {
    const { s, calls } = scheduler({ NFSE_SYNC_INTERVAL_SECONDS: "300", NFSE_RECONCILIATION_INTERVAL_SECONDS: "2" });
    s.start();
    await vi.advanceTimersByTimeAsync(999);
    expect(calls.scan).toBe(0);
    await vi.advanceTimersByTimeAsync(1);
    expect(calls.scan).toBe(1);
    await vi.advanceTimersByTimeAsync(4_000);
    expect(calls.scan).toBe(3);
    await s.stop();
  });

  it("a coordinator stopped before its first scan never scans", async () => {
    const { s, calls } = scheduler({});
    s.start();
    await vi.advanceTimersByTimeAsync(MINUTE);
    await s.stop();
    await vi.advanceTimersByTimeAsync(10 * MINUTE);
    expect(calls).toEqual({ sweep: 1, scan: 0 });
  });

  it("with reconciliation off (a budget of 0), never scans", async () => {
    const { s, calls } = scheduler({ NFSE_RECONCILIATION_BUDGET_PER_HOUR: "0" });
    s.start();
    await vi.advanceTimersByTimeAsync(120 * MINUTE);
    expect(calls).toEqual({ sweep: 25, scan: 0 });
    await s.stop();
  });
});
