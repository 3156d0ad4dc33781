// ApplyBatches at the SQL level (docs/decisions/0040-pages-of-many-feeds-in-one-transaction.md): the
// pages of several municipalities share one transaction and one statement per step where the tables
// allow; each page is answered on its own (a refused one writes nothing and never fails the others);
// pages of one municipality go in separate rounds, in order, so the second sees the first's rows; and a
// round that fails as a whole is applied again page by page.
import type { RowDataPacket } from "mysql2/promise";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { TipoNsu } from "../../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StaleFenceSchema } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { parseFeed, type Feed } from "../codes.js";
import { municipalityTables } from "../ibge.js";
import { itemRow } from "../mapping/item-rows.js";
import { chaveOf, docItem, eventItem, feedOf } from "../testing/fixtures.js";
import { migratedStoreDb } from "../testing/store-db.js";
import { type ApplyBatchInput, applyBatches } from "./apply-batch.js";
import type { StoreDb } from "./context.js";
import { registerMunicipality } from "./municipalities.js";
import { beginRun } from "./runs.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const IBGES = ["3550308", "3304557", "3106200", "4106902"];
/** One feed per municipality, and a second (RECEPCAO) of the first one. */
const feeds = IBGES.map((ibge) => parseFeed(feedOf(ibge)));
const recepcao = parseFeed(feedOf(IBGES[0]!, TipoNsu.RECEPCAO));
const runs = new Map<Feed, { runId: string; fence: bigint }>();
let nsu = 0;
const next = () => ++nsu;

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  // One connection, so its session counters see every statement.
  db = await migratedStoreDb(tdb, { connectionLimit: 1 });
  for (const feed of feeds) {
    const ibge = feed.ibge;
    await registerMunicipality(db, {
      ibge,
      name: `Município ${ibge}`,
      uf: { "35": "SP", "33": "RJ", "31": "MG", "41": "PR" }[ibge.slice(0, 2)]!,
      active: true,
      feeds: [
        { ambiente: 1, tipoNsu: "DISTRIBUICAO" },
        { ambiente: 1, tipoNsu: "RECEPCAO" },
      ],
    });
  }
  for (const feed of [...feeds, recepcao]) {
    const begun = await beginRun(db, { feed, holder: "h", fence: 3n, trigger: "scheduled", pool: "incremental" });
    runs.set(feed, { runId: begun.run.runId, fence: 3n });
  }
});
afterAll(async () => {
  await tdb?.drop();
});

function page(feed: Feed, items: DistributionItem[], over: Partial<ApplyBatchInput> = {}): ApplyBatchInput {
  const run = runs.get(feed)!;
  const highest = items.reduce((m, i) => (i.nsu > m ? i.nsu : m), 0n);
  return {
    feed,
    runId: run.runId,
    fence: run.fence,
    rows: items.map((item) => itemRow(feed, item, run.runId)),
    newCursor: highest,
    maxNsuSeen: highest,
    ...over,
  };
}

async function questions(): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Questions'");
  return Number(rows[0]!.Value);
}

async function stored(feed: Feed): Promise<{ lastNsu: string; documents: string[]; batches: number }> {
  const t = municipalityTables(feed.ibge);
  const [docs] = await tdb.pool.query<RowDataPacket[]>(`SELECT chave FROM ${t.documentos} WHERE tipo_nsu = ? ORDER BY nsu`, [feed.tipoNsu]);
  const [state] = await tdb.pool.query<RowDataPacket[]>(
    "SELECT s.last_nsu, r.batches FROM nfse_sync_state s JOIN nfse_sync_runs r ON r.id = s.current_run_id WHERE s.ibge = ? AND s.ambiente = ? AND s.tipo_nsu = ?",
    [feed.ibge, feed.ambiente, feed.tipoNsu],
  );
  return { lastNsu: String(state[0]!.last_nsu), documents: docs.map((d) => String(d.chave)), batches: Number(state[0]!.batches) };
}

