// What December 2026's notes put in the columns: alphanumeric CNPJs and chaves, IBS/CBS and the destinatário;
// and that no value of any extracted field can stop a feed: what the columns cannot hold is quarantined with
// its field, the rest of the batch is stored and the cursor moves (a real store process on MariaDB).
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Code } from "@connectrpc/connect";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildChave } from "../../libs/adn/chave.js";
import { TaxIdKind } from "../../libs/gen/malha/common/v1/common_pb.js";
import type { DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import type { Document } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import type { Event } from "../../libs/gen/malha/nfse/v1/event_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunTrigger } from "../../libs/gen/malha/store/v1/types_pb.js";
import { completeCnpj } from "../../libs/tax-id/index.js";
import { Rng } from "../../tools/adn-sim/random.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { docItem, eventIdOf, eventItem, feedOf, rejection, storeClient } from "./testing/fixtures.js";

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

async function register(ibge: string, uf: string) {
  await client.registerMunicipality({
    ibge,
    name: `Município ${ibge}`,
    uf,
    active: true,
    feeds: [{ ambiente: Ambiente.PRODUCAO, tipoNsu: TipoNsu.DISTRIBUICAO }],
  });
}

const CNPJ_EMIT = completeCnpj("12ABC34501DE");
const CNPJ_TOMA = completeCnpj("ZZ9XY000A1B2");
const CNPJ_DEST = completeCnpj("DEST0000AB12");
const chaveAlfa = (n: number) =>
  buildChave({ cMun: "3550308", ambGer: 2, tpInsc: 2, inscricao: CNPJ_EMIT, nNFSe: n, year: 2026, month: 11, codigo: 100 + n });

/** docItem with a chave and a document reshaped by `edit`. */
function noteItem(nsu: number, n: number, edit: (d: Document) => void, chave?: string): DistributionItem {
  const item = docItem(nsu, n);
  if (item.content.case !== "document") throw new Error("docItem is a document");
  const doc = item.content.value;
  if (chave) {
    doc.chave = chave;
    item.chave = chave;
  }
  edit(doc);
  return item;
}

describe("alphanumeric CNPJ, IBS/CBS and the destinatário in the columns", () => {
  const ibge = "3550308";

  it("stores every NSU with the letters kept, the IBS/CBS columns filled and the parties queryable", async () => {
    await register(ibge, "SP");
    const run = await client.beginRun({ feed: feedOf(ibge), holder: "t", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const chave = chaveAlfa(1);
    const note = noteItem(
      1,
      1,
      (d) => {
        d.emitente = {
          $typeName: "malha.nfse.v1.Party",
          document: { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: CNPJ_EMIT },
          name: "EMITENTE",
          inscricaoMunicipal: "",
          codigoMunicipio: "3550308",
          uf: "SP",
        };
        d.tomador!.document = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: CNPJ_TOMA };
        d.destinatario = {
          $typeName: "malha.nfse.v1.Party",
          name: "DESTINATARIA",
          inscricaoMunicipal: "",
          codigoMunicipio: "3304557",
          uf: "",
          document: { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: CNPJ_DEST },
        };
        d.ibsCbs = {
          $typeName: "malha.nfse.v1.IbsCbs",
          codigoLocalidadeIncidencia: "3550308",
          vBcCents: 100000n,
          aliquotaIbsUfPpm: 1000,
          aliquotaIbsMunPpm: 0,
          aliquotaCbsPpm: 9000,
          vIbsUfCents: 100n,
          vIbsMunCents: 0n,
          vIbsTotalCents: 100n,
          vCbsCents: 900n,
          vTotNfCents: 101000n,
          cst: "000",
          cClassTrib: "000001",
          cIndOp: "100301",
          finNfse: 0,
        };
      },
      chave,
    );
    const event = eventItem(2, chave, "101101");
    const applied = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 1n, items: [note, event], newCursor: 2n });
    expect(applied.counts).toMatchObject({ documentsInserted: 1, eventsInserted: 1, faults: 0 });
    const [rows] = await db.pool.query<RowDataPacket[]>(`SELECT * FROM nfse_documentos_${ibge} WHERE chave = ?`, [chave]);
    expect(rows[0]).toMatchObject({
      emitente_documento: CNPJ_EMIT,
      tomador_documento: CNPJ_TOMA,
      destinatario_documento: CNPJ_DEST,
      destinatario_nome: "DESTINATARIA",
      ibscbs_localidade_incidencia: "3550308",
      ibscbs_cst: "000",
      ibscbs_classificacao: "000001",
      ibscbs_base_calculo: "100000",
      ibs_uf_aliquota: "0.1000",
      ibs_uf_valor: "100",
      ibs_mun_aliquota: "0.0000",
      ibs_valor_total: "100",
      cbs_aliquota: "0.9000",
      cbs_valor: "900",
      valor_total_nf: "101000",
      situacao: "CANCELADA",
    });
    const [events] = await db.pool.query<RowDataPacket[]>(`SELECT id_evento, chave FROM nfse_eventos_${ibge}`);
    expect(events).toEqual([{ id_evento: eventIdOf(chave, "101101"), chave }]);

    const byTomador = await client.listDocuments({ ibge, tomadorDocument: CNPJ_TOMA });
    expect(byTomador.documents.map((d) => d.document?.chave)).toEqual([chave]);
    expect(byTomador.documents[0]!.document?.ibsCbs?.vTotNfCents).toBe(101000n);
    const byDest = await client.listDocuments({ ibge, destinatarioDocument: CNPJ_DEST });
    expect(byDest.documents).toHaveLength(1);
    expect((await client.getDocument({ ibge, chave })).document?.document?.destinatario?.document?.number).toBe(CNPJ_DEST);
    const lower = await rejection(client.listDocuments({ ibge, tomadorDocument: CNPJ_TOMA.toLowerCase() }));
    expect(lower.code).toBe(Code.InvalidArgument);
    expect(lower.rawMessage).toMatch(/tomador_document has lower-case letters/);
    const lowerChave = await rejection(client.getDocument({ ibge, chave: chave.toLowerCase() }));
    expect(lowerChave.code).toBe(Code.InvalidArgument);
    expect(lowerChave.rawMessage).toMatch(/chave has lower-case letters/);
    const masked = await rejection(client.listDocuments({ ibge, tomadorDocument: "12.ABC.345/01DE-35" }));
    expect(masked.rawMessage).toMatch(/without punctuation/);
  });
});

