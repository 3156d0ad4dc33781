// kill -9 of the store in the middle of an ApplyBatch: after a restart the feed holds all of that batch
// or none of it, and the cursor agrees with the rows (no gap, no duplicate, no half batch).
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunTrigger } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService } from "../../test/support/service-process.js";
import { docItem, feedOf, storeClient } from "./testing/fixtures.js";

const IBGE = "2927408";
const BATCH = 60;
const BATCHES = 8;
let db: ThrowawayDatabase;

beforeAll(async () => {
  db = await createThrowawayDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const batchItems = (k: number) =>
  Array.from({ length: BATCH }, (_, i) => docItem(k * BATCH + i + 1, k * BATCH + i + 1, { xmlPadding: 20_000 }));

it("keeps batches atomic across a SIGKILL in the middle of one", async () => {
  // A small statement budget splits every batch into dozens of INSERTs, so the kill lands inside one.
  const env = { MYSQL_URL: db.url, STORE_MAX_STATEMENT_BYTES: "65536" };
  const first = await startService("store", env);
  const a = storeClient(first.baseUrl);
  await a.client.registerMunicipality({
    ibge: IBGE,
    name: "Salvador",
    uf: "BA",
    active: true,
    feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
  });
  const run = await a.client.beginRun({ feed: feedOf(IBGE), holder: "coord-a/w1", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });

  // Sees rows of transactions that have not committed yet.
  const observer = db.newPool({ connectionLimit: 1 });
  await observer.query("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
  let killedMidBatch = false;
  let committed = 0;
  for (let k = 0; k < BATCHES && !killedMidBatch; k++) {
    const call = a.client
      .applyBatch({ feed: feedOf(IBGE), runId: run.runId, fenceToken: 1n, items: batchItems(k), newCursor: BigInt((k + 1) * BATCH) })
      .then(
        () => "done" as const,
        () => "failed" as const,
      );
    let settled = false;
    void call.then(() => (settled = true));
    while (!settled) {
      const [rows] = await observer.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM nfse_documentos_${IBGE}`);
      const n = Number(rows[0]!.n);
      if (n > k * BATCH && n < (k + 1) * BATCH) {
        first.kill("SIGKILL");
        killedMidBatch = true;
        break;
      }
    }
    if ((await call) === "done") committed = k + 1;
  }
  await first.exited;
  a.close();
  await observer.end();
  expect(killedMidBatch).toBe(true);

  const second = await startService("store", env);
  const b = storeClient(second.baseUrl);
  try {
    const resumed = await b.client.beginRun({ feed: feedOf(IBGE), holder: "coord-b/w1", fenceToken: 2n, trigger: RunTrigger.RESUME });
    const [rows] = await db.pool.query<RowDataPacket[]>(
      `SELECT COUNT(*) AS n, COUNT(DISTINCT nsu) AS d, COALESCE(MAX(nsu), 0) AS m FROM nfse_documentos_${IBGE}`,
    );
    const { n, d, m } = rows[0]!;
    // All or nothing of the interrupted batch (its commit may have raced the kill, its reply was lost).
    expect([committed * BATCH, (committed + 1) * BATCH]).toContain(Number(n));
    expect(Number(d)).toBe(Number(n));
    expect(String(m)).toBe(String(resumed.cursor));
    expect(resumed.cursor).toBe(BigInt(Number(n)));
    committed = Number(n) / BATCH;

    // The new holder finishes the job from the cursor: one row per NSU, no gap, no duplicate.
    for (let k = committed; k < BATCHES; k++) {
      await b.client.applyBatch({
        feed: feedOf(IBGE),
        runId: resumed.runId,
        fenceToken: 2n,
        items: batchItems(k),
        newCursor: BigInt((k + 1) * BATCH),
      });
    }
    const gaps = await b.client.findNsuGaps({ feed: feedOf(IBGE) });
    expect(gaps.gaps).toEqual([]);
    const [all] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n, COUNT(DISTINCT chave) AS c FROM nfse_documentos_${IBGE}`);
    expect(Number(all[0]!.n)).toBe(BATCHES * BATCH);
    expect(Number(all[0]!.c)).toBe(BATCHES * BATCH);
  } finally {
    b.close();
    second.kill("SIGTERM");
    await second.exited;
  }
});
