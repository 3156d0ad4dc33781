// ApplyBatch at the SQL level: a page costs a fixed handful of statements (decision 0035) — the fenced
// run read, one read of the stored rows, one text upsert per table cut only by the byte budget, the
// status UPDATE when a status changes and one UPDATE of the feed and run rows — and what the folding
// could break still holds: rows straddling stored ones, duplicates within a page, events before their
// note, a page beyond the statement budget, and a stale fence that writes nothing at all.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { parseFeed } from "../codes.js";
import { municipalityTables } from "../ibge.js";
import { chaveOf, docItem, eventIdOf, eventItem, faultItem, feedOf } from "../testing/fixtures.js";
import { migratedStoreDb } from "../testing/store-db.js";
import { itemRow } from "../mapping/item-rows.js";
import { COMMIT_STATEMENT } from "../../../libs/db/tx.js";
import { queryStatements } from "../../../libs/db/statement-bytes.js";
import { applyBatch, movedGuard, statusUpdate } from "./apply-batch.js";
import type { StoreConfig } from "../config.js";
import { fitStatementBudget } from "../db.js";
import type { StoreDb } from "./context.js";
import { registerMunicipality } from "./municipalities.js";
import { beginRun } from "./runs.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const feed = parseFeed(feedOf("4314902"));
const t = municipalityTables(feed.ibge);
let runId: string;
const rowsOf = (items: DistributionItem[]) => items.map((item) => itemRow(feed, item, runId));
let nsu = 0;

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  // One connection, so its session counters see every statement of every batch.
  db = await migratedStoreDb(tdb, { connectionLimit: 1 });
  await registerMunicipality(db, {
    ibge: feed.ibge,
    name: "Porto Alegre",
    uf: "RS",
    active: true,
    feeds: [{ ambiente: 1, tipoNsu: "DISTRIBUICAO" }],
  });
  runId = (await beginRun(db, { feed, holder: "h", fence: 1n, trigger: "scheduled", pool: "incremental" })).run.runId;
});
afterAll(async () => {
  await tdb?.drop();
});

/** The session's counter (the pool has one connection). */
async function counter(name: string): Promise<number> {
  const [rows] = await db.pool.query<RowDataPacket[]>(`SHOW SESSION STATUS LIKE '${name}'`);
  return Number(rows[0]!.Value);
}

/** Applies the items (their NSUs already set by the caller) and reports how many statements it sent
 *  (Questions, less the one reading it) and the session's single-table UPDATE count when the rows and
 *  statuses are written. */
async function apply(items: DistributionItem[]) {
  let updates = 0;
  const before = await counter("Questions");
  const result = await applyBatch(
    db,
    { feed, runId, fence: 1n, rows: rowsOf(items), newCursor: BigInt(nsu), maxNsuSeen: 0n },
    async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Com_update'");
      updates = Number(rows[0]!.Value);
    },
  );
  // Less the hook's own statement and the counter's.
  const statements = (await counter("Questions")) - before - 2;
  return { counts: result.counts, updates, statements };
}
const next = () => ++nsu;

