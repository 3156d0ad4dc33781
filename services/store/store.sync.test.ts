// The write protocol end to end: a real store process on a throwaway MariaDB database, called over gRPC.
import type { RowDataPacket } from "mysql2/promise";
import { Code } from "@connectrpc/connect";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { DocumentStatus } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { RunOutcome, RunTrigger, StaleFenceSchema, NotEligibleSchema, SyncStatus } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { chaveOf, docItem, eventItem, faultItem, feedOf, rejection, storeClient } from "./testing/fixtures.js";

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url, STORE_PAGE_TOKEN_SECRET: "test-secret-0123456789" });
  ({ client, close } = storeClient(store.baseUrl));
});
afterAll(async () => {
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

const UF: Record<string, string> = { "35": "SP", "33": "RJ", "31": "MG", "41": "PR", "43": "RS", "29": "BA" };
async function register(ibge: string, feeds = [TipoNsu.DISTRIBUICAO]) {
  return client.registerMunicipality({
    ibge,
    name: `Município ${ibge}`,
    uf: UF[ibge.slice(0, 2)]!,
    active: true,
    feeds: feeds.map((tipoNsu) => ({ ambiente: Ambiente.PRODUCAO, tipoNsu })),
  });
}

async function begin(ibge: string, fence: bigint, holder = "coord-a/w1", trigger = RunTrigger.SCHEDULED) {
  return client.beginRun({ feed: feedOf(ibge), holder, fenceToken: fence, trigger });
}

async function docs(ibge: string): Promise<RowDataPacket[]> {
  const [rows] = await db.pool.query<RowDataPacket[]>(
    `SELECT chave, nsu, situacao, chave_substituta, xml, xml_sha256, updated_at FROM \`nfse_documentos_${ibge}\` ORDER BY nsu`,
  );
  return rows;
}

async function state(ibge: string): Promise<RowDataPacket> {
  const [rows] = await db.pool.query<RowDataPacket[]>("SELECT * FROM nfse_sync_state WHERE ibge = ?", [ibge]);
  return rows[0]!;
}

describe("RegisterMunicipality", () => {
  it("creates two physical tables per municipality, idempotently", async () => {
    for (const ibge of ["3550308", "3304557", "3106200"]) {
      const first = await register(ibge);
      expect(first.created).toBe(true);
      expect(first.municipality?.feeds).toHaveLength(1);
    }
    const again = await register("3550308");
    expect(again.created).toBe(false);
    const [tables] = await db.pool.query<RowDataPacket[]>("SHOW TABLES LIKE 'nfse\\_%\\_3%'");
    expect(tables.map((t) => String(Object.values(t)[0])).sort()).toEqual([
      "nfse_documentos_3106200",
      "nfse_documentos_3304557",
      "nfse_documentos_3550308",
      "nfse_eventos_3106200",
      "nfse_eventos_3304557",
      "nfse_eventos_3550308",
    ]);
    const [states] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_sync_state WHERE last_nsu = 0");
    expect(Number(states[0]!.n)).toBe(3);
  });

  it("refuses bad and injection-shaped IBGE codes with INVALID_ARGUMENT before touching the database", async () => {
    const bad = ["355030", "35503080", "9950308", "0050308", "3550308; DROP TABLE municipalities", "1`; --", "３５５０３０８", ""];
    for (const ibge of bad) {
      const err = await rejection(client.registerMunicipality({ ibge, name: "x", uf: "SP", active: true }));
      expect(err.code, ibge).toBe(Code.InvalidArgument);
      expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("INVALID_IBGE");
      const q = await rejection(client.listDocuments({ ibge }));
      expect(q.code).toBe(Code.InvalidArgument);
    }
    const [tables] = await db.pool.query<RowDataPacket[]>("SHOW TABLES LIKE 'municipalities'");
    expect(tables).toHaveLength(1);
  });

  it("refuses a UF that does not match the prefix, and a changed re-registration", async () => {
    expect((await rejection(client.registerMunicipality({ ibge: "4106902", name: "Curitiba", uf: "SP", active: true }))).code).toBe(
      Code.InvalidArgument,
    );
    expect((await rejection(client.registerMunicipality({ ibge: "3550308", name: "Outro nome", uf: "SP", active: true }))).code).toBe(
      Code.AlreadyExists,
    );
  });
});

describe("BeginRun / ApplyBatch / FinishRun", () => {
  it("applies a batch once: the same batch twice leaves identical rows and one set of counters", async () => {
    const ibge = "4106902";
    await register(ibge);
    const run = await begin(ibge, 10n);
    expect(run.cursor).toBe(0n);
    const items = [docItem(1, 1), docItem(2, 2), eventItem(3, chaveOf(1), "202201"), faultItem(4, Buffer.from("H4sIAAAA-truncated"))];
    const first = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 10n, items, newCursor: 4n });
    expect(first.cursor).toBe(4n);
    expect(first.counts).toMatchObject({ documentsInserted: 2, eventsInserted: 1, faults: 1 });
    const before = await docs(ibge);
    const stateBefore = await state(ibge);

    const second = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 10n, items, newCursor: 4n });
    expect(second.counts).toMatchObject({
      documentsInserted: 0,
      documentsUpdated: 0,
      documentsUnchanged: 2,
      eventsUnchanged: 1,
      faults: 1,
    });
    expect(await docs(ibge)).toEqual(before);
    const stateAfter = await state(ibge);
    for (const k of ["last_nsu", "documents_total", "events_total", "faults_total"]) expect(stateAfter[k]).toEqual(stateBefore[k]);
    const [q] = await db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_quarantine WHERE ibge = ?", [ibge]);
    expect(Number(q[0]!.n)).toBe(1);

    // Overlapping batch: 2..6 after 1..4.
    const overlap = await client.applyBatch({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 10n,
      newCursor: 6n,
      items: [docItem(2, 2), eventItem(3, chaveOf(1), "202201"), docItem(5, 5), docItem(6, 6)],
    });
    expect(overlap.counts).toMatchObject({ documentsInserted: 2, documentsUnchanged: 1, eventsUnchanged: 1 });
    expect((await docs(ibge)).map((d) => String(d.nsu))).toEqual(["1", "2", "5", "6"]);
    expect(String((await state(ibge)).last_nsu)).toBe("6");

    const xml = (await docs(ibge))[0]!.xml as Buffer;
    expect(xml.equals(Buffer.from(items[0]!.xml))).toBe(true);

    const done = await client.finishRun({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 10n,
      outcome: RunOutcome.CAUGHT_UP,
      nextEligibleAt: timestampFromDate(new Date(Date.now() + 3_600_000)),
    });
    expect(done.state?.status).toBe(SyncStatus.IDLE);
    expect(done.run?.outcome).toBe(RunOutcome.CAUGHT_UP);
    expect(done.run?.documentsInserted).toBe(4n);
    // The same FinishRun again is a no-op; the one-hour rule now refuses a scheduled run.
    await client.finishRun({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 10n,
      outcome: RunOutcome.CAUGHT_UP,
      nextEligibleAt: timestampFromDate(new Date(Date.now() + 3_600_000)),
    });
    const refused = await rejection(begin(ibge, 11n));
    expect(refused.code).toBe(Code.FailedPrecondition);
    expect(refused.findDetails(NotEligibleSchema)[0]?.nextEligibleAt).toBeDefined();
    expect(String((await state(ibge)).fence_token)).toBe("10");
  });

  it("a stale holder's batch changes nothing and fails with FAILED_PRECONDITION + StaleFence", async () => {
    const ibge = "4314902";
    await register(ibge);
    const a = await begin(ibge, 5n, "coord-a/w1");
    await client.applyBatch({ feed: feedOf(ibge), runId: a.runId, fenceToken: 5n, items: [docItem(1, 101)], newCursor: 1n });
    const b = await begin(ibge, 6n, "coord-b/w1");
    expect(b.cursor).toBe(1n);
    const before = await docs(ibge);

    const err = await rejection(
      client.applyBatch({
        feed: feedOf(ibge),
        runId: a.runId,
        fenceToken: 5n,
        items: [docItem(2, 102), eventItem(3, chaveOf(101), "101101")],
        newCursor: 3n,
      }),
    );
    expect(err.code).toBe(Code.FailedPrecondition);
    expect(err.findDetails(StaleFenceSchema)[0]).toMatchObject({
      presentedFenceToken: 5n,
      currentFenceToken: 6n,
      currentHolder: "coord-b/w1",
    });
    expect(await docs(ibge)).toEqual(before);
    const [evs] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM nfse_eventos_${ibge}`);
    expect(Number(evs[0]!.n)).toBe(0);
    expect(String((await state(ibge)).last_nsu)).toBe("1");
    // The superseded run was closed, and an older token cannot begin again.
    expect((await client.getRun({ runId: a.runId })).run?.outcome).toBe(RunOutcome.ABANDONED);
    expect((await rejection(begin(ibge, 5n, "coord-a/w1"))).code).toBe(Code.FailedPrecondition);
    // Equal token from another holder is stale too; equal from the same holder is the same run.
    expect((await rejection(begin(ibge, 6n, "coord-c/w9"))).findDetails(StaleFenceSchema)).toHaveLength(1);
    expect((await begin(ibge, 6n, "coord-b/w1")).runId).toBe(b.runId);
  });

  it("cursor = max(last_nsu, MAX(nsu)) after rows were inserted by SQL, and never beyond the batch", async () => {
    const ibge = "2927408";
    await register(ibge);
    await db.pool.query(
      `INSERT INTO nfse_documentos_${ibge} (chave, ambiente, tipo_nsu, nsu, xml, xml_sha256) VALUES (?, 1, 'DISTRIBUICAO', 40, '<x/>', REPEAT('0', 64))`,
      [chaveOf(940)],
    );
    const run = await begin(ibge, 1n);
    expect(run.cursor).toBe(40n);
    const err = await rejection(
      client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 1n, items: [docItem(41, 941)], newCursor: 50n }),
    );
    expect(err.code).toBe(Code.InvalidArgument);
    expect(err.findDetails(ErrorInfoSchema)[0]?.reason).toBe("CURSOR_OUT_OF_RANGE");
    const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM nfse_documentos_${ibge}`);
    expect(Number(rows[0]!.n)).toBe(1);
    // Back-fill below the cursor is accepted and never moves it backwards.
    const fill = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 1n, items: [docItem(7, 907)], newCursor: 7n });
    expect(fill.cursor).toBe(40n);
  });

  it("derives the note's status from events, also when the events arrive first", async () => {
    const ibge = "3106200";
    const run = await begin(ibge, 1n);
    const cancelled = chaveOf(501);
    const replaced = chaveOf(502);
    const pending = chaveOf(503);
    const r1 = await client.applyBatch({
      feed: feedOf("3106200"),
      runId: run.runId,
      fenceToken: 1n,
      newCursor: 4n,
      items: [
        eventItem(1, cancelled, "101101"),
        eventItem(2, replaced, "105102", { chaveSubstituta: chaveOf(504) }),
        docItem(3, 503),
        eventItem(4, pending, "101103"),
      ],
    });
    expect(r1.counts?.statusChanges).toBe(1);
    const r2 = await client.applyBatch({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 1n,
      newCursor: 6n,
      items: [docItem(5, 501), docItem(6, 502)],
    });
    expect(r2.counts?.statusChanges).toBe(2);
    const got = await client.getDocument({ ibge, chave: replaced, includeXml: true });
    expect(got.document?.document?.status).toBe(DocumentStatus.SUBSTITUIDA);
    expect(got.document?.document?.chaveSubstituta).toBe(chaveOf(504));
    expect(got.events).toHaveLength(1);
    expect(Buffer.from(got.document!.xml).equals(Buffer.from(docItem(6, 502).xml))).toBe(true);
    expect((await client.getDocument({ ibge, chave: cancelled })).document?.document?.status).toBe(DocumentStatus.CANCELADA);
    expect((await client.getDocument({ ibge, chave: pending })).document?.document?.status).toBe(DocumentStatus.ANALISE_PENDENTE);
    const denied = await client.applyBatch({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 1n,
      newCursor: 7n,
      items: [eventItem(7, pending, "105105")],
    });
    expect(denied.counts?.statusChanges).toBe(1);
    expect((await client.getDocument({ ibge, chave: pending })).document?.document?.status).toBe(DocumentStatus.ATIVA);
  });
});

