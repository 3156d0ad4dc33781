// The main job end to end: simulator → gateway → coordinators → store → MariaDB, every part its own
// process. What the tables hold is compared with what the simulator distributed.
import type { RowDataPacket } from "mysql2/promise";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { storedNsus, until } from "../support/sync-checks.js";

describe("NFS-e sync end to end", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({
      municipalities: 3,
      feedSize: 300,
      coordinators: 2,
      coordinatorEnv: { NFSE_RECONCILIATION_INTERVAL_SECONDS: "1", NFSE_RECONCILIATION_BUDGET_PER_HOUR: "1000" },
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
      const [holes] = await mesh.db.pool.query<RowDataPacket[]>("SELECT nsu FROM nfse_confirmed_holes WHERE ibge = ? ORDER BY nsu", [m.ibge]);
      expect(holes.map((r) => BigInt(r.nsu as string))).toEqual([...feed.holes].sort((a, b) => (a < b ? -1 : 1)));
    }

    const { states } = await mesh.storeClient.listSyncStates({ pageSize: 100 });
    for (const s of states) {
      expect(timestampDate(s.nextEligibleAt!).getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);
    }
    // Several sweeps later (interval 1 s), nobody asked the ADN for another batch of a caught-up feed.
    const batches = () => Object.fromEntries(Object.entries(mesh.sim.counters().byFeed).map(([k, v]) => [k, v.batch]));
    const before = batches();
    await new Promise((r) => setTimeout(r, 3500));
    expect(batches()).toEqual(before);
  });
});

describe("NFS-e sync at scale", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({
      municipalities: 5,
      feedSize: 3000,
      coordinators: 3,
      coordinatorEnv: { NFSE_RECONCILIATION_INTERVAL_SECONDS: "1", NFSE_RECONCILIATION_BUDGET_PER_HOUR: "1000" },
    });
    await mesh.registerAll();
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("5 municipalities × 3,000 items by 3 replicas: every item once, every hole recorded, one fetcher per feed", async () => {
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