/** Extreme values of every field documentRow and eventRow put in a column. */
const EXTREMES: Record<string, ((d: Document) => void)[]> = {
  numero: [(d) => (d.numero = "9".repeat(16)), (d) => (d.numero = "Nº 1")],
  versao: [(d) => (d.versao = "1.01.0001")],
  nDfse: [(d) => (d.nDfse = "x".repeat(16))],
  cStat: [(d) => (d.cStat = 65536), (d) => (d.cStat = -1)],
  ambGer: [(d) => (d.ambGer = 256 as never)],
  tpEmis: [(d) => (d.tpEmis = 1000 as never)],
  tpEmit: [(d) => (d.tpEmit = 300 as never)],
  opSimpNac: [(d) => (d.opSimpNac = 999)],
  codigoMunicipioEmissor: [(d) => (d.codigoMunicipioEmissor = "35503080")],
  codigoLocalPrestacao: [(d) => (d.codigoLocalPrestacao = "ABCDEFG")],
  codigoPaisPrestacao: [(d) => (d.codigoPaisPrestacao = "BRA"), (d) => (d.codigoPaisPrestacao = "Ç")],
  codigoMunicipioIncidencia: [(d) => (d.codigoMunicipioIncidencia = "1")],
  dhEmi: [(d) => (d.dhEmi = timestampFromMs(Date.UTC(10000, 0, 1))), (d) => (d.dhEmi = timestampFromMs(-62_000_000_000_000))],
  dhProc: [(d) => (d.dhProc = timestampFromMs(Date.UTC(999, 0, 1)))],
  competencia: [
    (d) => (d.competencia = { $typeName: "malha.common.v1.Date", year: 2026, month: 2, day: 30 }),
    (d) => (d.competencia = { $typeName: "malha.common.v1.Date", year: 0, month: 1, day: 1 }),
  ],
  emitenteDocument: [
    (d) =>
      (d.emitente = {
        $typeName: "malha.nfse.v1.Party",
        name: "",
        inscricaoMunicipal: "",
        codigoMunicipio: "",
        uf: "",
        document: { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: "12abc34501de35" },
      }),
  ],
  emitenteUf: [
    (d) => (d.emitente = { $typeName: "malha.nfse.v1.Party", name: "", inscricaoMunicipal: "", codigoMunicipio: "9999999999", uf: "SPX" }),
  ],
  prestadorCpf: [(d) => (d.prestador!.document = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CPF, number: "123" })],
  prestadorName: [(d) => (d.prestador!.name = "N".repeat(301)), (d) => (d.prestador!.name = "😀".repeat(301))],
  prestadorIm: [(d) => (d.prestador!.inscricaoMunicipal = "1".repeat(16))],
  tomadorCnpj: [(d) => (d.tomador!.document = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: "1".repeat(15) })],
  intermediarioName: [
    (d) =>
      (d.intermediario = { $typeName: "malha.nfse.v1.Party", name: "I".repeat(302), inscricaoMunicipal: "", codigoMunicipio: "", uf: "" }),
  ],
  serie: [(d) => (d.serie = "123456")],
  nDps: [(d) => (d.nDps = "1".repeat(16))],
  cTribNac: [(d) => (d.servico!.cTribNac = "0107011")],
  cTribMun: [(d) => (d.servico!.cTribMun = "1234")],
  cNbs: [(d) => (d.servico!.cNbs = "1234567890")],
  descricao: [(d) => (d.servico!.descricao = "ã".repeat(40_000)), (d) => (d.servico!.descricao = "x".repeat(70_000))],
  aliquota: [
    (d) => (d.valores!.aliquotaBps = 100_000),
    (d) => (d.valores!.aliquotaBps = -1),
    (d) => (d.valores!.aliquotaBps = 2 ** 31 - 1),
  ],
  tribIssqn: [(d) => (d.valores!.tribIssqn = 256 as never)],
  chaveSubstituida: [(d) => (d.chaveSubstituida = "1".repeat(49)), (d) => (d.chaveSubstituida = "x")],
  ibsLocalidade: [
    (d) => (d.ibsCbs = { ...(d.ibsCbs ?? { $typeName: "malha.nfse.v1.IbsCbs" }), codigoLocalidadeIncidencia: "00" } as never),
  ],
  ibsAliquota: [
    (d) => (d.ibsCbs = { $typeName: "malha.nfse.v1.IbsCbs", aliquotaIbsUfPpm: 10_000_000 } as never),
    (d) => (d.ibsCbs = { $typeName: "malha.nfse.v1.IbsCbs", aliquotaCbsPpm: -5 } as never),
  ],
  ibsCst: [(d) => (d.ibsCbs = { $typeName: "malha.nfse.v1.IbsCbs", cst: "0000", cClassTrib: "1234567" } as never)],
  destinatario: [
    (d) =>
      (d.destinatario = { $typeName: "malha.nfse.v1.Party", name: "D".repeat(400), inscricaoMunicipal: "", codigoMunicipio: "", uf: "" }),
  ],
};

