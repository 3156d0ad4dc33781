// ApplyBatch with `entries` (the ADN page's entries the gateway's DeliverFeeds passes on undecoded), on a
// real store process and a throwaway MariaDB database: the store decodes them exactly as the gateway's
// FetchBatch does (the same typed items applied give the same rows), an entry that does not decode is
// quarantined with its reason without failing its page, and every malformed or oversized request is
// refused before anything is written (docs/decisions/0034-store-decodes-the-page.md).
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import type { RowDataPacket } from "mysql2/promise";
import { fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeItem } from "../../libs/adn/item.js";
import { fromLoteDfeEntry } from "../../libs/adn/lote-entry.js";
import type { LoteDfeEntrySchema } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema, DocumentStatus } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunTrigger } from "../../libs/gen/malha/store/v1/types_pb.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { sampleValue, scrape } from "../../test/support/prom-text.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { docItem, feedOf, rejection, storeClient } from "./testing/fixtures.js";

/** Small caps, so that an oversized item and an oversized page are cheap to build. */
const MAX_DECOMPRESSED = 64 * 1024;
const MAX_PAGE_XML = 256 * 1024;

let db: ThrowawayDatabase;
let store: ServiceProcess;
let client: ReturnType<typeof storeClient>["client"];
let close: () => void;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", {
    MYSQL_URL: db.url,
    ADN_MAX_DECOMPRESSED_BYTES: String(MAX_DECOMPRESSED),
    STORE_MAX_PAGE_XML_BYTES: String(MAX_PAGE_XML),
  });
  ({ client, close } = storeClient(store.baseUrl));
});
afterAll(async () => {
  close?.();
  store?.kill("SIGTERM");
  await store?.exited;
  await db?.drop();
});

type Entry = MessageInitShape<typeof LoteDfeEntrySchema>;

const sample = (name: string) => readFileSync(new URL(`../../libs/adn/testdata/${name}`, import.meta.url));
const CHAVE_SP = "35503082211222333000181000000000004226031234567893";
const CHAVE_RJ = "33045571100052998224725000000000012325120000000019";
const gz64 = (xml: Buffer | string) => gzipSync(Buffer.isBuffer(xml) ? xml : Buffer.from(xml)).toString("base64");

function entry(nsu: number | undefined, arquivoXml: string | undefined, over: Partial<Entry> = {}): Entry {
  return {
    ...(nsu !== undefined ? { nsu: BigInt(nsu) } : {}),
    chaveAcesso: CHAVE_SP,
    tipoDocumento: "NFSE",
    tipoEvento: "",
    ...(arquivoXml !== undefined ? { arquivoXml } : {}),
    dataHoraGeracao: "2026-03-10T14:02:11.41",
    ...over,
  };
}

/** Two notes, an event, and one entry of each way an entry fails to decode or to fit its columns. */
function mixedPage(): Entry[] {
  return [
    entry(1, gz64(sample("nfse-1.01.xml"))),
    entry(2, gz64(sample("nfse-1.00.xml")), { chaveAcesso: CHAVE_RJ }),
    entry(3, gz64(sample("evento-101101-1.01.xml")), { tipoDocumento: "EVENTO", tipoEvento: "CANCELAMENTO" }),
    entry(4, "H4sI-not-base64!"),
    entry(5, Buffer.from("not gzip at all, but Base64").toString("base64")),
    entry(6, gz64("<NFSe><infNFSe>unclosed")),
    entry(7, gz64(Buffer.alloc(MAX_DECOMPRESSED + 1, 0x20))),
    entry(8, undefined),
    entry(9, gz64("<DPS versao='1.01'/>")),
    entry(
      10,
      gz64(
        sample("nfse-1.01.xml")
          .toString("utf8")
          .replace("<xNome>", `<xNome>${"N".repeat(400)}`),
      ),
    ),
  ];
}

/** A municipality with PRODUCAO feeds of these series. */
function register(ibge: string, uf: string, series = [TipoNsu.DISTRIBUICAO]) {
  return client.registerMunicipality({
    ibge,
    name: `Município ${ibge}`,
    uf,
    active: true,
    feeds: series.map((tipoNsu) => ({ ambiente: Ambiente.PRODUCAO, tipoNsu })),
  });
}

