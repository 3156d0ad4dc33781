// Gap reconciliation under the ADN's rules, end to end: two coordinators, each talking to its own
// adn-gateway replica (each with its own in-memory cool-downs), one certificate. The simulator logs
// every call it receives; the test compares that log with what the store persisted.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { storedNsus, until } from "../support/sync-checks.js";

const COOLDOWN_S = 8;
// 1200 look-ups per hour: one every 3 s per certificate.
const BUDGET = 1200;
const SPACING_MS = 3_600_000 / BUDGET;

describe("NFS-e reconciliation with two gateway replicas", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 400,
      coordinators: 0,
      serviceEnv: { "adn-gateway": { ADN_RATE_LIMIT_COOLDOWN_SECONDS: String(COOLDOWN_S), NFSE_MAX_RETRIES: "0" } },
      coordinatorEnv: { NFSE_RECONCILIATION_INTERVAL_SECONDS: "1", NFSE_RECONCILIATION_BUDGET_PER_HOUR: String(BUDGET) },
    });
    const second = await mesh.startGateway();
    await mesh.startCoordinator();
    await mesh.startCoordinator({ ADN_GATEWAY_URL: second.baseUrl });
    await mesh.registerAll();
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("spreads look-ups, persists a 429 met by a look-up, and no replica calls the ADN inside that cool-down", async () => {
    const m = mesh.municipalities[0]!;
    const feed = mesh.sim.feed(m.ibge, "DISTRIBUICAO");
    const gaps = feed.entries.filter((e) => e.hidden).length + feed.holes.size;
    expect(gaps).toBeGreaterThan(3);
    await until(async () => {
      const { states } = await mesh.storeClient.listSyncStates({ pageSize: 10 });
      return states.length === 1 && states[0]!.lastSuccessAt !== undefined;
    }, "the feed to catch up");

    // From now on the certificate may make one call per 20 s window: the next look-up meets a 429.
    mesh.sim.configure({ rateLimit: { maxCalls: 1, windowMs: 20_000 } });
    let limited: RowDataPacket | undefined;
    await until(async () => {
      const [rows] = await mesh.db.pool.query<RowDataPacket[]>(
        "SELECT * FROM nfse_sync_runs WHERE ibge = ? AND trigger_kind = 'reconciliation' AND outcome = 'rate_limited'",
        [m.ibge],
      );
      limited = rows[0];
      return limited !== undefined;
    }, "a reconciliation run to meet the 429");
    mesh.sim.configure({ rateLimit: null });
    const cooldownUntil = (limited!.cooldown_until as Date).getTime();
    const [state] = await mesh.db.pool.query<RowDataPacket[]>("SELECT cooldown_until FROM nfse_sync_state WHERE ibge = ?", [m.ibge]);
    expect((state[0]!.cooldown_until as Date).getTime()).toBe(cooldownUntil);

    // Reconciliation resumes after the cool-down and back-fills every gap.
    await until(async () => (await storedNsus(mesh, m.ibge)).length === feed.entries.length, "every hidden NSU to be back-filled", 180_000);
    await until(
      async () => {
        const [rows] = await mesh.db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_confirmed_holes WHERE ibge = ?", [m.ibge]);
        return Number(rows[0]!.n) === feed.holes.size;
      },
      "every hole to be recorded",
      180_000,
    );

    const calls = mesh.sim.counters().log.filter((c) => c.cnpj === m.cnpj);
    const rejected = calls.filter((c) => c.status === 429);
    expect(rejected).toHaveLength(1);
    const at429 = rejected[0]!.at;
    expect(cooldownUntil).toBeGreaterThan(at429);
    // Not one call from the certificate, through either gateway, between the 429 and the end of the
    // cool-down the store persisted.
    expect(calls.filter((c) => c.at > at429 && c.at < cooldownUntil)).toEqual([]);
    expect(calls.some((c) => c.at >= cooldownUntil)).toBe(true);

    // Look-ups left one at a time, never in a burst: consecutive ones at least most of a spacing apart
    // (the slot period; the margin covers the network between taking the slot and the call arriving).
    const lookups = calls.filter((c) => /lote=false/i.test(c.path)).map((c) => c.at);
    expect(lookups.length).toBeGreaterThanOrEqual(gaps);
    const closest = Math.min(...lookups.slice(1).map((at, i) => at - lookups[i]!));
    expect(closest).toBeGreaterThanOrEqual(SPACING_MS * 0.75);
    // Nor right after the end-of-stream answer: the first look-up waited a spacing after the last batch.
    const lastBatch = calls.filter((c) => /lote=true/i.test(c.path)).at(-1)!.at;
    expect(lookups[0]! - lastBatch).toBeGreaterThanOrEqual(SPACING_MS * 0.75);

    // Both replicas did reconciliation work, and every run they began was finished.
    const [holders] = await mesh.db.pool.query<RowDataPacket[]>(
      "SELECT COUNT(DISTINCT holder) AS n FROM nfse_sync_runs WHERE ibge = ? AND trigger_kind = 'reconciliation'",
      [m.ibge],
    );
    expect(Number(holders[0]!.n)).toBe(2);
    // The feed keeps a 1 s sync interval, so a run may be in flight right now: each run running at this
    // point must reach an outcome (a run left 'running' keeps this wait from ending).
    const [running] = await mesh.db.pool.query<RowDataPacket[]>("SELECT id FROM nfse_sync_runs WHERE ibge = ? AND outcome = 'running'", [
      m.ibge,
    ]);
    const ids = running.map((r) => String(r.id));
    await until(
      async () => {
        if (ids.length === 0) return true;
        const [still] = await mesh.db.pool.query<RowDataPacket[]>(
          "SELECT COUNT(*) AS n FROM nfse_sync_runs WHERE id IN (?) AND outcome = 'running'",
          [ids],
        );
        return Number(still[0]!.n) === 0;
      },
      "every run in flight to finish",
      30_000,
    );
  }, 300_000);
});
