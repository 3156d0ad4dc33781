// The main job end to end: simulator → gateway → coordinators → store → MariaDB, every part its own
// process. What the tables hold is compared with what the simulator distributed.
import type { RowDataPacket } from "mysql2/promise";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RunOutcome } from "../../libs/gen/malha/store/v1/types_pb.js";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";

const until = async (cond: () => Promise<boolean>, what: string, timeoutMs = 60_000) => {
  const end = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
};

async function storedNsus(mesh: NfseMesh, ibge: string): Promise<bigint[]> {
  const nsus: bigint[] = [];
  for (const sql of [
    `SELECT nsu FROM nfse_documentos_${ibge}`,
    `SELECT nsu FROM nfse_eventos_${ibge}`,
    `SELECT nsu FROM nfse_quarantine WHERE ibge = '${ibge}'`,
  ]) {
    const [rows] = await mesh.db.pool.query<RowDataPacket[]>(sql);
    nsus.push(...rows.map((r) => BigInt(r.nsu as string)));
  }
  return nsus.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

describe("NFS-e sync end to end", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({ municipalities: 3, feedSize: 300, coordinators: 2 });
    await mesh.registerAll();
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("syncs every distributed item exactly once, then respects the one-hour rule", async () => {
    const caughtUp = async () => {
      const { states } = await mesh.storeClient.listSyncStates({ pageSize: 100 });
      return states.length === 3 && states.every((s) => s.lastOutcome === RunOutcome.CAUGHT_UP);
    };
    await until(caughtUp, "every feed to catch up", 120_000);

    for (const m of mesh.municipalities) {
      const feed = mesh.sim.feed(m.ibge, "DISTRIBUICAO");
      const visible = feed.entries.filter((e) => !e.hidden).map((e) => e.nsu);
      const stored = await storedNsus(mesh, m.ibge);
      // Exactly once: no duplicates and nothing missing among what lote=true distributed.
      expect(new Set(stored).size).toBe(stored.length);
      expect(stored.filter((n) => !feed.entries.find((e) => e.nsu === n)?.hidden)).toEqual(visible);
    }

    const { states } = await mesh.storeClient.listSyncStates({ pageSize: 100 });
    for (const s of states) {
      expect(s.nextEligibleAt).toBeDefined();
      expect(timestampDate(s.nextEligibleAt!).getTime()).toBeGreaterThan(Date.now() + 59 * 60_000);
    }
    // Several sweeps later (interval 1 s), nobody asked the ADN again for a caught-up feed.
    const before = structuredClone(mesh.sim.counters().byFeed);
    await new Promise((r) => setTimeout(r, 3500));
    expect(mesh.sim.counters().byFeed).toEqual(before);
  });
});
