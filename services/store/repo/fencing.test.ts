// Fencing at the SQL level, without the network: what protects the cursor is the conditional UPDATE on
// `fence_token = ?`, not the isolation level, and a stale batch racing a newer holder writes nothing.
import type { ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { parseFeed } from "../codes.js";
import { docItem, feedOf } from "../testing/fixtures.js";
import { migratedStoreDb } from "../testing/store-db.js";
import { itemRow } from "../mapping/item-rows.js";
import { applyBatch, FENCE_GUARD_SQL } from "./apply-batch.js";
import type { StoreDb } from "./context.js";
import { registerMunicipality } from "./municipalities.js";
import { beginRun } from "./runs.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const feed = parseFeed(feedOf("4106902"));

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  db = await migratedStoreDb(tdb, { connectionLimit: 8, statementBudgetBytes: 1 << 20 });
  await registerMunicipality(db, {
    ibge: feed.ibge,
    name: "Curitiba",
    uf: "PR",
    active: true,
    feeds: [{ ambiente: 1, tipoNsu: "DISTRIBUICAO" }],
  });
});
afterAll(async () => {
  await tdb?.drop();
});

const begin = (fence: bigint, holder: string) => beginRun(db, { feed, holder, fence, trigger: "scheduled", pool: "incremental" });
const apply = (runId: string, fence: bigint, from: number, to: number) =>
  applyBatch(db, {
    feed,
    runId,
    fence,
    newCursor: BigInt(to),
    maxNsuSeen: 0n,
    // Note numbers encode the fence, so the rows tell which holder wrote them.
    rows: Array.from({ length: to - from + 1 }, (_, i) => itemRow(feed, docItem(from + i, Number(fence) * 1000 + from + i), runId)),
  });

async function lastNsu(): Promise<string> {
  const [rows] = await tdb.pool.query<RowDataPacket[]>("SELECT last_nsu FROM nfse_sync_state WHERE ibge = ?", [feed.ibge]);
  return String(rows[0]!.last_nsu);
}

describe("fencing", () => {
  it("lost update: a snapshot read still shows the old token, only the conditional UPDATE sees the new one", async () => {
    const a = await begin(5n, "holder-a");
    const conn = await tdb.pool.getConnection();
    try {
      await conn.query("SET SESSION TRANSACTION ISOLATION LEVEL REPEATABLE READ");
      await conn.beginTransaction();
      const [snap] = await conn.query<RowDataPacket[]>("SELECT fence_token FROM nfse_sync_state WHERE ibge = ?", [feed.ibge]);
      expect(String(snap[0]!.fence_token)).toBe("5");

      await begin(6n, "holder-b"); // commits on another connection while A's transaction is open

      const [again] = await conn.query<RowDataPacket[]>("SELECT fence_token FROM nfse_sync_state WHERE ibge = ?", [feed.ibge]);
      expect(String(again[0]!.fence_token)).toBe("5"); // REPEATABLE READ: the check-then-write would pass
      const [guard] = await conn.query<ResultSetHeader>(FENCE_GUARD_SQL, [feed.ibge, feed.ambiente, feed.tipoNsu, "5", a.run.runId]);
      expect(guard.affectedRows).toBe(0); // the conditional write reads the committed row: refused
      const [naive] = await conn.query<ResultSetHeader>("UPDATE nfse_sync_state SET last_nsu = 999 WHERE ibge = ?", [feed.ibge]);
      expect(naive.affectedRows).toBe(1); // …whereas an unconditional write would have been a lost update
      await conn.rollback();
    } finally {
      conn.release();
    }
    expect(await lastNsu()).toBe("0");
  });

  it("a stale batch racing the newer holder's batches writes nothing", async () => {
    const b = await begin(7n, "holder-b");
    const staleRunId = String(Number(b.run.runId) - 1);
    for (let round = 0; round < 5; round++) {
      const from = round * 3 + 1;
      const [fresh, stale] = await Promise.allSettled([apply(b.run.runId, 7n, from, from + 2), apply(staleRunId, 6n, from, from + 2)]);
      expect(fresh.status).toBe("fulfilled");
      expect(stale.status).toBe("rejected");
      expect(ConnectError.from((stale as PromiseRejectedResult).reason).rawMessage).toMatch(/stale fence token 6/);
    }
    const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT chave FROM nfse_documentos_${feed.ibge} ORDER BY nsu`);
    expect(rows).toHaveLength(15);
    expect(rows.every((r) => String(r.chave).endsWith(String(7000 + rows.indexOf(r) + 1).padStart(4, "0")))).toBe(true);
    expect(await lastNsu()).toBe("15");
  });

  it("a newer holder's BeginRun waits for a batch under way and then includes it in its cursor", async () => {
    const c = await begin(8n, "holder-c");
    let release!: () => void;
    let entered!: () => void;
    const inHook = new Promise<void>((r) => (entered = r));
    const gate = new Promise<void>((r) => (release = r));
    const pending = applyBatch(
      db,
      {
        feed,
        runId: c.run.runId,
        fence: 8n,
        newCursor: 20n,
        maxNsuSeen: 0n,
        rows: [16, 17, 18, 19, 20].map((n) => itemRow(feed, docItem(n, 8000 + n), c.run.runId)),
      },
      async () => {
        entered();
        await gate;
      },
    );
    await inHook;
    const newer = begin(9n, "holder-d");
    // Wait until the newer BeginRun is blocked on the feed row inside the server.
    for (;;) {
      const [procs] = await tdb.pool.query<RowDataPacket[]>(
        "SELECT COUNT(*) AS n FROM information_schema.PROCESSLIST WHERE INFO LIKE 'SELECT s.*%FROM nfse_sync_state s FORCE INDEX (uq_nfse_sync_state_feed) WHERE%FOR UPDATE'",
      );
      if (Number(procs[0]!.n) > 0) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    release();
    await pending;
    expect((await newer).cursor).toBe(20n);
  });
});
