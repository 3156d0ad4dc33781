// The main job end to end: simulator → gateway → coordinators → store → MariaDB, every part its own
// process. What the tables hold is compared with what the simulator distributed.
import type { RowDataPacket } from "mysql2/promise";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { sampleValue, scrape } from "../support/prom-text.js";
import { expectDecember2026Columns, storedNsus, until } from "../support/sync-checks.js";

describe("NFS-e sync end to end", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({
      municipalities: 3,
      feedSize: 300,
      coordinators: 2,
      coordinatorEnv: { NFSE_RECONCILIATION_INTERVAL_SECONDS: "1", NFSE_RECONCILIATION_BUDGET_PER_HOUR: "3600" },
    });
    await mesh.registerAll();
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("syncs every item exactly once, back-fills hidden NSUs, records true holes, then respects the one-hour rule", async () => {
    const caughtUp = async () => {
      const { states } = await mesh.storeClient.listSyncStates({ pageSize: 100 });
      return states.length === 3 && states.every((s) => s.lastSuccessAt !== undefined && s.nextEligibleAt !== undefined);
    };
    await until(caughtUp, "every feed to catch up", 120_000);

    for (const m of mesh.municipalities) {
      const feed = mesh.sim.feed(m.ibge, "DISTRIBUICAO");
      const all = feed.entries.map((e) => e.nsu);
      expect(feed.entries.some((e) => e.hidden)).toBe(true);
      expect(feed.holes.size).toBeGreaterThan(0);
      // Reconciliation fills what lote=true never showed and records the ADN's confirmed holes.
      await until(async () => (await storedNsus(mesh, m.ibge)).length === all.length, `hidden NSUs of ${m.ibge} to be back-filled`);
      const stored = await storedNsus(mesh, m.ibge);
      expect(stored).toEqual(all); // exactly once, nothing missing, nothing extra
      await until(async () => {
        const [rows] = await mesh.db.pool.query<RowDataPacket[]>("SELECT nsu FROM nfse_confirmed_holes WHERE ibge = ?", [m.ibge]);
        return rows.length === feed.holes.size;
      }, `holes of ${m.ibge} to be recorded`);
      const [holes] = await mesh.db.pool.query<RowDataPacket[]>("SELECT nsu FROM nfse_confirmed_holes WHERE ibge = ? ORDER BY nsu", [
        m.ibge,
      ]);
      expect(holes.map((r) => BigInt(r.nsu as string))).toEqual([...feed.holes].sort((a, b) => (a < b ? -1 : 1)));
    }

    await expectDecember2026Columns(mesh);

    const { states } = await mesh.storeClient.listSyncStates({ pageSize: 100 });
    for (const s of states) {
      expect(timestampDate(s.nextEligibleAt!).getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);
    }
    // What operators alert on: the runs each replica ended, and the fleet view of every replica's sweep.
    const holesTotal = mesh.municipalities.reduce((n, m) => n + mesh.sim.feed(m.ibge, "DISTRIBUICAO").holes.size, 0);
    for (const c of mesh.coordinators) {
      await until(async () => {
        const m = await scrape(c.metricsPort);
        return sampleValue(m, "malha_sync_feeds", { state: "idle" }) === 3 && sampleValue(m, "malha_sync_holes") === holesTotal;
      }, "the fleet view of every replica to show 3 idle feeds and every hole");
      const m = await scrape(c.metricsPort);
      expect(["disabled", "cooling_down", "running", "error"].map((state) => sampleValue(m, "malha_sync_feeds", { state }))).toEqual([
        0, 0, 0, 0,
      ]);
      expect(sampleValue(m, "malha_sync_feeds_never_synced")).toBe(0);
      expect(sampleValue(m, "malha_sync_lag_nsu_max")).toBe(0);
      expect(sampleValue(m, "malha_sync_last_success_age_seconds_max")).toBeLessThan(600);
      expect(sampleValue(m, "malha_sync_fleet_view_timestamp_seconds")).toBeGreaterThan(Date.now() / 1000 - 30);
    }
    const all = await Promise.all(mesh.coordinators.map((c) => scrape(c.metricsPort)));
    const sum = (name: string, labels?: Record<string, string>) => all.reduce((n, m) => n + (sampleValue(m, name, labels) ?? 0), 0);
    expect(sum("malha_sync_runs_total", { outcome: "caught_up" })).toBeGreaterThanOrEqual(3);
    expect(sum("malha_sync_runs_total", { outcome: "failed" })).toBe(0);
    // Every distributed item went through some replica's runs (hidden ones came by reconciliation).
    const visible = mesh.municipalities.reduce(
      (n, m) => n + mesh.sim.feed(m.ibge, "DISTRIBUICAO").entries.filter((e) => !e.hidden).length,
      0,
    );
    expect(sum("malha_sync_items_total")).toBeGreaterThanOrEqual(visible);

    // Several sweeps later (interval 1 s), nobody asked the ADN for another batch of a caught-up feed.
    const batches = () => Object.fromEntries(Object.entries(mesh.sim.counters().byFeed).map(([k, v]) => [k, v.batch]));
    const before = batches();
    await new Promise((r) => setTimeout(r, 3500));
    expect(batches()).toEqual(before);

    // An hour later (the wait moved to now), new notes: the sweep's run reads their page and ends there,
    // without the second call that would only hear "nothing newer" (decision 0061).
    const { ibge } = mesh.municipalities[0]!;
    const feed = mesh.sim.feed(ibge, "DISTRIBUICAO");
    const added = feed.append(3).filter((e) => !e.hidden);
    expect(added.length).toBeGreaterThan(0);
    await mesh.db.pool.query("UPDATE nfse_sync_state SET next_eligible_at = NOW(3) - INTERVAL 1 SECOND WHERE ibge = ?", [ibge]);
    const stateOf = async () => (await mesh.storeClient.listSyncStates({ pageSize: 100 })).states.find((s) => s.feed?.ibge === ibge)!;
    await until(async () => (await stateOf()).shortPageEnds === 1, "the sweep's run to end at the new notes' page");
    expect(batches()[`${ibge}/DISTRIBUICAO`]).toBe(before[`${ibge}/DISTRIBUICAO`]! + 1);
    expect((await stateOf()).lastNsu).toBe(added.at(-1)!.nsu);
    expect(timestampDate((await stateOf()).nextEligibleAt!).getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);
    expect(await storedNsus(mesh, ibge)).toEqual(expect.arrayContaining(added.map((e) => e.nsu)));
    const ended = await Promise.all(
      mesh.coordinators.map(
        async (c) => sampleValue(await scrape(c.metricsPort), "malha_sync_short_page_ends_total", { pool: "incremental" }) ?? 0,
      ),
    );
    expect(ended.reduce((a, b) => a + b, 0)).toBe(1);
  });
});

