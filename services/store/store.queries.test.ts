// Read side and housekeeping over gRPC against a real store process and MariaDB.
import type { RowDataPacket } from "mysql2/promise";
import { Code } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { FaultReason } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { DocumentStatus } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { TipoEvento } from "../../libs/gen/malha/nfse/v1/event_pb.js";
import { RunOutcome, RunTrigger, SyncStatus } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { chaveOf, docItem, eventItem, faultItem, feedOf, rejection, storeClient } from "./testing/fixtures.js";
import { documentQuery, eventQuery } from "./repo/queries.js";
import { parseIbge } from "./ibge.js";
import { municipalityTables } from "./ibge.js";

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;
const IBGE = "3304557";
const feed = feedOf(IBGE);
let runId = "";

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url, STORE_PAGE_TOKEN_SECRET: "test-secret-0123456789" });
  ({ client, close } = storeClient(store.baseUrl));
  await client.registerMunicipality({
    ibge: IBGE,
    name: "Rio de Janeiro",
    uf: "RJ",
    active: true,
    feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
  });
  const run = await client.beginRun({ feed, holder: "coord-a/w1", fenceToken: 3n, trigger: RunTrigger.SCHEDULED });
  runId = run.runId;
  // NSUs 1..30 with holes at 8, 9 and 20; prestadores alternate; emission one day apart.
  const items = [];
  for (let nsu = 1; nsu <= 30; nsu++) {
    if (nsu === 8 || nsu === 9 || nsu === 20) continue;
    if (nsu === 12) items.push(faultItem(nsu, Buffer.from("not-base64-!!")));
    else if (nsu === 25) items.push(eventItem(nsu, chaveOf(3), "101101"));
    else {
      items.push(
        docItem(nsu, nsu, {
          prestador: nsu % 2 ? "11222333000181" : "99888777000166",
          dhEmi: new Date(Date.UTC(2025, 0, nsu, 12)),
          competencia: { year: 2025, month: 1, day: nsu },
        }),
      );
    }
  }
  await client.applyBatch({ feed, runId, fenceToken: 3n, items, newCursor: 30n });
});
afterAll(async () => {
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

describe("queries", () => {
  it("pages through documents with keyset tokens and refuses tampered or reused tokens", async () => {
    const seen: bigint[] = [];
    let token = "";
    let pages = 0;
    do {
      const page = await client.listDocuments({ ibge: IBGE, pageSize: 7, pageToken: token });
      seen.push(...page.documents.map((d) => d.nsu));
      token = page.nextPageToken;
      pages++;
    } while (token !== "");
    expect(pages).toBe(4);
    const expected = Array.from({ length: 30 }, (_, i) => BigInt(i + 1)).filter((n) => ![8n, 9n, 12n, 20n, 25n].includes(n));
    expect(seen).toEqual(expected);

    const first = await client.listDocuments({ ibge: IBGE, pageSize: 5 });
    const [body, sig] = first.nextPageToken.split(".");
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(body!, "base64url").toString()), k: ["1", "DISTRIBUICAO", "0"] }),
    ).toString("base64url");
    for (const bad of [`${forged}.${sig}`, "garbage", `${body}.AAAA`]) {
      const err = await rejection(client.listDocuments({ ibge: IBGE, pageSize: 5, pageToken: bad }));
      expect(err.code).toBe(Code.InvalidArgument);
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_PAGE_TOKEN");
    }
    const changed = await rejection(
      client.listDocuments({ ibge: IBGE, pageSize: 5, pageToken: first.nextPageToken, prestadorDocument: "11222333000181" }),
    );
    expect(changed.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_PAGE_TOKEN");
    expect(changed.rawMessage).toContain("page_token");
    const otherMethod = await rejection(client.listEvents({ ibge: IBGE, pageSize: 5, pageToken: first.nextPageToken }));
    expect(otherMethod.code).toBe(Code.InvalidArgument);
    expect(otherMethod.rawMessage).toContain("issued for ListDocuments");
    const negative = await rejection(client.listDocuments({ ibge: IBGE, pageSize: -1 }));
    expect(negative.code).toBe(Code.InvalidArgument);
    expect(negative.rawMessage).toContain("page_size");
  });

  it("filters documents by prestador, emission range, competência, NSU range, status and chave", async () => {
    const byPrest = await client.listDocuments({ ibge: IBGE, prestadorDocument: "99888777000166", pageSize: 100 });
    expect(byPrest.documents.every((d) => Number(d.nsu) % 2 === 0)).toBe(true);
    expect(byPrest.documents).toHaveLength(12);

    const emission = await client.listDocuments({
      ibge: IBGE,
      emissionRange: { start: timestampFromDate(new Date(Date.UTC(2025, 0, 5))), end: timestampFromDate(new Date(Date.UTC(2025, 0, 11))) },
      pageSize: 2,
    });
    expect(emission.documents.map((d) => d.nsu)).toEqual([5n, 6n]);
    const emission2 = await client.listDocuments({
      ibge: IBGE,
      emissionRange: { start: timestampFromDate(new Date(Date.UTC(2025, 0, 5))), end: timestampFromDate(new Date(Date.UTC(2025, 0, 11))) },
      pageSize: 2,
      pageToken: emission.nextPageToken,
    });
    expect(emission2.documents.map((d) => d.nsu)).toEqual([7n, 10n]);

    const comp = await client.listDocuments({
      ibge: IBGE,
      competenciaRange: { start: { year: 2025, month: 1, day: 28 }, end: { year: 2025, month: 1, day: 30 } },
    });
    expect(comp.documents.map((d) => d.nsu)).toEqual([28n, 29n, 30n]);
    expect((await client.listDocuments({ ibge: IBGE, nsuRange: { start: 9n, end: 11n } })).documents.map((d) => d.nsu)).toEqual([10n, 11n]);
    const cancelled = await client.listDocuments({ ibge: IBGE, status: DocumentStatus.CANCELADA });
    expect(cancelled.documents.map((d) => d.document?.chave)).toEqual([chaveOf(3)]);
    expect((await client.listDocuments({ ibge: IBGE, chave: chaveOf(4) })).documents).toHaveLength(1);
    expect((await rejection(client.listDocuments({ ibge: IBGE, chave: "123" }))).code).toBe(Code.InvalidArgument);
    expect((await rejection(client.listDocuments({ ibge: "5300108" }))).code).toBe(Code.NotFound);
    expect((await rejection(client.getDocument({ ibge: IBGE, chave: chaveOf(999) }))).code).toBe(Code.NotFound);
  });

  it("reads many notes at once, in the order asked, as GetDocument answers each", async () => {
    const asked = [chaveOf(4), chaveOf(999), chaveOf(3), chaveOf(10)];
    const { results } = await client.batchGetDocuments({ ibge: IBGE, chaves: asked, includeXml: true });
    expect(results.map((r) => r.chave)).toEqual(asked);
    expect(results[1]).toMatchObject({ chave: chaveOf(999), events: [] });
    expect(results[1]?.document).toBeUndefined();
    for (const i of [0, 2, 3]) {
      const one = await client.getDocument({ ibge: IBGE, chave: asked[i]!, includeXml: true });
      expect(results[i]?.document).toEqual(one.document);
      expect(results[i]?.events).toEqual(one.events);
      expect(results[i]?.document?.xml.length).toBeGreaterThan(0);
    }
    expect(results[2]?.events.map((e) => e.event?.codigo)).toEqual(["101101"]);
    const lean = await client.batchGetDocuments({ ibge: IBGE, chaves: [chaveOf(3)] });
    expect(lean.results[0]?.document?.xml).toHaveLength(0);

    const twice = await rejection(client.batchGetDocuments({ ibge: IBGE, chaves: [chaveOf(4), chaveOf(4)] }));
    expect(twice.code).toBe(Code.InvalidArgument);
    expect(twice.rawMessage).toContain("chaves[1]");
    const bad = await rejection(client.batchGetDocuments({ ibge: IBGE, chaves: [chaveOf(4), "123"] }));
    expect(bad.code).toBe(Code.InvalidArgument);
    expect(bad.rawMessage).toContain("chaves[1]");
    const tooMany = Array.from({ length: 101 }, (_, i) => chaveOf(1000 + i));
    expect((await rejection(client.batchGetDocuments({ ibge: IBGE, chaves: tooMany }))).code).toBe(Code.InvalidArgument);
    expect((await rejection(client.batchGetDocuments({ ibge: IBGE, chaves: [] }))).code).toBe(Code.InvalidArgument);
    expect((await rejection(client.batchGetDocuments({ ibge: "5300108", chaves: [chaveOf(4)] }))).code).toBe(Code.NotFound);
  });

  it("lists events by chave and type, with document presence", async () => {
    const evs = await client.listEvents({ ibge: IBGE, chave: chaveOf(3) });
    expect(evs.events).toHaveLength(1);
    expect(evs.events[0]?.documentPresent).toBe(true);
    expect(evs.events[0]?.event?.codigo).toBe("101101");
    expect((await client.listEvents({ ibge: IBGE, tipo: TipoEvento.CANCELAMENTO })).events).toHaveLength(1);
    expect((await client.listEvents({ ibge: IBGE, codigo: "105102" })).events).toHaveLength(0);
  });

  it("keeps quarantined items with their raw payload", async () => {
    const q = await client.listQuarantine({ ibge: IBGE, includePayload: true });
    expect(q.entries).toHaveLength(1);
    expect(q.entries[0]).toMatchObject({ nsu: 12n, reason: FaultReason.BAD_GZIP, runId });
    expect(Buffer.from(q.entries[0]!.rawPayload).toString()).toBe("not-base64-!!");
    const lean = await client.listQuarantine({ ibge: IBGE });
    expect(lean.entries[0]?.rawPayload).toHaveLength(0);
  });

  it("serves every query plan from an index", async () => {
    const ibge = parseIbge(IBGE);
    const t = municipalityTables(ibge);
    const plans: [string, { sql: string; params: unknown[] }][] = [];
    const docFilters = [
      { ibge, prestador: { column: "prestador_documento" as const, value: "11222333000181" } },
      { ibge, tomador: { column: "tomador_documento" as const, value: "12345678909" } },
      { ibge, emissionStart: new Date("2025-01-01"), emissionEnd: new Date("2025-02-01") },
      { ibge, competenciaStart: "2025-01-01", competenciaEnd: "2025-01-31" },
      { ibge, chave: chaveOf(4) },
      { ibge, situacao: "CANCELADA" },
      { ibge, ambiente: 1, tipoNsu: "DISTRIBUICAO", nsuStart: 5n, nsuEnd: 9n },
    ];
    for (const f of docFilters) {
      const { where, key } = documentQuery(f);
      plans.push([
        JSON.stringify(f, (_k, v) => (typeof v === "bigint" ? String(v) : v)),
        { sql: `SELECT id FROM ${t.documentos} ${where.sql} ORDER BY ${key.map((k) => k.expr).join(", ")} LIMIT 10`, params: where.params },
      ]);
    }
    for (const f of [
      { ibge, chave: chaveOf(3) },
      { ibge, codigo: "101101" },
      { ibge, timeStart: new Date("2025-01-01"), timeEnd: new Date("2025-04-01") },
    ]) {
      const { where, key } = eventQuery(f);
      plans.push([
        JSON.stringify(f),
        { sql: `SELECT id FROM ${t.eventos} ${where.sql} ORDER BY ${key.map((k) => k.expr).join(", ")} LIMIT 10`, params: where.params },
      ]);
    }
    plans.push([
      "quarantine",
      {
        sql: "SELECT id FROM nfse_quarantine WHERE ibge = ? AND ambiente = 1 ORDER BY ambiente, tipo_nsu, nsu, id LIMIT 10",
        params: [IBGE],
      },
    ]);
    plans.push([
      "runs",
      {
        sql: "SELECT id FROM nfse_sync_runs WHERE ibge = ? AND ambiente = 1 AND tipo_nsu = 'DISTRIBUICAO' ORDER BY started_at DESC, id DESC LIMIT 10",
        params: [IBGE],
      },
    ]);
    for (const [label, plan] of plans) {
      const [rows] = await db.pool.query<RowDataPacket[]>(`EXPLAIN ${plan.sql}`, plan.params);
      for (const row of rows) expect(row.key, `${label}: ${JSON.stringify(row)}`).not.toBeNull();
    }
  });
});