/** Extreme values of every event field eventRow puts in a column. */
const EVENT_EXTREMES: ((e: Event) => void)[] = [
  (e) => (e.versao = "x".repeat(9)),
  (e) => (e.ambGer = 300 as never),
  (e) => (e.nSeqEvento = 70_000),
  (e) => (e.dhEvento = timestampFromMs(Date.UTC(12000, 0, 1))),
  (e) => (e.autor = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CNPJ, number: "12abc34501de35" }),
  (e) => (e.autor = { $typeName: "malha.common.v1.TaxId", kind: TaxIdKind.CPF, number: "1234567890A" }),
  (e) => (e.cMotivo = "12345"),
  (e) => (e.xMotivo = "m".repeat(1001)),
  (e) => (e.chaveSubstituta = "z".repeat(50)),
];

function poisonedEvent(nsu: number, chave: string, edit: (e: Event) => void): DistributionItem {
  const item = eventItem(nsu, chave, "101101", { seq: nsu });
  if (item.content.case !== "event") throw new Error("eventItem is an event");
  edit(item.content.value);
  return item;
}

describe("no value of any extracted field stops a feed", () => {
  it("quarantines events whose values a column cannot hold and stores their neighbours", async () => {
    const ibge = "4106902";
    await register(ibge, "PR");
    const run = await client.beginRun({ feed: feedOf(ibge), holder: "t", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const chave = chaveAlfa(9);
    const items: DistributionItem[] = [];
    let nsu = 0;
    for (const edit of EVENT_EXTREMES) {
      items.push(poisonedEvent(++nsu, chave, edit));
      items.push(eventItem(++nsu, chave, "202201", { seq: nsu }));
    }
    const res = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 1n, items, newCursor: BigInt(nsu) });
    expect(res.counts).toMatchObject({ eventsInserted: EVENT_EXTREMES.length, faults: EVENT_EXTREMES.length });
    expect(res.cursor).toBe(BigInt(nsu));
    const [q] = await db.pool.query<RowDataPacket[]>("SELECT reason, message FROM nfse_quarantine WHERE ibge = ? ORDER BY nsu", [ibge]);
    expect(q.map((r) => r.reason)).toEqual(EVENT_EXTREMES.map(() => "INVALID_VALUE"));
    expect(q.map((r) => /\(column ([a-z_]+)\)/.exec(r.message)?.[1])).toEqual([
      "versao",
      "ambiente_gerador",
      "sequencia",
      "data_evento",
      "autor_documento",
      "autor_documento",
      "motivo_codigo",
      "motivo_descricao",
      "chave_substituta",
    ]);
  });

  it("quarantines every item whose value a column cannot hold, stores the rest of each batch and moves the cursor (no INTERNAL)", async () => {
    const ibge = "3304557";
    await register(ibge, "RJ");
    const run = await client.beginRun({ feed: feedOf(ibge), holder: "t", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const rng = new Rng(20261201);
    let nsu = 0;
    let n = 0;
    let expectedStored = 0;
    let expectedQuarantined = 0;
    const cases = Object.entries(EXTREMES).flatMap(([field, edits]) => edits.map((edit, i) => ({ name: `${field}#${i}`, edit })));
    // Batches of a few poisoned notes among good ones and an event, in a seeded order.
    for (let start = 0; start < cases.length; start += 4) {
      const items: DistributionItem[] = [];
      for (const c of cases.slice(start, start + 4)) {
        items.push(noteItem(++nsu, ++n, c.edit));
        expectedQuarantined++;
        if (rng.chance(0.7)) {
          items.push(docItem(++nsu, ++n));
          expectedStored++;
        }
      }
      items.push(eventItem(++nsu, docItem(0, n).chave, "202201", { seq: nsu }));
      const res = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 1n, items, newCursor: BigInt(nsu) });
      expect(res.cursor).toBe(BigInt(nsu));
    }
    const [stored] = await db.pool.query<RowDataPacket[]>(`SELECT COUNT(*) AS n FROM nfse_documentos_${ibge}`);
    expect(Number(stored[0]!.n)).toBe(expectedStored);
    const [q] = await db.pool.query<RowDataPacket[]>(
      "SELECT reason, message, xml IS NOT NULL AS has_xml FROM nfse_quarantine WHERE ibge = ? ORDER BY nsu",
      [ibge],
    );
    expect(q).toHaveLength(expectedQuarantined);
    for (const row of q) {
      expect(row.reason).toBe("INVALID_VALUE");
      expect(row.message).toMatch(/\(column [a-z_]+\) /);
      expect(Number(row.has_xml)).toBe(1);
    }
    const [state] = await db.pool.query<RowDataPacket[]>("SELECT last_nsu FROM nfse_sync_state WHERE ibge = ?", [ibge]);
    expect(String(state[0]!.last_nsu)).toBe(String(nsu));
  });

  it("stores the widest values the columns do hold", async () => {
    const ibge = "3106200";
    await register(ibge, "MG");
    const run = await client.beginRun({ feed: feedOf(ibge), holder: "t", fenceToken: 1n, trigger: RunTrigger.SCHEDULED });
    const wide = noteItem(1, 1, (d) => {
      d.numero = "9".repeat(15);
      d.prestador!.name = "😀".repeat(300);
      d.servico!.descricao = "ã".repeat(32_767);
      d.valores!.vServCents = 2n ** 63n - 1n;
      d.valores!.aliquotaBps = 99_999;
      d.ibsCbs = { $typeName: "malha.nfse.v1.IbsCbs", aliquotaIbsUfPpm: 9_999_999, vTotNfCents: -(2n ** 63n - 1n) } as never;
    });
    const res = await client.applyBatch({ feed: feedOf(ibge), runId: run.runId, fenceToken: 1n, items: [wide], newCursor: 1n });
    expect(res.counts).toMatchObject({ documentsInserted: 1, faults: 0 });
    const [rows] = await db.pool.query<RowDataPacket[]>(
      `SELECT aliquota, ibs_uf_aliquota, CHAR_LENGTH(prestador_nome) AS nome FROM nfse_documentos_${ibge}`,
    );
    expect(rows[0]).toMatchObject({ aliquota: "999.9900", ibs_uf_aliquota: "999.9999", nome: 300 });
  });
});