async function notes(): Promise<Record<string, string>> {
  const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT chave, situacao, chave_substituta FROM ${t.documentos}`);
  return Object.fromEntries(rows.map((r) => [String(r.chave), `${String(r.situacao)} ${String(r.chave_substituta)}`]));
}

describe("applyBatch", () => {
  it("writes a batch larger than one statement, with XML beyond the budget, byte for byte", async () => {
    const items = Array.from({ length: 45 }, (_, i) => docItem(next(), 100 + i, { xmlPadding: i % 5 === 0 ? 100_000 : 2_000 }));
    const first = await apply(items);
    expect(first.counts.documentsInserted).toBe(45);
    // Nine 100 KB XMLs in a 64 KB budget: the documents' upsert is cut into more statements than the
    // five around it (START, fenced run read, stored rows read, feed+run UPDATE, COMMIT), none refused.
    expect(first.statements).toBeGreaterThan(5 + 9);
    const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT chave, nsu, xml, documento_pb FROM ${t.documentos} ORDER BY nsu`);
    expect(rows.map((r) => String(r.chave))).toEqual(items.map((i) => i.chave));
    for (const [i, r] of rows.entries()) {
      expect(Buffer.compare(r.xml as Buffer, Buffer.from(items[i]!.xml))).toBe(0);
      expect((r.documento_pb as Buffer).byteLength).toBeGreaterThan(0);
    }
    const again = await apply(items);
    expect(again.counts.documentsUnchanged).toBe(45);
    const changed = await apply(items.slice(0, 3).map((d, i) => docItem(d.nsu, 100 + i, { variant: "v2" })));
    expect(changed.counts.documentsUpdated).toBe(3);
    const [updated] = await tdb.pool.query<RowDataPacket[]>(`SELECT xml FROM ${t.documentos} WHERE chave = ?`, [chaveOf(101)]);
    expect(Buffer.from(updated[0]!.xml as Buffer).toString()).toContain("v2");
  });

  it("refreshes every changed status with one UPDATE, counting a note that changed twice once", async () => {
    const [a, b, c, d, gone, late] = [601, 602, 603, 604, 605, 606].map(chaveOf);
    const setup = await apply([docItem(next(), 601), docItem(next(), 602), docItem(next(), 603), docItem(next(), 604)]);
    expect(setup.counts.statusChanges).toBe(0);
    const batch = await apply([
      eventItem(next(), a!, "101103"), // A: analysis pending…
      eventItem(next(), a!, "101101"), // …then cancelled, in the same batch
      eventItem(next(), b!, "105102", { chaveSubstituta: chaveOf(699) }),
      eventItem(next(), c!, "101103"), // C: pending, then denied: back where it was
      eventItem(next(), c!, "105105"),
      eventItem(next(), gone!, "101101"), // no such note: nothing may be created for it
      eventItem(next(), late!, "101101"), // the event first, its note later in the batch
      docItem(next(), 606),
    ]);
    expect(batch.counts.statusChanges).toBe(3);
    // Since the previous hook: this batch's one status UPDATE (the feed and run rows are one multi-table UPDATE).
    expect(batch.updates - setup.updates).toBe(1);
    expect(await notes()).toMatchObject({
      [a!]: "CANCELADA null",
      [b!]: `SUBSTITUIDA ${chaveOf(699)}`,
      [c!]: "ATIVA null",
      [d!]: "ATIVA null",
      [late!]: "CANCELADA null",
    });
    expect(Object.keys(await notes())).not.toContain(gone);
  });

  it("derives a status from the note's events in NSU order, not in the order they were written", async () => {
    const note = chaveOf(651);
    await apply([docItem(next(), 651)]);
    const [lower, higher] = [next(), next()];
    // Written higher NSU first: the first substitution by NSU names the replacement.
    await apply([
      eventItem(higher, note!, "105102", { chaveSubstituta: chaveOf(698), seq: 2 }),
      eventItem(lower, note!, "105102", { chaveSubstituta: chaveOf(697), seq: 1 }),
    ]);
    expect((await notes())[note!]).toBe(`SUBSTITUIDA ${chaveOf(697)}`);
  });

  it("builds the status UPDATE with a CASE per column, bounded by the changed notes", () => {
    const u = statusUpdate(t, [
      { chave: "a", situacao: "CANCELADA", chaveSubstituta: null },
      { chave: "b", situacao: "SUBSTITUIDA", chaveSubstituta: "c" },
    ]);
    expect(u.sql.replace(/\s+/g, " ")).toBe(
      `UPDATE ${t.documentos} SET situacao = CASE chave WHEN ? THEN ? WHEN ? THEN ? END, ` +
        "chave_substituta = CASE chave WHEN ? THEN ? WHEN ? THEN ? END WHERE chave IN (?, ?)",
    );
    expect(u.params).toEqual(["a", "CANCELADA", "b", "SUBSTITUIDA", "a", null, "b", "c", "a", "b"]);
  });
});

describe("a round's COMMIT behind its guard (decision 0068)", () => {
  it("commits when the UPDATE before the guard moved every row, and stops before the COMMIT when it moved fewer, in one query or split", async () => {
    const conn = await db.pool.getConnection();
    const q = (sql: string) => Buffer.from(sql);
    const round = (ids: string, add: number) => [
      q("START TRANSACTION"),
      q(`UPDATE guard_probe SET n = n + ${add} WHERE id IN (${ids})`),
      movedGuard(2),
      q(COMMIT_STATEMENT),
    ];
    const stored = async () => (await conn.query<RowDataPacket[]>("SELECT n FROM guard_probe ORDER BY id"))[0].map((r) => r.n);
    try {
      await conn.query("CREATE TABLE guard_probe (id INT PRIMARY KEY, n INT NOT NULL) ENGINE=InnoDB");
      await conn.query("INSERT INTO guard_probe VALUES (1, 0), (2, 0)");
      await queryStatements(conn, round("1, 2", 1), 1 << 20);
      expect(await stored()).toEqual([1, 1]);
      // One row of two: the server stops at the guard, and the COMMIT behind it never runs.
      await expect(queryStatements(conn, round("1, 3", 10), 1 << 20)).rejects.toMatchObject({ code: "ER_SUBQUERY_NO_1_ROW" });
      await conn.rollback();
      expect(await stored()).toEqual([1, 1]);
      // A budget of one byte sends each statement on its own: the guard still reads the UPDATE's count.
      await expect(queryStatements(conn, round("2, 3", 100), 1)).rejects.toMatchObject({ code: "ER_SUBQUERY_NO_1_ROW" });
      await conn.rollback();
      expect(await stored()).toEqual([1, 1]);
      await queryStatements(conn, round("1, 2", 1), 1);
      expect(await stored()).toEqual([2, 2]);
    } finally {
      await conn.query("DROP TABLE IF EXISTS guard_probe");
      conn.release();
    }
  });
});

