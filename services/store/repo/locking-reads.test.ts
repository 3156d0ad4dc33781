// The store's locking reads of many feeds lock their own rows and no others (decision 0060). Left to
// itself, MariaDB answered a read of a few dozen feeds by their key with a scan of the whole table (64
// of 70 rows here; 64 of 300 in EXPLAIN), and a locking read locks every row it scans: another feed's
// round then waited on this one, and deadlocked with its cursor UPDATE in the fleet bench. Each read
// below is held open while another session locks a row outside it, with a one-second lock wait.
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { parseFeed, type Feed } from "../codes.js";
import { parseIbge } from "../ibge.js";
import { itemRow } from "../mapping/item-rows.js";
import { docItem, feedOf } from "../testing/fixtures.js";
import { migratedStoreDb } from "../testing/store-db.js";
import { type ApplyBatchInput, applyBatches } from "./apply-batch.js";
import type { StoreDb } from "./context.js";
import { loadStates } from "./feed-rows.js";
import { lockRunsWithFeeds } from "./finish-runs.js";
import { recordMunicipality, registerMunicipality } from "./municipalities.js";
import { beginRun } from "./runs.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const runs: { feed: Feed; runId: string }[] = [];
const HELD = 64;
const outside = () => runs[66]!;
/** A registration in RS with one feed: produção, DISTRIBUICAO. */
const registration = (ibge: string, name = `Município ${ibge}`) => ({
  ibge: parseIbge(ibge),
  name,
  uf: "RS",
  active: true,
  feeds: [{ ambiente: 1, tipoNsu: "DISTRIBUICAO" }],
});

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  db = await migratedStoreDb(tdb, { connectionLimit: 2 });
  for (let i = 0; i < 70; i++) {
    const reg = registration(String(4300001 + i));
    await registerMunicipality(db, reg);
    const feed = parseFeed(feedOf(reg.ibge));
    const begun = await beginRun(db, { feed, holder: "h", fence: 1n, trigger: "scheduled", pool: "incremental" });
    runs.push({ feed, runId: begun.run.runId });
  }
  await tdb.pool.query("ANALYZE TABLE nfse_sync_state, nfse_sync_runs");
}, 60_000);
afterAll(async () => {
  await tdb?.drop();
});

/**
 * Locks one row (or inserts one) from a session of its own: the row's id when it got the lock ("inserted"
 * for an INSERT), else the error's code. Rolled back.
 */
async function lockFromAnotherSession(sql: string, params: unknown[]): Promise<string> {
  const conn = await tdb.pool.getConnection();
  try {
    await conn.query("SET SESSION innodb_lock_wait_timeout = 1");
    await conn.beginTransaction();
    const [rows] = await conn.query<RowDataPacket[]>(sql, params);
    return Array.isArray(rows) ? String(rows[0]?.id) : "inserted";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  } finally {
    await conn.rollback();
    conn.release();
  }
}

const lockStateRow = (f: Feed) =>
  lockFromAnotherSession("SELECT ibge AS id FROM nfse_sync_state WHERE ibge = ? AND ambiente = ? AND tipo_nsu = ? FOR UPDATE", [
    f.ibge,
    f.ambiente,
    f.tipoNsu,
  ]);
const lockRunRow = (runId: string) => lockFromAnotherSession("SELECT id FROM nfse_sync_runs WHERE id = ? FOR UPDATE", [runId]);

/** Runs `read` in a transaction on a store connection and, while it holds its locks, `probe`. */
async function whileHeld<T>(read: (conn: PoolConnection) => Promise<unknown>, probe: () => Promise<T>): Promise<T> {
  const conn = await db.pool.getConnection();
  try {
    await conn.beginTransaction();
    await read(conn);
    return await probe();
  } finally {
    await conn.rollback();
    conn.release();
  }
}

describe("a locking read of many feeds", () => {
  it("a round's fence check leaves the feed rows of other runs unlocked", async () => {
    const pages: ApplyBatchInput[] = runs.slice(0, HELD).map(({ feed, runId }, i) => ({
      feed,
      runId,
      fence: 1n,
      rows: [itemRow(feed, docItem(1n, 10_000 + i), runId)],
      newCursor: 1n,
      maxNsuSeen: 1n,
    }));
    let lockedOutside: string | undefined;
    const outcomes = await applyBatches(db, pages, async () => {
      lockedOutside = await lockStateRow(outside().feed);
    });
    expect(lockedOutside).toBe(outside().feed.ibge);
    expect(outcomes.every((o) => o.ok)).toBe(true);
  });

  it("BeginRuns' read of the state rows locks those feeds only", async () => {
    const held = runs.slice(0, HELD).map((r) => r.feed);
    const [inside, outsideLock] = await whileHeld(
      async (conn) => expect((await loadStates(conn, held, true)).size).toBe(HELD),
      async () => [await lockStateRow(held[3]!), await lockStateRow(outside().feed)],
    );
    // The probe can fail: a feed inside the read waits for it.
    expect(inside).toBe("ER_LOCK_WAIT_TIMEOUT");
    expect(outsideLock).toBe(outside().feed.ibge);
  });

  it("FinishRuns' read of the runs locks those runs only", async () => {
    const held = runs.slice(0, HELD).map((r) => r.runId);
    const [inside, outsideLock] = await whileHeld(
      async (conn) => expect((await lockRunsWithFeeds(conn, held)).size).toBe(HELD),
      async () => [await lockRunRow(held[3]!), await lockRunRow(outside().runId)],
    );
    expect(inside).toBe("ER_LOCK_WAIT_TIMEOUT");
    expect(outsideLock).toBe(outside().runId);
  });
});

describe("a registration", () => {
  it("leaves the gap of its new ibge open to other registrations until it commits", async () => {
    // 4300100 and 4300090 fall in the same gap of the ibge index (after the last one registered). A locking
    // read of the new ibge would have locked that gap, and two registrations in it deadlocked on their INSERTs.
    const reg = registration("4300100", "Município novo");
    const [recorded, neighbour] = await whileHeld(
      (conn) => recordMunicipality(conn, reg),
      () => lockFromAnotherSession("INSERT INTO municipalities (ibge, name, uf, active) VALUES ('4300090', 'Vizinho', 'RS', 1)", []),
    ).then(
      async (inserted) =>
        [await tdb.pool.query<RowDataPacket[]>("SELECT ibge FROM municipalities WHERE ibge = '4300100'"), inserted] as const,
    );
    expect(neighbour).toBe("inserted");
    // Held open and rolled back: nothing of it stays.
    expect(recorded[0]).toEqual([]);
  });

  it("answers a registration again with the stored one, and a different one with ALREADY_EXISTS", async () => {
    const reg = registration("4300001");
    const again = await registerMunicipality(db, reg);
    expect([again.created, again.municipality.ibge]).toEqual([false, "4300001"]);
    await expect(registerMunicipality(db, { ...reg, name: "Outro nome" })).rejects.toThrow(/already registered with other fields/);
  });
});
