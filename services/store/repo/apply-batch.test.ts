// ApplyBatch at the SQL level: the upserts go as prepared statements cut by the byte budget, and the
// derived statuses of a batch are written by one UPDATE.
import { join } from "node:path";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../libs/db/migrate.js";
import { projectRoot } from "../../../libs/config/paths.js";
import type { DistributionItem } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { parseFeed } from "../codes.js";
import { municipalityTables } from "../ibge.js";
import { createPageTokens } from "../../../libs/rpc/page-token.js";
import { PreparedMunicipalities } from "../sql/prepared-municipalities.js";
import { chaveOf, docItem, eventItem, feedOf } from "../testing/fixtures.js";
import { applyBatch, statusUpdate } from "./apply-batch.js";
import type { StoreDb } from "./context.js";
import { registerMunicipality } from "./municipalities.js";
import { beginRun } from "./runs.js";

let tdb: ThrowawayDatabase;
let db: StoreDb;
const feed = parseFeed(feedOf("4314902"));
const t = municipalityTables(feed.ibge);
let runId: string;
let nsu = 0;

beforeAll(async () => {
  tdb = await createThrowawayDatabase();
  await migrate(tdb.pool, join(projectRoot(), "migrations"));
  // One connection, so its session counters see every statement of every batch.
  db = {
    pool: tdb.newPool({ connectionLimit: 1 }),
    statementBudgetBytes: 64 * 1024,
    tokens: createPageTokens({ secret: Buffer.from("k".repeat(32)), errorDomain: "malha.store" }),
  };
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

/** Applies the items (their NSUs already set by the caller) and reports the session's UPDATE count when
 *  the rows and statuses are written. */
async function apply(items: DistributionItem[]) {
  let updates = 0;
  const result = await applyBatch(db, { feed, runId, fence: 1n, items, newCursor: BigInt(nsu), maxNsuSeen: 0n }, async (conn) => {
    const [rows] = await conn.query<RowDataPacket[]>("SHOW SESSION STATUS LIKE 'Com_update'");
    updates = Number(rows[0]!.Value);
  });
  return { counts: result.counts, updates };
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
    // Since the previous hook: that batch's state and run updates, then this one's fence claim and one status UPDATE.
    expect(batch.updates - setup.updates).toBe(4);
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

describe("applyBatch with more municipalities writing than the statement cache holds", () => {
  it("prepares statements for the municipality holding the one place and writes the other's rows as text", async () => {
    // The same single connection, so SHOW SESSION STATUS counts this test's statements.
    const limited: StoreDb = { ...db, prepared: new PreparedMunicipalities(1, 60_000) };
    const other = parseFeed(feedOf("3550308"));
    await registerMunicipality(limited, {
      ibge: other.ibge,
      name: "São Paulo",
      uf: "SP",
      active: true,
      feeds: [{ ambiente: 1, tipoNsu: "DISTRIBUICAO" }],
    });
    const otherRun = (await beginRun(limited, { feed: other, holder: "h", fence: 1n, trigger: "scheduled", pool: "incremental" })).run
      .runId;
    const counter = async (name: string) => {
      const [rows] = await db.pool.query<RowDataPacket[]>(`SHOW SESSION STATUS LIKE '${name}'`);
      return Number(rows[0]!.Value);
    };
    const page = (first: number) => Array.from({ length: 16 }, (_, i) => docItem(first + i, 900 + first + i));

    const ownNsu = nsu + 1;
    nsu += 16;
    await applyBatch(limited, { feed, runId, fence: 1n, items: page(ownNsu), newCursor: BigInt(nsu), maxNsuSeen: 0n });
    const prepared = await counter("Com_stmt_prepare");
    const executed = await counter("Com_stmt_execute");
    await applyBatch(limited, { feed: other, runId: otherRun, fence: 1n, items: page(1), newCursor: 16n, maxNsuSeen: 0n });
    expect(await counter("Com_stmt_prepare")).toBe(prepared);
    expect(await counter("Com_stmt_execute")).toBe(executed);
    const [rows] = await tdb.pool.query<RowDataPacket[]>(`SELECT nsu FROM ${municipalityTables(other.ibge).documentos} ORDER BY nsu`);
    expect(rows.map((r) => Number(r.nsu))).toEqual(Array.from({ length: 16 }, (_, i) => i + 1));
    // The place's holder keeps using prepared statements: two more 8-row executions.
    const moreNsu = nsu + 1;
    nsu += 16;
    await applyBatch(limited, { feed, runId, fence: 1n, items: page(moreNsu), newCursor: BigInt(nsu), maxNsuSeen: 0n });
    expect(await counter("Com_stmt_execute")).toBe(executed + 2);
  });
});