async function startRun(ibge: string, uf: string) {
  await register(ibge, uf);
  const run = await client.beginRun({ feed: feedOf(ibge), holder: "coord-a/w1", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
  return { feed: feedOf(ibge), runId: run.runId, fenceToken: 1n };
}

async function stored(ibge: string) {
  const [docs] = await db.pool.query<RowDataPacket[]>(`SELECT nsu, chave, xml, documento_pb FROM \`nfse_documentos_${ibge}\` ORDER BY nsu`);
  const [events] = await db.pool.query<RowDataPacket[]>(`SELECT nsu, evento_pb FROM \`nfse_eventos_${ibge}\` ORDER BY nsu`);
  const [quarantine] = await db.pool.query<RowDataPacket[]>(
    "SELECT nsu, reason, message, payload, xml FROM nfse_quarantine WHERE ibge = ? ORDER BY nsu, item_key",
    [ibge],
  );
  const [state] = await db.pool.query<RowDataPacket[]>("SELECT last_nsu FROM nfse_sync_state WHERE ibge = ?", [ibge]);
  return {
    docs: docs.map((r) => ({
      nsu: String(r.nsu),
      chave: String(r.chave),
      xml: Buffer.from(r.xml).toString("hex"),
      pb: Buffer.from(r.documento_pb).toString("hex"),
    })),
    events: events.map((r) => [String(r.nsu), Buffer.from(r.evento_pb).toString("hex")]),
    quarantine: quarantine.map((r) => ({
      nsu: String(r.nsu),
      reason: r.reason,
      message: r.message,
      payload: r.payload ? Buffer.from(r.payload).toString() : null,
      xml: r.xml ? Buffer.from(r.xml).length : 0,
    })),
    cursor: String(state[0]!.last_nsu),
  };
}

describe("ApplyBatch with entries", () => {
  it("decodes the entries as FetchBatch does: the same rows as the decoded items sent typed, documento_pb and evento_pb included", async () => {
    const entries = mixedPage();
    const typed = await startRun("3550308", "SP");
    const raw = await startRun("3304557", "RJ");
    const items = entries.map((e) => decodeItem(fromLoteDfeEntry(e as never), { maxDecompressedBytes: MAX_DECOMPRESSED }));
    const a = await client.applyBatch({ ...typed, items, newCursor: 10n });
    const b = await client.applyBatch({ ...raw, entries, newCursor: 10n });
    expect(b.counts).toEqual(a.counts);
    expect(b.cursor).toBe(10n);
    const [sa, sb] = [await stored("3550308"), await stored("3304557")];
    expect(sb).toEqual(sa);

    // What the page held: two notes and an event written, every other entry quarantined with its reason.
    expect(sb.docs.map((d) => [d.nsu, d.chave])).toEqual([
      ["1", CHAVE_SP],
      ["2", CHAVE_RJ],
    ]);
    expect(fromBinary(DocumentSchema, Buffer.from(sb.docs[0]!.pb, "hex"))).toMatchObject({
      chave: CHAVE_SP,
      status: DocumentStatus.UNSPECIFIED,
    });
    expect(sb.docs[0]!.xml).toBe(sample("nfse-1.01.xml").toString("hex"));
    expect(sb.events.map(([nsu]) => nsu)).toEqual(["3"]);
    expect(sb.quarantine.map((q) => [q.nsu, q.reason])).toEqual([
      ["4", "BAD_BASE64"],
      ["5", "BAD_GZIP"],
      ["6", "BAD_XML"],
      ["7", "TOO_LARGE"],
      ["8", "MISSING_FIELD"],
      ["9", "UNKNOWN_DOCUMENT_TYPE"],
      ["10", "INVALID_VALUE"],
    ]);
    expect(sb.quarantine.find((q) => q.nsu === "4")).toMatchObject({
      payload: "H4sI-not-base64!",
      message: "ArquivoXml is not valid Base64",
    });
    expect(sb.quarantine.find((q) => q.nsu === "7")!.message).toBe(`decompressed size exceeds the cap of ${MAX_DECOMPRESSED} bytes`);
    expect(sb.quarantine.find((q) => q.nsu === "10")!.message).toMatch(/xNome/);
    expect(sb.cursor).toBe("10");
  });

  it("is idempotent: the same entries applied again change nothing", async () => {
    const run = await startRun("5300108", "DF");
    const first = await client.applyBatch({ ...run, entries: mixedPage(), newCursor: 10n });
    const before = await stored("5300108");
    const again = await client.applyBatch({ ...run, entries: mixedPage(), newCursor: 10n });
    expect(await stored("5300108")).toEqual(before);
    expect(first.counts).toMatchObject({ documentsInserted: 2, eventsInserted: 1 });
    expect(again.counts).toMatchObject({ documentsInserted: 0, documentsUpdated: 0, documentsUnchanged: 2, eventsInserted: 0 });
  });

  it("updates a note and an event distributed again with other bytes in another series where they were first stored", async () => {
    // The rows come from a decode thread already written (0069); an update replaces their feed slot with the stored one.
    const ibge = "1302603";
    await register(ibge, "AM", [TipoNsu.DISTRIBUICAO, TipoNsu.RECEPCAO]);
    const note = sample("nfse-1.01.xml");
    const event = sample("evento-101101-1.01.xml");
    const page = (n: number, noteXml: Buffer, eventXml: Buffer) => [
      entry(n, gz64(noteXml)),
      entry(n + 1, gz64(eventXml), { tipoDocumento: "EVENTO", tipoEvento: "CANCELAMENTO" }),
      entry(n + 2, gz64(sample("nfse-1.00.xml")), { chaveAcesso: CHAVE_RJ }),
    ];
    const first = await client.beginRun({ feed: feedOf(ibge), holder: "coord-a/w1", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    await client.applyBatch({ feed: feedOf(ibge), runId: first.runId, fenceToken: 1n, entries: page(5, note, event), newCursor: 7n });
    const recepcao = feedOf(ibge, TipoNsu.RECEPCAO);
    const again = await client.beginRun({ feed: recepcao, holder: "coord-a/w2", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const [noteAgain, eventAgain] = [Buffer.concat([note, Buffer.from("\n")]), Buffer.concat([event, Buffer.from("\n")])];
    const res = await client.applyBatch({
      feed: recepcao,
      runId: again.runId,
      fenceToken: 1n,
      entries: page(1, noteAgain, eventAgain),
      newCursor: 3n,
    });
    expect(res.counts).toMatchObject({
      documentsUpdated: 1,
      documentsUnchanged: 1,
      eventsUpdated: 1,
      documentsInserted: 0,
      eventsInserted: 0,
    });
    const [docs] = await db.pool.query<RowDataPacket[]>(
      `SELECT chave, tipo_nsu, nsu, xml, situacao FROM \`nfse_documentos_${ibge}\` ORDER BY nsu`,
    );
    expect(docs.map((r) => [r.chave, r.tipo_nsu, String(r.nsu), r.situacao])).toEqual([
      [CHAVE_SP, "DISTRIBUICAO", "5", "CANCELADA"],
      [CHAVE_RJ, "DISTRIBUICAO", "7", "ATIVA"],
    ]);
    expect(Buffer.from(docs[0]!.xml).equals(noteAgain)).toBe(true);
    const [events] = await db.pool.query<RowDataPacket[]>(`SELECT tipo_nsu, nsu, xml FROM \`nfse_eventos_${ibge}\``);
    expect(events.map((r) => [r.tipo_nsu, String(r.nsu)])).toEqual([["DISTRIBUICAO", "6"]]);
    expect(Buffer.from(events[0]!.xml).equals(eventAgain)).toBe(true);
    const [aliases] = await db.pool.query<RowDataPacket[]>("SELECT tipo_nsu, nsu, kind FROM nfse_nsu_aliases WHERE ibge = ? ORDER BY nsu", [
      ibge,
    ]);
    expect(aliases.map((r) => [r.tipo_nsu, String(r.nsu), r.kind])).toEqual([
      ["RECEPCAO", "1", "documento"],
      ["RECEPCAO", "2", "evento"],
      ["RECEPCAO", "3", "documento"],
    ]);
  });

  it("stores each note's XML byte for byte: a byte order mark, CRLF, quotes, backslashes, accents and emoji", async () => {
    const run = await startRun("4314902", "RS");
    const text = sample("nfse-1.01.xml")
      .toString("utf8")
      .replace("<xNome>PRESTADORA EXEMPLO LTDA", `<xNome>Ação "Nº 1" d'Ávila \\ \\n 😀\tÇ`)
      .replace(/\n/g, "\r\n");
    const xml = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text, "utf8")]);
    const res = await client.applyBatch({ ...run, entries: [entry(1, gz64(xml))], newCursor: 1n });
    expect(res.counts).toMatchObject({ documentsInserted: 1, faults: 0 });
    const [rows] = await db.pool.query<RowDataPacket[]>(
      "SELECT xml, xml_sha256, emitente_nome FROM `nfse_documentos_4314902` WHERE nsu = 1",
    );
    expect(Buffer.from(rows[0]!.xml).equals(xml)).toBe(true);
    expect(rows[0]!.xml_sha256).toBe(createHash("sha256").update(xml).digest("hex"));
    expect(rows[0]!.emitente_nome).toBe(`Ação "Nº 1" d'Ávila \\ \\n 😀\tÇ`);
  });

  it("quarantines an entry without NSU, which the cursor cannot pass on its own", async () => {
    const run = await startRun("2304400", "CE");
    const res = await client.applyBatch({ ...run, entries: [entry(undefined, gz64(sample("nfse-1.01.xml")))], newCursor: 0n });
    expect(res.counts?.faults).toBe(1);
    const [q] = (await stored("2304400")).quarantine;
    expect(q).toMatchObject({ nsu: "0", reason: "MISSING_FIELD", message: "NSU is missing or not an integer" });
    expect(q!.xml).toBe(sample("nfse-1.01.xml").length);
  });

  it("refuses items together with entries (INVALID_ARGUMENT) and a page that inflates past STORE_MAX_PAGE_XML_BYTES (RESOURCE_EXHAUSTED), writing nothing", async () => {
    const run = await startRun("3106200", "MG");
    const both = await rejection(
      client.applyBatch({ ...run, items: [docItem(1, 11)], entries: [entry(2, gz64(sample("nfse-1.01.xml")))], newCursor: 2n }),
    );
    expect(both.code).toBe(Code.InvalidArgument);
    expect(both.rawMessage).toBe("set either items (1 given) or entries (1 given), not both");

    // Five entries just under the item cap: each decodes (a BAD_XML fault keeps its XML), the page does not fit.
    const big = gz64(Buffer.alloc(MAX_DECOMPRESSED - 10, 0x41));
    const huge = await rejection(client.applyBatch({ ...run, entries: [1, 2, 3, 4, 5].map((n) => entry(n, big)), newCursor: 5n }));
    expect(huge.code).toBe(Code.ResourceExhausted);
    expect(huge.rawMessage).toBe(
      `entries inflate to more than STORE_MAX_PAGE_XML_BYTES (${MAX_PAGE_XML} bytes) at NSU 4; nothing of the page was written`,
    );

    expect(await stored("3106200")).toEqual({ docs: [], events: [], quarantine: [], cursor: "0" });
  });

  it("keeps the empty batch a heartbeat, and a stale fence refuses entries like items", async () => {
    const run = await startRun("4106902", "PR");
    expect((await client.applyBatch({ ...run, entries: [], newCursor: 0n })).cursor).toBe(0n);
    const beyond = await rejection(client.applyBatch({ ...run, entries: [], newCursor: 9n }));
    expect(beyond.code).toBe(Code.InvalidArgument);
    const stale = await rejection(
      client.applyBatch({ ...run, fenceToken: 2n, entries: [entry(1, gz64(sample("nfse-1.01.xml")))], newCursor: 1n }),
    );
    expect(stale.code).toBe(Code.FailedPrecondition);
    expect((await stored("4106902")).docs).toEqual([]);
  });

  it("times each page's decode and each call's writing in its metrics; typed items are not decoded", async () => {
    const counts = async () => {
      const samples = await scrape(store.metricsPort);
      return {
        decoded: sampleValue(samples, "malha_store_page_decode_seconds_count") ?? 0,
        single: sampleValue(samples, "malha_store_apply_write_seconds_count", { method: "ApplyBatch" }) ?? 0,
        batched: sampleValue(samples, "malha_store_apply_write_seconds_count", { method: "ApplyBatches" }) ?? 0,
      };
    };
    const [pe, pa] = [await startRun("2611606", "PE"), await startRun("1501402", "PA")];
    const before = await counts();
    await client.applyBatch({ ...pe, entries: [entry(1, gz64(sample("nfse-1.01.xml")))], newCursor: 1n });
    await client.applyBatches({
      batches: [
        { ...pe, entries: [entry(2, gz64(sample("nfse-1.00.xml")), { chaveAcesso: CHAVE_RJ })], newCursor: 2n },
        { ...pa, entries: [entry(1, gz64(sample("nfse-1.01.xml")))], newCursor: 1n },
      ],
    });
    await client.applyBatch({ ...pa, items: [docItem(2, 2)], newCursor: 2n });
    const after = await counts();
    expect({
      decoded: after.decoded - before.decoded,
      single: after.single - before.single,
      batched: after.batched - before.batched,
    }).toEqual({ decoded: 3, single: 2, batched: 1 });
    expect((await stored("2611606")).cursor).toBe("2");
  });
});