describe("gaps, holes and the cursor", () => {
  it("finds exactly the holes, records confirmed ones, and reports the rest", async () => {
    const gaps = await client.findNsuGaps({ feed });
    expect(gaps.gaps.map((g) => [g.start, g.end])).toEqual([
      [8n, 9n],
      [20n, 20n],
    ]);
    expect(gaps.missingCount).toBe(3n);
    const limited = await client.findNsuGaps({ feed, limit: 1 });
    expect(limited).toMatchObject({ truncated: true, resumeFrom: 9n, missingCount: 1n });

    const holes = await client.recordConfirmedHoles({
      feed,
      runId,
      fenceToken: 3n,
      holes: [{ nsu: 8n, codigo: "E2040" }, { nsu: 8n }, { nsu: 10n }, { nsu: 99n }],
    });
    expect(holes).toMatchObject({ recorded: 1, alreadyKnown: 1, ignored: 2 });
    const again = await client.recordConfirmedHoles({ feed, runId, fenceToken: 3n, holes: [{ nsu: 8n }] });
    expect(again).toMatchObject({ recorded: 0, alreadyKnown: 1 });
    expect((await client.findNsuGaps({ feed })).gaps.map((g) => [g.start, g.end])).toEqual([
      [9n, 9n],
      [20n, 20n],
    ]);
    expect((await client.getSyncState({ feed })).state?.holesCount).toBe(1n);

    // With record_checked a scan that finds no gap raises the feed's gaps_checked_nsu to its end, but
    // only from where the mark is (a range nobody looked at is never skipped) and never past the cursor.
    expect((await rejection(client.findNsuGaps({ feed, recordChecked: true }))).code).toBe(Code.InvalidArgument);
    const checked = async () => (await client.getSyncState({ feed })).state?.gapsCheckedNsu;
    const scan = (start: bigint, end: bigint) => client.findNsuGaps({ feed, range: { start, end }, limit: 5, recordChecked: true });
    expect((await scan(1n, 30n)).gaps).toHaveLength(2);
    expect(await checked()).toBe(0n);
    expect((await scan(10n, 19n)).gaps).toEqual([]);
    expect(await checked()).toBe(0n);
    expect((await scan(1n, 8n)).gaps).toEqual([]);
    expect(await checked()).toBe(8n);
    expect((await scan(9n, 19n)).gaps.map((g) => [g.start, g.end])).toEqual([[9n, 9n]]);
    expect(await checked()).toBe(8n);
    await client.recordConfirmedHoles({ feed, runId, fenceToken: 3n, holes: [{ nsu: 9n }] });
    expect((await scan(9n, 19n)).gaps).toEqual([]);
    expect(await checked()).toBe(19n);
    expect((await scan(20n, 30n)).gaps.map((g) => [g.start, g.end])).toEqual([[20n, 20n]]);
    expect(await checked()).toBe(19n);
    // Without the flag nothing is written.
    await client.findNsuGaps({ feed, range: { start: 1n, end: 19n } });
    expect(await checked()).toBe(19n);
  });

  it("moves the cursor backwards only through an audited ResetCursor, refused while a run holds the feed", async () => {
    const busy = await rejection(client.resetCursor({ feed, newCursor: 10n, operator: "ana", reason: "re-download" }));
    expect(busy.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RUN_IN_PROGRESS");
    // A batch that claims a lower cursor does not move it back.
    expect((await client.applyBatch({ feed, runId, fenceToken: 3n, items: [], newCursor: 5n })).cursor).toBe(30n);
    await client.finishRun({ feed, runId, fenceToken: 3n, outcome: RunOutcome.YIELDED });
    expect((await rejection(client.resetCursor({ feed, newCursor: 10n, operator: "", reason: "x" }))).code).toBe(Code.InvalidArgument);
    const reset = await client.resetCursor({ feed, newCursor: 10n, operator: "ana", reason: "re-download" });
    expect(reset.reset).toMatchObject({ previousCursor: 30n, newCursor: 10n, operator: "ana" });
    // What lies above the new cursor is looked at again by the next gap scan.
    expect(reset.state?.gapsCheckedNsu).toBe(10n);
    const next = await client.beginRun({ feed, holder: "coord-a/w2", fenceToken: 4n, trigger: RunTrigger.SYNC_NOW });
    expect(next.cursor).toBe(10n);
    expect((await client.listCursorResets({ ibge: IBGE })).resets).toHaveLength(1);
    runId = next.runId;
  });

  it("expires a stale run but keeps its fence, and purges old run logs", async () => {
    expect((await client.expireStaleRuns({ staleBefore: timestampFromDate(new Date(Date.now() - 3_600_000)) })).expired).toHaveLength(0);
    const expired = await client.expireStaleRuns({
      staleBefore: timestampFromDate(new Date(Date.now() + 60_000)),
      requestedBy: "watchdog",
    });
    expect(expired.expired.map((r) => r.runId)).toEqual([runId]);
    expect(expired.expired[0]?.outcome).toBe(RunOutcome.ABANDONED);
    const st = (await client.getSyncState({ feed })).state!;
    expect(st).toMatchObject({ status: SyncStatus.IDLE, fenceToken: 4n, currentRunId: "" });
    const late = await rejection(client.applyBatch({ feed, runId, fenceToken: 4n, items: [docItem(31, 31)], newCursor: 31n }));
    expect(late.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RUN_NOT_RUNNING");

    const eligible = await client.listSyncStates({ eligibleAt: timestampFromDate(new Date()) });
    expect(eligible.states.map((s) => s.feed?.ibge)).toContain(IBGE);

    const runs = await client.listRuns({ ibge: IBGE });
    expect(runs.runs.map((r) => r.outcome)).toEqual([RunOutcome.ABANDONED, RunOutcome.YIELDED]);
    const purged = await client.purgeRunLogs({
      finishedBefore: timestampFromDate(new Date(Date.now() + 60_000)),
      failedFinishedBefore: timestampFromDate(new Date(Date.now() - 60_000)),
    });
    expect(purged.deleted).toBe(1n);
    expect((await client.listRuns({ ibge: IBGE })).runs.map((r) => r.outcome)).toEqual([RunOutcome.ABANDONED]);
    const [docs] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM nfse_documentos_${IBGE}`);
    expect(Number(docs[0]!.n)).toBe(25);
  });
});