describe("applyBatches", () => {
  it("writes one-document pages of four municipalities with one statement per step (10, not 4 × 6), each answered on its own", async () => {
    const pages = feeds.map((feed, i) => page(feed, [docItem(next(), 100 + i)]));
    const before = await questions();
    const outcomes = await applyBatches(db, pages);
    // START, fenced runs read, stored rows read, 4 documents' upserts (one table each), feed+run UPDATE, its
    // guard, COMMIT.
    expect((await questions()) - before - 1).toBe(10);
    for (const [i, o] of outcomes.entries()) {
      expect(o.ok, `page ${i}`).toBe(true);
      if (!o.ok) continue;
      expect(o.value.counts.documentsInserted).toBe(1);
      expect(o.value.cursor).toBe(pages[i]!.newCursor);
      expect(await stored(feeds[i]!)).toMatchObject({ lastNsu: String(pages[i]!.newCursor), documents: [chaveOf(100 + i)], batches: 1 });
    }
  });

  it("refuses a stale fence and a cursor beyond the page on their own entries, writing nothing for them, and commits the others", async () => {
    const [a, b, c, d] = feeds as [Feed, Feed, Feed, Feed];
    const before = await Promise.all([a, b, c, d].map(stored));
    const outcomes = await applyBatches(db, [
      page(a, [docItem(next(), 200)]),
      page(b, [docItem(next(), 201)], { fence: 2n }),
      page(c, [docItem(next(), 202)], { newCursor: 9_999n }),
      page(d, [docItem(next(), 203), eventItem(next(), chaveOf(203), "101101")]),
    ]);
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, false, true]);
    const stale = outcomes[1]!.ok ? undefined : outcomes[1]!.error;
    expect(stale?.code).toBe(Code.FailedPrecondition);
    expect(stale?.findDetails(StaleFenceSchema)[0]?.currentFenceToken).toBe(3n);
    const beyond = outcomes[2]!.ok ? undefined : outcomes[2]!.error;
    expect(beyond?.code).toBe(Code.InvalidArgument);
    expect(beyond?.rawMessage).toContain("new_cursor 9999");
    expect((await stored(b)).documents).toEqual(before[1]!.documents);
    expect((await stored(c)).documents).toEqual(before[2]!.documents);
    expect((await stored(a)).documents).toContain(chaveOf(200));
    expect(outcomes[3]!.ok && outcomes[3]!.value.counts).toMatchObject({ documentsInserted: 1, eventsInserted: 1, statusChanges: 1 });
  });

  it("applies two pages of one municipality in order, in separate rounds: the second sees the note the first wrote", async () => {
    const [a] = feeds as [Feed];
    const note = 300;
    const outcomes = await applyBatches(db, [page(a, [docItem(next(), note)]), page(recepcao, [docItem(next(), note)])]);
    expect(outcomes.map((o) => o.ok && o.value.counts.documentsInserted)).toEqual([1, 0]);
    // The same note distributed by the second feed: unchanged, its NSU there kept as an alias.
    expect(outcomes[1]!.ok && outcomes[1]!.value.counts.documentsUnchanged).toBe(1);
    const [aliases] = await tdb.pool.query<RowDataPacket[]>(
      "SELECT item_id FROM nfse_nsu_aliases WHERE ibge = ? AND tipo_nsu = 'RECEPCAO'",
      [a.ibge],
    );
    expect(aliases.map((r) => String(r.item_id))).toContain(chaveOf(note));
  });

  it("applies a round again page by page when it fails as a whole, and answers each page as it went alone", async () => {
    const [a, b, c] = feeds as [Feed, Feed, Feed];
    let rounds = 0;
    const outcomes = await applyBatches(
      db,
      [page(a, [docItem(next(), 400)]), page(b, [docItem(next(), 401)]), page(c, [docItem(next(), 402)], { fence: 1n })],
      async () => {
        // The round of three fails once, after its rows are written: all of them are rolled back.
        if (rounds++ === 0) throw new Error("the server refused a statement");
      },
    );
    // The failed round, then each page alone (the hook runs in every transaction, a refused page's too).
    expect(rounds).toBe(4);
    expect(outcomes.map((o) => o.ok)).toEqual([true, true, false]);
    expect(outcomes[2]!.ok ? undefined : outcomes[2]!.error).toBeInstanceOf(ConnectError);
    expect((await stored(a)).documents).toContain(chaveOf(400));
    expect((await stored(b)).documents).toContain(chaveOf(401));
    expect((await stored(c)).documents).not.toContain(chaveOf(402));
  });

  it("answers INTERNAL for a page that fails alone, keeping the answers of the pages committed before it", async () => {
    const [a, b] = feeds as [Feed, Feed];
    let transactions = 0;
    const outcomes = await applyBatches(
      db,
      // a and b share the first round; RECEPCAO of a's municipality goes in the second, which fails.
      [page(a, [docItem(next(), 500)]), page(recepcao, [docItem(next(), 501)]), page(b, [docItem(next(), 502)])],
      async () => {
        if (transactions++ > 0) throw new Error("the server refused a statement");
      },
    );
    expect(outcomes.map((o) => o.ok)).toEqual([true, false, true]);
    const failed = outcomes[1]!.ok ? undefined : outcomes[1]!.error;
    expect(failed?.code).toBe(Code.Internal);
    expect((failed?.cause as Error | undefined)?.message).toBe("the server refused a statement");
    expect((await stored(recepcao)).documents).not.toContain(chaveOf(501));
    expect((await stored(a)).documents).toContain(chaveOf(500));
  });
});
