// A round's fence check locks the feed rows of its own pages and no others, however many pages it has:
// with 64 pages against a table of 70 running feeds MariaDB chose a full scan for the locking read, which
// locks every row it scans, so another feed's round waited on this one (and deadlocked with its cursor
// UPDATE in the fleet bench). The read is held open here while another connection locks a feed outside it.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { parseFeed, type Feed } from "../codes.js";
import { parseIbge } from "../ibge.js";
import { itemRow } from "../mapping/item-rows.js";
import { docItem, feedOf } from "../testing/fixtures.js";
import { migratedStoreDb } from "../testing/store-db.js";
import { type ApplyBatchInput, applyBatches } from "./apply-batch.js";
import type { StoreDb } from "./context.js";
import { registerMunicipality } from "./municipalities.js";
import { beginRun } from "./runs.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const runs: { feed: Feed; runId: string }[] = [];

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  db = await migratedStoreDb(tdb, { connectionLimit: 2 });
  for (let i = 0; i < 70; i++) {
    const ibge = parseIbge(String(4300001 + i));
    await registerMunicipality(db, {
      ibge,
      name: `Município ${ibge}`,
      uf: "RS",
      active: true,
      feeds: [{ ambiente: 1, tipoNsu: "DISTRIBUICAO" }],
    });
    const feed = parseFeed(feedOf(ibge));
    const begun = await beginRun(db, { feed, holder: "h", fence: 1n, trigger: "scheduled", pool: "incremental" });
    runs.push({ feed, runId: begun.run.runId });
  }
  await tdb.pool.query("ANALYZE TABLE nfse_sync_state, nfse_sync_runs");
}, 60_000);
afterAll(async () => {
  await tdb?.drop();
});

describe("a round's fence check", () => {
  it("leaves the feed rows of other runs unlocked while a round of 64 pages is open", async () => {
    const pages: ApplyBatchInput[] = runs.slice(0, 64).map(({ feed, runId }, i) => ({
      feed,
      runId,
      fence: 1n,
      rows: [itemRow(feed, docItem(1n, 10_000 + i), runId)],
      newCursor: 1n,
      maxNsuSeen: 1n,
    }));
    const outside = runs[66]!.feed;
    let lockedOutside: string | undefined;
    const outcomes = await applyBatches(db, pages, async () => {
      // The round holds its locks here; another session locks a feed that is not in it.
      const conn = await tdb.pool.getConnection();
      try {
        await conn.query("SET SESSION innodb_lock_wait_timeout = 1");
        await conn.beginTransaction();
        const [rows] = await conn.query<RowDataPacket[]>(
          "SELECT ibge FROM nfse_sync_state WHERE ibge = ? AND ambiente = ? AND tipo_nsu = ? FOR UPDATE",
          [outside.ibge, outside.ambiente, outside.tipoNsu],
        );
        lockedOutside = String(rows[0]?.ibge);
      } catch (err) {
        lockedOutside = (err as { code?: string }).code ?? String(err);
      } finally {
        await conn.rollback();
        conn.release();
      }
    });
    expect(lockedOutside).toBe(outside.ibge);
    expect(outcomes.every((o) => o.ok)).toBe(true);
  });
});