describe("NFS-e sync at scale", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({
      municipalities: 5,
      feedSize: 1500,
      coordinators: 3,
      // ~30 gaps per feed, one look-up per second per certificate (the highest budget there is): the
      // reconciliation, not the batches, sets this test's length. Volume belongs to bench:sync.
      coordinatorEnv: { NFSE_RECONCILIATION_INTERVAL_SECONDS: "1", NFSE_RECONCILIATION_BUDGET_PER_HOUR: "3600" },
    });
    await mesh.registerAll();
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("5 municipalities × 1,500 items by 3 replicas: every item once, every hole recorded, one fetcher per feed", async () => {
    for (const m of mesh.municipalities) {
      const feed = mesh.sim.feed(m.ibge, "DISTRIBUICAO");
      await until(async () => (await storedNsus(mesh, m.ibge)).length === feed.entries.length, `all of ${m.ibge}`, 240_000);
      expect(await storedNsus(mesh, m.ibge)).toEqual(feed.entries.map((e) => e.nsu));
      await until(async () => {
        const [rows] = await mesh.db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_confirmed_holes WHERE ibge = ?", [m.ibge]);
        return Number(rows[0]!.n) === feed.holes.size;
      }, `holes of ${m.ibge}`);
    }
    // One consumer per feed at any moment, as the simulator saw it.
    for (const m of mesh.municipalities) expect(mesh.sim.counters().maxConcurrentByFeed[`${m.ibge}/DISTRIBUICAO`]).toBe(1);
    // The work was shared: more than one replica held leases over the run.
    const holders = new Set<string>();
    const [runs] = await mesh.db.pool.query<RowDataPacket[]>("SELECT DISTINCT holder FROM nfse_sync_runs");
    for (const r of runs) holders.add(r.holder as string);
    expect(holders.size).toBeGreaterThan(1);
  }, 300_000);
});