describe("municipality changes, cancellation and cool-down", () => {
  it("disabling a feed or the municipality refuses runs with FEED_DISABLED; listing pages by ibge", async () => {
    const ibge = "3304557";
    await client.updateMunicipality({ ibge, disableFeeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }] });
    const disabled = await rejection(begin(ibge, 1n));
    expect(disabled.findDetails(ErrorInfoSchema)[0]?.reason).toBe("FEED_DISABLED");
    await client.updateMunicipality({ ibge, active: false, enableFeeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }] });
    expect((await rejection(begin(ibge, 1n))).findDetails(ErrorInfoSchema)[0]?.reason).toBe("FEED_DISABLED");
    const m = await client.updateMunicipality({ ibge, active: true, name: "Rio de Janeiro" });
    expect(m.municipality).toMatchObject({ name: "Rio de Janeiro", active: true });
    expect(m.municipality?.feeds[0]?.enabled).toBe(true);

    const first = await client.listMunicipalities({ pageSize: 2 });
    const second = await client.listMunicipalities({ pageSize: 2, pageToken: first.nextPageToken });
    const all = [...first.municipalities, ...second.municipalities].map((x) => x.ibge);
    expect(all).toEqual([...all].sort());
    expect(new Set(all).size).toBe(all.length);
    expect((await client.listMunicipalities({ uf: "RS" })).municipalities.map((x) => x.ibge)).toEqual(["4314902"]);
    expect((await rejection(client.getMunicipality({ ibge: "5300108" }))).findDetails(ErrorInfoSchema)[0]?.reason).toBe(
      "MUNICIPALITY_NOT_FOUND",
    );
    expect((await rejection(begin("5300108", 1n))).code).toBe(Code.NotFound);
  });

  it("an operator's cancellation reaches the holder in its next ApplyBatch", async () => {
    const ibge = "3304557";
    const run = await begin(ibge, 2n);
    const flagged = await client.requestRunCancellation({
      target: { case: "feed", value: feedOf(ibge) },
      requestedBy: "ana",
      reason: "maintenance",
    });
    expect(flagged).toMatchObject({ alreadyFinished: false });
    expect(flagged.run?.cancelRequested).toBe(true);
    const applied = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 2n, items: [], newCursor: 0n });
    expect(applied.cancelRequested).toBe(true);
    await client.finishRun({ feed: feedOf(ibge), runId: run.runId, fenceToken: 2n, outcome: RunOutcome.CANCELLED });
    const late = await client.requestRunCancellation({ target: { case: "runId", value: run.runId } });
    expect(late.alreadyFinished).toBe(true);
    // Finishing again with another outcome is refused.
    const other = await rejection(client.finishRun({ feed: feedOf(ibge), runId: run.runId, fenceToken: 2n, outcome: RunOutcome.YIELDED }));
    expect(other.findDetails(ErrorInfoSchema)[0]?.reason).toBe("RUN_NOT_RUNNING");
  });

  it("a 429 cool-down refuses every run, reconciliation included, and only moves forward", async () => {
    const ibge = "3304557";
    const run = await begin(ibge, 3n);
    const until = new Date(Date.now() + 600_000);
    const done = await client.finishRun({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 3n,
      outcome: RunOutcome.RATE_LIMITED,
      errorMessage: "HTTP 429",
      cooldownUntil: timestampFromDate(until),
    });
    expect(done.state).toMatchObject({ status: SyncStatus.ERROR, lastErrorMessage: "HTTP 429" });
    const refused = await rejection(begin(ibge, 4n, "coord-a/w1", RunTrigger.RECONCILIATION));
    expect(refused.findDetails(NotEligibleSchema)[0]?.cooldownUntil).toBeDefined();
    const st = await client.getSyncState({ feed: feedOf(ibge) });
    expect(st.state?.fenceToken).toBe(3n);
    expect(st.state?.cooldownUntil?.seconds).toBe(BigInt(Math.floor(until.getTime() / 1000)));
  });

  it("a 429 cools down every feed of the certificate (municipality × ambiente), and only those", async () => {
    const ibge = "4205407";
    await client.registerMunicipality({
      ibge,
      name: "Florianópolis",
      uf: "SC",
      active: true,
      feeds: [
        { ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO },
        { ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.RECEPCAO },
        { ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO },
      ],
    });
    const sibling = feedOf(ibge, TipoNsu.RECEPCAO);
    const other = { ...feedOf(ibge), ambiente: Ambiente.PRODUCAO_RESTRITA };
    // The sibling already cools down longer: that later end is kept.
    const longer = new Date(Date.now() + 1_200_000);
    const sib = await client.beginRun({ feed: sibling, holder: "coord-b/w1", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const run = await client.beginRun({ feed: feedOf(ibge), holder: "coord-a/w1", fenceToken: 1n, trigger: RunTrigger.RECONCILIATION });
    const until = new Date(Date.now() + 600_000);
    await client.finishRun({
      feed: feedOf(ibge),
      runId: run.runId,
      fenceToken: 1n,
      outcome: RunOutcome.RATE_LIMITED,
      errorMessage: "HTTP 429",
      cooldownUntil: timestampFromDate(until),
    });
    const seconds = (d: Date) => BigInt(Math.floor(d.getTime() / 1000));
    expect((await client.getSyncState({ feed: sibling })).state?.cooldownUntil?.seconds).toBe(seconds(until));
    expect((await client.getSyncState({ feed: other })).state?.cooldownUntil).toBeUndefined();
    // The sibling's run in progress finishes normally; its next BeginRun is refused until the end.
    await client.finishRun({ feed: sibling, runId: sib.runId, fenceToken: 1n, outcome: RunOutcome.YIELDED });
    const refused = await rejection(client.beginRun({ feed: sibling, holder: "coord-b/w1", fenceToken: 2n, trigger: RunTrigger.RESUME }));
    expect(refused.findDetails(NotEligibleSchema)[0]?.cooldownUntil?.seconds).toBe(seconds(until));
    const again = await client.beginRun({ feed: other, holder: "coord-c/w1", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const longerRun = await client.finishRun({
      feed: other,
      runId: again.runId,
      fenceToken: 1n,
      outcome: RunOutcome.RATE_LIMITED,
      errorMessage: "HTTP 429",
      cooldownUntil: timestampFromDate(longer),
    });
    expect(longerRun.state?.cooldownUntil?.seconds).toBe(seconds(longer));
    // Another ambiente is another certificate call path: PRODUCAO keeps its own end.
    expect((await client.getSyncState({ feed: feedOf(ibge) })).state?.cooldownUntil?.seconds).toBe(seconds(until));
  });

  it("a note distributed again in a second series keeps its first NSU and leaves no gap in the second", async () => {
    const ibge = "2927408";
    await client.updateMunicipality({ ibge, enableFeeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.RECEPCAO }] });
    const recep = feedOf(ibge, TipoNsu.RECEPCAO);
    const run = await client.beginRun({ feed: recep, holder: "coord-a/w3", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    // Note 907 is stored at DISTRIBUICAO NSU 7 (the back-fill above); RECEPCAO now carries it at NSU 1.
    const res = await client.applyBatch({
      feed: recep,
      runId: run.runId,
      fenceToken: 1n,
      items: [docItem(1, 907), docItem(2, 960)],
      newCursor: 2n,
    });
    expect(res.counts).toMatchObject({ documentsInserted: 1, documentsUnchanged: 1 });
    const got = await client.getDocument({ ibge, chave: chaveOf(907) });
    expect(got.document?.feed?.tipoNsu).toBe(TipoNsu.DISTRIBUICAO);
    expect(got.document?.nsu).toBe(7n);
    expect((await client.findNsuGaps({ feed: recep })).gaps).toEqual([]);
    expect((await client.getSyncState({ feed: recep })).state?.lastNsu).toBe(2n);
    await client.finishRun({ feed: recep, runId: run.runId, fenceToken: 1n, outcome: RunOutcome.YIELDED });
    const next = await client.beginRun({ feed: recep, holder: "coord-a/w3", fenceToken: 1n, trigger: RunTrigger.RESUME });
    expect(next.runId).not.toBe(run.runId);
    expect(next.cursor).toBe(2n);
  });
});

describe("reconciliation runs", () => {
  it("may start inside the one-hour wait, and their batches never move the cursor", async () => {
    const ibge = "4314902";
    const current = (await client.getSyncState({ feed: feedOf(ibge) })).state!;
    await client.finishRun({
      feed: feedOf(ibge),
      runId: current.currentRunId,
      fenceToken: 6n,
      outcome: RunOutcome.CAUGHT_UP,
      nextEligibleAt: timestampFromDate(new Date(Date.now() + 3_600_000)),
    });
    expect((await rejection(begin(ibge, 7n, "coord-r/w1", RunTrigger.SCHEDULED))).findDetails(NotEligibleSchema)).toHaveLength(1);
    const rec = await begin(ibge, 7n, "coord-r/w1", RunTrigger.RECONCILIATION);
    // A reconciliation batch that claims cursor 3 stores its item but leaves the cursor where it was.
    const applied = await client.applyBatch({
      feed: feedOf(ibge),
      runId: rec.runId,
      fenceToken: 7n,
      items: [docItem(3, 103)],
      newCursor: 3n,
    });
    expect(applied.counts?.documentsInserted).toBe(1);
    expect(applied.cursor).toBe(rec.cursor);
    expect((await client.getSyncState({ feed: feedOf(ibge) })).state?.lastNsu).toBe(rec.cursor);
  });
});