describe("applyBatch's statements", () => {
  it("writes a page of documents and events with eight statements, no prepared one", async () => {
    const prepared = await counter("Com_stmt_prepare");
    const items: DistributionItem[] = [];
    // Events of notes the store does not hold: no status changes, so no status UPDATE.
    for (let i = 0; i < 25; i++) items.push(docItem(next(), 1000 + i), eventItem(next(), chaveOf(1100 + i), "101101"));
    const page = await apply(items);
    expect(page.counts).toMatchObject({ documentsInserted: 25, eventsInserted: 25, statusChanges: 0 });
    // START, fenced run read, stored rows read, documents' upsert, events' upsert, feed+run UPDATE, its
    // guard, COMMIT.
    expect(page.statements).toBe(8);
    expect(await counter("Com_stmt_prepare")).toBe(prepared);
  });

  it("opens a page's transaction with its fence check and its stored rows' read in one query, and sends its writes, statuses, cursor and COMMIT as another (decisions 0059, 0068)", async () => {
    const sent: string[] = [];
    // The store's own pool, its connections' queries noted as they are sent, and a COMMIT of their own too.
    const pool = Object.create(db.pool) as StoreDb["pool"];
    pool.getConnection = async () => {
      const conn = await db.pool.getConnection();
      const commit = conn.commit.bind(conn);
      conn.commit = () => {
        sent.push("commit()");
        return commit();
      };
      const query = conn.query.bind(conn);
      conn.query = ((...args: Parameters<typeof query>) => {
        const sql = args[0] as unknown;
        const text = typeof sql === "string" ? sql : String((sql as { sql: unknown }).sql);
        sent.push(
          text
            .trim()
            .split(/\s+/, 2)
            .join(" ")
            .replace(/^\(SELECT \d+/, "(SELECT"),
        );
        return query(...args);
      }) as typeof conn.query;
      return conn;
    };
    const items: DistributionItem[] = [];
    // Each note with its cancellation: documents, events and a status change for every note.
    for (let i = 0; i < 10; i++) items.push(docItem(next(), 7300 + i), eventItem(next(), chaveOf(7300 + i), "101101"));
    const before = await counter("Questions");
    const page = await applyBatch({ ...db, pool }, { feed, runId, fence: 1n, rows: rowsOf(items), newCursor: BigInt(nsu), maxNsuSeen: 0n });
    expect(page.counts).toMatchObject({ documentsInserted: 10, eventsInserted: 10, statusChanges: 10 });
    expect(sent).toEqual(["START TRANSACTION;", "INSERT INTO"]);
    // START, the two reads, documents, events, statuses, feed+run UPDATE, its guard, COMMIT: nine
    // statements, two round trips.
    expect((await counter("Questions")) - before - 1).toBe(9);
    const stored = await notes();
    expect(stored[chaveOf(7300)]).toMatch(/^CANCELADA/);
  });

  it("splits a page beyond the budget fitted to max_allowed_packet into statements the server takes, refusing nothing", async () => {
    const fitted: StoreDb = { ...db };
    const budget = await fitStatementBudget(fitted, { maxStatementBytes: 16 * 1024 * 1024 } as StoreConfig);
    // ≈ 1 MB of XML each, written as its own bytes (decision 0057): more than the budget in all.
    const count = Math.ceil(budget / (1024 * 1024)) + 2;
    const items = Array.from({ length: count }, (_, i) => docItem(next(), 1600 + i, { xmlPadding: 1024 * 1024 }));
    const before = await counter("Questions");
    const page = await applyBatch(fitted, { feed, runId, fence: 1n, rows: rowsOf(items), newCursor: BigInt(nsu), maxNsuSeen: 0n });
    expect(page.counts.documentsInserted).toBe(count);
    // START, fenced run read, stored rows read, ≥ 2 upserts, feed+run UPDATE, COMMIT (and the counter's own).
    expect((await counter("Questions")) - before - 1).toBeGreaterThanOrEqual(7);
    const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT SUM(LENGTH(xml)) AS bytes FROM ${t.documentos} WHERE chave IN (?)`, [
      items.map((i) => i.chave),
    ]);
    expect(Number(rows[0]!.bytes)).toBe(items.reduce((n, i) => n + i.xml.byteLength, 0));
  });

  it("writes a page straddling stored rows: new ones inserted, changed ones updated, the same ones left", async () => {
    const [kept, changed] = [next(), next()];
    await apply([docItem(kept, 1201), docItem(changed, 1202), eventItem(next(), chaveOf(1201), "101103", { seq: 1 })]);
    const fresh = next();
    const page = await apply([
      docItem(kept, 1201),
      docItem(changed, 1202, { variant: "v2" }),
      docItem(fresh, 1203),
      eventItem(next(), chaveOf(1201), "105105", { seq: 1 }),
    ]);
    expect(page.counts).toMatchObject({ documentsInserted: 1, documentsUpdated: 1, documentsUnchanged: 1, eventsInserted: 1 });
    // 1201: the stored request and this page's denial: back to ATIVA.
    expect(page.counts.statusChanges).toBe(1);
    expect((await notes())[chaveOf(1201)]).toBe("ATIVA null");
    const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT chave, nsu, xml FROM ${t.documentos} WHERE chave IN (?) ORDER BY nsu`, [
      [1201, 1202, 1203].map(chaveOf),
    ]);
    expect(rows.map((r) => Number(r.nsu))).toEqual([kept, changed, fresh]);
    expect(Buffer.from(rows[1]!.xml as Buffer).toString()).toContain("v2");
  });

  it("keeps the first NSU of a chave repeated within a page, stores its latest XML and records the other NSU as an alias", async () => {
    const [first, second] = [next(), next()];
    const page = await apply([docItem(first, 1301), docItem(second, 1301, { variant: "v2" })]);
    expect(page.counts).toMatchObject({ documentsInserted: 1, documentsUpdated: 1 });
    const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT nsu, xml FROM ${t.documentos} WHERE chave = ?`, [chaveOf(1301)]);
    expect(rows).toHaveLength(1);
    expect(Number(rows[0]!.nsu)).toBe(first);
    expect(Buffer.from(rows[0]!.xml as Buffer).toString()).toContain("v2");
    const [aliases] = await tdb.pool.query<RowDataPacket[]>("SELECT nsu, kind FROM nfse_nsu_aliases WHERE item_id = ?", [chaveOf(1301)]);
    expect(aliases.map((a) => `${String(a.nsu)} ${String(a.kind)}`)).toEqual([`${second} documento`]);
  });

  it("derives the status of a note from events stored by earlier pages, and of a repeated event by its first NSU", async () => {
    const note = chaveOf(1401);
    const [request, substitution] = [next(), next()];
    await apply([eventItem(request, note, "101103"), eventItem(substitution, note, "105102", { chaveSubstituta: chaveOf(1499) })]);
    expect(Object.keys(await notes())).not.toContain(note);
    // The note arrives pages later, with the substitution distributed again at a later NSU.
    const page = await apply([docItem(next(), 1401), eventItem(next(), note, "105102", { chaveSubstituta: chaveOf(1499) })]);
    expect(page.counts).toMatchObject({ documentsInserted: 1, eventsUnchanged: 1, statusChanges: 1 });
    expect((await notes())[note]).toBe(`SUBSTITUIDA ${chaveOf(1499)}`);
    const [events] = await tdb.pool.query<RowDataPacket[]>(`SELECT nsu FROM ${t.eventos} WHERE id_evento = ?`, [eventIdOf(note, "105102")]);
    expect(events.map((e) => Number(e.nsu))).toEqual([substitution]);
  });

  it("with a stale fence writes nothing: no document, event, alias, quarantine row, status, cursor or run change", async () => {
    const note = chaveOf(1501);
    await apply([docItem(next(), 1501)]);
    const snapshot = async () => {
      const [state] = await tdb.pool.query<RowDataPacket[]>(
        "SELECT last_nsu, max_nsu, documents_total, events_total, faults_total, locked_at FROM nfse_sync_state WHERE ibge = ?",
        [feed.ibge],
      );
      const [run] = await tdb.pool.query<RowDataPacket[]>(
        "SELECT to_nsu, batches, documents, events, faults FROM nfse_sync_runs WHERE id = ?",
        [runId],
      );
      const count = async (table: string) => {
        const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM ${table}`);
        return Number(rows[0]!.n);
      };
      return {
        state: state[0],
        run: run[0],
        documents: await count(t.documentos),
        events: await count(t.eventos),
        aliases: await count("nfse_nsu_aliases"),
        quarantine: await count("nfse_quarantine"),
        notes: await notes(),
      };
    };
    const before = await snapshot();
    const items = [
      docItem(next(), 1502),
      docItem(next(), 1501, { variant: "v2" }),
      eventItem(next(), note, "101101"),
      faultItem(next(), Buffer.from("not gzip")),
    ];
    const stale = applyBatch(db, { feed, runId, fence: 0n, rows: rowsOf(items), newCursor: BigInt(nsu), maxNsuSeen: BigInt(nsu) });
    await expect(stale).rejects.toThrow(/stale fence token 0/);
    expect(await snapshot()).toEqual(before);
  });
});
