// Parsing of NFS-e 1.00/1.01 and events of every code (adn.md §4, §5, §7) into the typed messages.
import { readFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { create, type DescMessage, equals, fromBinary, isMessage, toBinary } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import { TaxIdKind } from "../gen/malha/common/v1/common_pb.js";
import { FaultReason } from "../gen/malha/nfse/v1/distribution_pb.js";
import {
  AmbienteGerador,
  DocumentSchema,
  TipoEmissao,
  TipoEmitente,
  TipoRetencaoIssqn,
  TributacaoIssqn,
} from "../gen/malha/nfse/v1/document_pb.js";
import { EventSchema, TipoEvento } from "../gen/malha/nfse/v1/event_pb.js";
import { Ambiente } from "../gen/malha/nfse/v1/feed_pb.js";
import { completeCnpj } from "../tax-id/index.js";
import { buildChave } from "./chave.js";
import { EVENT_CODES } from "./event-codes.js";
import { decodeItem } from "./item.js";
import { sha256Hex } from "./payload.js";

const sample = (name: string) => readFileSync(new URL(`./testdata/${name}`, import.meta.url));
const CHAVE = "35503082211222333000181000000000004226031234567893";

function decode(xml: Buffer | string, extra: Partial<{ nsu: string; dataHoraGeracao: string }> = {}) {
  const bytes = Buffer.isBuffer(xml) ? xml : Buffer.from(xml, "utf8");
  return decodeItem(
    {
      nsu: "7",
      chaveAcesso: CHAVE,
      tipoDocumento: "NFSE",
      tipoEvento: "",
      arquivoXml: gzipSync(bytes).toString("base64"),
      dataHoraGeracao: "2026-03-10T14:02:11.41",
      ...extra,
    },
    { maxDecompressedBytes: 1 << 20 },
  );
}

function document(xml: Buffer | string) {
  const item = decode(xml);
  if (item.content.case !== "document") throw new Error(`not a document: ${JSON.stringify(item.content.value)}`);
  return item.content.value;
}

function event(xml: string) {
  const item = decode(xml);
  if (item.content.case !== "event") throw new Error(`not an event: ${JSON.stringify(item.content.value)}`);
  return item.content.value;
}

const secs = (iso: string) => BigInt(Date.parse(iso) / 1000);

/**
 * The parsers build their messages as typed literals, not with `create` (a decode thread's cost): each one
 * must be what `create` would have made of it — every field of implicit presence there with a value of
 * its type, nested messages complete too.
 */
function expectComplete(desc: DescMessage, msg: Record<string, unknown>, path = desc.typeName): void {
  expect(isMessage(msg, desc), path).toBe(true);
  const zero = create(desc) as unknown as Record<string, unknown>;
  for (const f of desc.fields) {
    const v = msg[f.localName];
    if (f.fieldKind === "message") {
      if (v !== undefined) expectComplete(f.message, v as Record<string, unknown>, `${path}.${f.localName}`);
    } else if (f.presence === 2) {
      expect(typeof v, `${path}.${f.localName}`).toBe(typeof zero[f.localName]);
    }
  }
}

describe("NFS-e layout 1.01 (adn.md §7.2)", () => {
  it("extracts every index field and keeps the raw XML byte-exact with its sha256", () => {
    const xml = sample("nfse-1.01.xml");
    const item = decode(xml);
    expect(Buffer.from(item.xml).equals(xml)).toBe(true);
    expect(item.xmlSha256).toBe(sha256Hex(xml));
    expect(item).toMatchObject({
      nsu: 7n,
      chave: CHAVE,
      tipoDocumento: "NFSE",
      dataHoraGeracao: { seconds: secs("2026-03-10T17:02:11Z"), nanos: 410_000_000 },
    });
    const doc = document(xml);
    expect(doc).toMatchObject({
      chave: CHAVE,
      numero: "42",
      versao: "1.01",
      cStat: 100,
      dhProc: { seconds: secs("2026-03-10T17:02:10Z") },
      dhEmi: { seconds: secs("2026-03-10T17:00:00Z") },
      competencia: { year: 2026, month: 3, day: 10 },
      emitente: {
        document: { kind: TaxIdKind.CNPJ, number: "11222333000181" },
        name: "PRESTADORA EXEMPLO LTDA",
        inscricaoMunicipal: "12345",
        codigoMunicipio: "3550308",
        uf: "SP",
      },
      prestador: { document: { kind: TaxIdKind.CNPJ, number: "11222333000181" }, name: "" },
      tomador: { document: { kind: TaxIdKind.CNPJ, number: "99888777000100" }, name: "TOMADORA EXEMPLO SA" },
      codigoMunicipioEmissor: "3550308",
      nomeMunicipioEmissor: "Municipio Exemplo",
      codigoLocalPrestacao: "3550308",
      nomeLocalPrestacao: "Municipio Exemplo",
      codigoMunicipioIncidencia: "3550308",
      nomeMunicipioIncidencia: "Municipio Exemplo",
      servico: { cTribNac: "010701", descricao: "Suporte tecnico mensal", xTribNac: "Suporte tecnico em informatica" },
      valores: {
        vServCents: 100000n,
        vBcCents: 100000n,
        aliquotaBps: 200,
        vIssqnCents: 2000n,
        vLiqCents: 100000n,
        tribIssqn: TributacaoIssqn.TRIBUTAVEL,
        tpRetIssqn: TipoRetencaoIssqn.NAO_RETIDO,
      },
      tpAmb: Ambiente.PRODUCAO_RESTRITA,
      ambGer: AmbienteGerador.SEFIN_NACIONAL,
      tpEmis: TipoEmissao.NACIONAL,
      tpEmit: TipoEmitente.PRESTADOR,
      serie: "1",
      nDps: "42",
      nDfse: "900042",
      opSimpNac: 1,
      chaveSubstituida: "",
    });
    expect(doc.intermediario).toBeUndefined();
    expect(doc.valores!.vTotalRetCents).toBeUndefined();
  });
});

describe("NFS-e layout 1.00, a municipal transcription", () => {
  it("reads CPF emitters, padded IM, entities, retentions, abroad service, intermediário and substitution", () => {
    const doc = document(sample("nfse-1.00.xml"));
    expect(doc).toMatchObject({
      chave: "33045571100052998224725000000000012325120000000019",
      versao: "1.00",
      cStat: 101,
      emitente: {
        document: { kind: TaxIdKind.CPF, number: "52998224725" },
        inscricaoMunicipal: "4711",
        name: "JOSE & FILHOS CONTABEIS",
        uf: "RJ",
      },
      prestador: { document: { kind: TaxIdKind.CPF, number: "52998224725" } },
      intermediario: { document: { kind: TaxIdKind.CNPJ, number: "11444777000161" }, name: "INTERMEDIARIA LTDA" },
      codigoLocalPrestacao: "",
      codigoPaisPrestacao: "US",
      codigoMunicipioIncidencia: "",
      servico: { cTribNac: "171901", cTribMun: "001", cNbs: "113011000" },
      valores: {
        vServCents: 100000n,
        vLiqCents: 85050n,
        vTotalRetCents: 14950n,
        tribIssqn: TributacaoIssqn.EXPORTACAO,
        tpRetIssqn: TipoRetencaoIssqn.RETIDO_TOMADOR,
      },
      tpAmb: Ambiente.PRODUCAO,
      ambGer: AmbienteGerador.MUNICIPIO,
      tpEmis: TipoEmissao.TRANSCRITA,
      opSimpNac: 3,
      chaveSubstituida: "33045571100052998224725000000000012225110000000018",
      cMotivoSubstituicao: "01",
    });
    // Simples-style notes carry no base, rate or ISS: absent, not zero.
    for (const field of ["vBcCents", "aliquotaBps", "vIssqnCents"] as const) expect(doc.valores![field]).toBeUndefined();
    expect(doc.tomador).toBeUndefined();
  });
});

describe("faults found after decompression keep the XML", () => {
  it.each([
    ["not well formed", "<NFSe><infNFSe></NFSe>", FaultReason.BAD_XML],
    ["a DTD with an entity", '<!DOCTYPE NFSe [<!ENTITY x "boom">]><NFSe>&x;</NFSe>', FaultReason.BAD_XML],
    ["invalid UTF-8", Buffer.from([0x3c, 0x61, 0x3e, 0xff, 0xfe, 0x3c, 0x2f, 0x61, 0x3e]), FaultReason.BAD_XML],
    ["a DPS instead of a note", '<DPS versao="1.01"><infDPS Id="DPS1"/></DPS>', FaultReason.UNKNOWN_DOCUMENT_TYPE],
    ["a note without its Id", '<NFSe versao="1.01"><infNFSe><nNFSe>1</nNFSe></infNFSe></NFSe>', FaultReason.MISSING_FIELD],
    [
      "an amount with 3 decimals",
      sample("nfse-1.01.xml").toString().replace("<vLiq>1000.00</vLiq>", "<vLiq>1000.005</vLiq>"),
      FaultReason.INVALID_VALUE,
    ],
    [
      "an impossible date",
      sample("nfse-1.01.xml").toString().replace("2026-03-10T14:02:10-03:00", "2026-02-30T14:02:10-03:00"),
      FaultReason.INVALID_VALUE,
    ],
    [
      "a description beyond the XSD's 2000 characters",
      sample("nfse-1.01.xml").toString().replace("Suporte tecnico mensal", "x".repeat(70_000)),
      FaultReason.INVALID_VALUE,
    ],
    [
      "a rate of 1000 %",
      sample("nfse-1.01.xml").toString().replace("<pAliqAplic>2.00</pAliqAplic>", "<pAliqAplic>1000.00</pAliqAplic>"),
      FaultReason.INVALID_VALUE,
    ],
    [
      "a tomador CNPJ in lower case",
      sample("nfse-1.01.xml").toString().replace("<CNPJ>99888777000100</CNPJ>", "<CNPJ>12abc34501de35</CNPJ>"),
      FaultReason.INVALID_VALUE,
    ],
    [
      "a chave in lower case",
      sample("nfse-1.01.xml")
        .toString()
        .replace(`NFS${CHAVE}`, `NFS${CHAVE.slice(0, 9)}abc${CHAVE.slice(12)}`),
      FaultReason.MISSING_FIELD,
    ],
  ])("%s", (_name, xml, reason) => {
    const item = decode(xml as string | Buffer);
    expect(item.content.case).toBe("fault");
    expect(item.content.value).toMatchObject({ reason });
    expect(item.xml.length).toBeGreaterThan(0);
    expect(item.xmlSha256).toBe(sha256Hex(item.xml));
    expect(Buffer.from((item.content.value as { rawPayload: Uint8Array }).rawPayload).toString()).toMatch(/^H4sI/);
  });

  it("builds complete messages: what create would make of them, with the same bytes", () => {
    const doc = document(sample("nfse-1.01.xml"));
    const old = document(sample("nfse-1.00.xml"));
    const ev = event(sample("evento-101101-1.01.xml").toString());
    for (const d of [doc, old]) {
      expectComplete(DocumentSchema, d as never);
      // Read back, the message is made by protobuf-es itself.
      const made = fromBinary(DocumentSchema, toBinary(DocumentSchema, d));
      expect(equals(DocumentSchema, d, made)).toBe(true);
      expect(toBinary(DocumentSchema, made)).toEqual(toBinary(DocumentSchema, d));
      expect(made.chave).toBe(d.chave);
    }
    expectComplete(EventSchema, ev as never);
    expect(equals(EventSchema, ev, fromBinary(EventSchema, toBinary(EventSchema, ev)))).toBe(true);
  });

  it("never throws on mangled documents: every variant is a document, an event or a fault", () => {
    const base = sample("nfse-1.01.xml");
    let seed = 7;
    const rnd = (n: number) => (seed = (seed * 1_103_515_245 + 12_345) >>> 0) % n;
    for (let i = 0; i < 300; i++) {
      const bytes = Buffer.from(base);
      for (let k = 0; k < 1 + rnd(4); k++) bytes[rnd(bytes.length)] = rnd(256);
      const mangled = rnd(3) === 0 ? bytes.subarray(0, rnd(bytes.length)) : bytes;
      const item = decode(mangled);
      expect(["document", "event", "fault"]).toContain(item.content.case);
    }
  });

  it("names the unparseable field", () => {
    const item = decode(sample("nfse-1.01.xml").toString().replace("<vBC>1000.00</vBC>", "<vBC>mil</vBC>"));
    expect(item.content.value).toMatchObject({ reason: FaultReason.INVALID_VALUE, message: expect.stringContaining("valores/vBC") });
  });

  it("names the path and the limit of a value beyond the layout", () => {
    const long = decode(sample("nfse-1.01.xml").toString().replace("TOMADORA EXEMPLO SA", "T".repeat(301)));
    expect(long.content.value).toMatchObject({
      reason: FaultReason.INVALID_VALUE,
      message: "DPS/infDPS/toma/xNome is longer than 300 characters (301)",
    });
    const lower = decode(sample("nfse-1.01.xml").toString().replace("<CNPJ>99888777000100</CNPJ>", "<CNPJ>12abc34501de35</CNPJ>"));
    expect(lower.content.value).toMatchObject({ message: expect.stringMatching(/^DPS\/infDPS\/toma\/CNPJ has lower-case letters/) });
  });
});

describe("alphanumeric CNPJ (IN RFB 2.229/2024)", () => {
  const cnpj = completeCnpj("12ABC34501DE");
  const chave = buildChave({ cMun: "3550308", ambGer: 2, tpInsc: 2, inscricao: cnpj, nNFSe: 42, year: 2026, month: 9, codigo: 123456789 });
  const tomador = completeCnpj("ZZ9XY000A1B2");

  it("keeps the letters of the chave, the emitente, the prestador and the tomador", () => {
    const xml = sample("nfse-1.01.xml")
      .toString()
      .replaceAll(CHAVE, chave)
      .replaceAll("11222333000181", cnpj)
      .replace("<CNPJ>99888777000100</CNPJ>", `<CNPJ>${tomador}</CNPJ>`);
    const doc = document(xml);
    expect(doc.chave).toBe(chave);
    expect(doc.emitente?.document).toMatchObject({ kind: TaxIdKind.CNPJ, number: cnpj });
    expect(doc.prestador?.document).toMatchObject({ kind: TaxIdKind.CNPJ, number: cnpj });
    expect(doc.tomador?.document).toMatchObject({ kind: TaxIdKind.CNPJ, number: tomador });
  });

  it("reads an event whose Id, chNFSe and CNPJAutor carry letters", () => {
    const xml = sample("evento-101101-1.01.xml").toString().replaceAll(CHAVE, chave).replaceAll("11222333000181", cnpj);
    const ev = event(xml);
    expect(ev).toMatchObject({ id: `EVT${chave}101101001`, chave, codigo: "101101", autor: { kind: TaxIdKind.CNPJ, number: cnpj } });
    // Without the type element, the code still comes from the alphanumeric Id.
    const untyped = event(xml.replace(/<e101101>[\s\S]*<\/e101101>/, ""));
    expect(untyped.codigo).toBe("101101");
  });
});

describe("IBS/CBS (NT 004 v2.0) and the 2026 layout notes", () => {
  const dest = completeCnpj("DEST0000AB12");
  const withIbsCbs = (xml: string) =>
    xml
      .replace(
        "</valores>\n  <DPS",
        `</valores>
  <IBSCBS><cLocalidadeIncid>3550308</cLocalidadeIncid><xLocalidadeIncid>Sao Paulo</xLocalidadeIncid><pRedutor>0.00</pRedutor>
   <valores><vBC>1000.00</vBC><uf><pIBSUF>0.1000</pIBSUF><pAliqEfetUF>0.1000</pAliqEfetUF></uf>
    <mun><pIBSMun>0.0000</pIBSMun><pAliqEfetMun>0.0000</pAliqEfetMun></mun><fed><pCBS>0.9000</pCBS><pAliqEfetCBS>0.9000</pAliqEfetCBS></fed></valores>
   <totCIBS><vTotNF>1010.00</vTotNF><gIBS><vIBSTot>1.00</vIBSTot><gIBSUFTot><vDifUF>0.00</vDifUF><vIBSUF>1.00</vIBSUF></gIBSUFTot>
    <gIBSMunTot><vDifMun>0.00</vDifMun><vIBSMun>0.00</vIBSMun></gIBSMunTot></gIBS><gCBS><vDifCBS>0.00</vDifCBS><vCBS>9.00</vCBS></gCBS>
    <gTribSN><pAliqSN>6.00</pAliqSN></gTribSN></totCIBS></IBSCBS>
  <DPS`,
      )
      .replace(
        "</valores>\n   </infDPS>",
        `</valores>
    <IBSCBS><finNFSe>0</finNFSe><indFinal>0</indFinal><cIndOp>100301</cIndOp><indDest>1</indDest>
     <dest><CNPJ>${dest}</CNPJ><xNome>DESTINATARIA LTDA</xNome><end><endNac><cMun>3304557</cMun><CEP>20000000</CEP></endNac><xLgr>RUA B</xLgr></end></dest>
     <valores><trib><gIBSCBS><CST>000</CST><cClassTrib>000001</cClassTrib></gIBSCBS></trib></valores></IBSCBS>
   </infDPS>`,
      );

  it("extracts the amounts, rates, totals and the destinatário", () => {
    const xml = withIbsCbs(sample("nfse-1.01.xml").toString());
    expect(xml).toContain("<gTribSN>");
    const doc = document(xml);
    expect(doc.destinatario).toMatchObject({
      document: { kind: TaxIdKind.CNPJ, number: dest },
      name: "DESTINATARIA LTDA",
      codigoMunicipio: "3304557",
    });
    expect(doc.ibsCbs).toMatchObject({
      codigoLocalidadeIncidencia: "3550308",
      vBcCents: 100000n,
      aliquotaIbsUfPpm: 1000,
      aliquotaIbsMunPpm: 0,
      aliquotaCbsPpm: 9000,
      aliquotaEfetivaCbsPpm: 9000,
      vIbsUfCents: 100n,
      vIbsMunCents: 0n,
      vIbsTotalCents: 100n,
      vCbsCents: 900n,
      vTotNfCents: 101000n,
      cst: "000",
      cClassTrib: "000001",
      cIndOp: "100301",
      finNfse: 0,
    });
  });

  it("leaves the groups absent on notes without them", () => {
    const doc = document(sample("nfse-1.01.xml"));
    expect(doc.ibsCbs).toBeUndefined();
    expect(doc.destinatario).toBeUndefined();
  });

  it("never fails on the NT 009 renames and new groups, and faults a malformed value it reads with its path", () => {
    const nt009 = withIbsCbs(sample("nfse-1.01.xml").toString()).replace(
      "<vLiq>1000.00</vLiq>",
      "<vCalcAjusteBCISSQN>0.00</vCalcAjusteBCISSQN><vAjusteBC>0.00</vAjusteBC><gLocacao><x>1</x></gLocacao><vLiq>1000.00</vLiq>",
    );
    expect(document(nt009).valores?.vLiqCents).toBe(100000n);
    const bad = decode(withIbsCbs(sample("nfse-1.01.xml").toString()).replace("<vCBS>9.00</vCBS>", "<vCBS>nove</vCBS>"));
    expect(bad.content.value).toMatchObject({
      reason: FaultReason.INVALID_VALUE,
      message: expect.stringContaining("IBSCBS/totCIBS/gCBS/vCBS"),
    });
  });
});

describe("events", () => {
  it("parses the cancellation of adn.md §7.3", () => {
    const xml = sample("evento-101101-1.01.xml").toString();
    expect(event(xml)).toMatchObject({
      id: `EVT${CHAVE}101101001`,
      chave: CHAVE,
      codigo: "101101",
      tipo: TipoEvento.CANCELAMENTO,
      nSeqEvento: 1,
      dhEvento: { seconds: secs("2026-03-11T12:29:55Z") },
      dhProc: { seconds: secs("2026-03-11T12:30:01Z") },
      versao: "1.01",
      ambGer: AmbienteGerador.SEFIN_NACIONAL,
      tpAmb: Ambiente.PRODUCAO_RESTRITA,
      nDfse: "0",
      autor: { kind: TaxIdKind.CNPJ, number: "11222333000181" },
      cMotivo: "1",
      xMotivo: "Valor do servico informado errado",
      xDesc: "Cancelamento de NFS-e",
    });
  });

  /** An event in either layout; 1.00 names the number nDFe, carries nPedRegEvento and a 62-char PRE Id. */
  function eventXml(codigo: string, versao: "1.00" | "1.01", spec: string, opts: { element?: boolean; autor?: string } = {}) {
    const v100 = versao === "1.00";
    const body = opts.element === false ? "" : `<e${codigo}><xDesc>Evento ${codigo}</xDesc>${spec}</e${codigo}>`;
    return `<?xml version="1.0" encoding="UTF-8"?><evento xmlns="http://www.sped.fazenda.gov.br/nfse" versao="${versao}"><infEvento Id="EVT${CHAVE}${codigo}002"><verAplic>X</verAplic><ambGer>3</ambGer><nSeqEvento>2</nSeqEvento><dhProc>2026-04-01T10:00:00-03:00</dhProc>${v100 ? "<nDFe>12</nDFe>" : "<nDFSe>12</nDFSe>"}<pedRegEvento versao="${versao}"><infPedReg Id="PRE${CHAVE}${codigo}${v100 ? "002" : ""}"><tpAmb>1</tpAmb><verAplic>Y</verAplic><dhEvento>2026-04-01T09:59:00-03:00</dhEvento>${opts.autor ?? "<CPFAutor>52998224725</CPFAutor>"}<chNFSe>${CHAVE}</chNFSe>${v100 ? "<nPedRegEvento>2</nPedRegEvento>" : ""}${body}</infPedReg></pedRegEvento></infEvento></evento>`;
  }

  const SPEC: Record<string, [string, object]> = {
    "101101": [
      "<cMotivo>9</cMotivo><xMotivo>Outros motivos do cancelamento</xMotivo>",
      { cMotivo: "9", xMotivo: "Outros motivos do cancelamento" },
    ],
    "105102": [
      `<cMotivo>01</cMotivo><chSubstituta>${CHAVE.replace(/^3/, "4")}</chSubstituta>`,
      { cMotivo: "01", chaveSubstituta: CHAVE.replace(/^3/, "4") },
    ],
    "101103": ["<cMotivo>2</cMotivo><xMotivo>Servico nao prestado</xMotivo>", { cMotivo: "2", xMotivo: "Servico nao prestado" }],
    "105104": [
      "<CPFAgTrib>52998224725</CPFAgTrib><nProcAdm>PA-1/2026</nProcAdm><cMotivo>1</cMotivo><xMotivo>Deferido</xMotivo>",
      { cpfAgenteTributario: "52998224725", nProcAdm: "PA-1/2026", cMotivo: "1" },
    ],
    "105105": [
      "<CPFAgTrib>52998224725</CPFAgTrib><cMotivo>2</cMotivo><xMotivo>Indeferido</xMotivo>",
      { cpfAgenteTributario: "52998224725", cMotivo: "2", nProcAdm: "" },
    ],
    "202201": ["", {}],
    "203202": ["", {}],
    "204203": ["", {}],
    "205204": ["", {}],
    "202205": ["<cMotivo>1</cMotivo><xMotivo>Duplicidade</xMotivo>", { cMotivo: "1", xMotivo: "Duplicidade" }],
    "203206": ["<cMotivo>5</cMotivo>", { cMotivo: "5", xMotivo: "" }],
    "204207": ["<cMotivo>9</cMotivo><xMotivo>Outros</xMotivo>", { cMotivo: "9" }],
    "205208": [
      `<CPFAgTrib>52998224725</CPFAgTrib><idEvManifRej>EVT${CHAVE}203206001</idEvManifRej><xMotivo>Anulada</xMotivo>`,
      { idEventoRejeicao: `EVT${CHAVE}203206001`, xMotivo: "Anulada" },
    ],
    "305101": [
      "<CPFAgTrib>52998224725</CPFAgTrib><nProcAdm>77</nProcAdm><xProcAdm>Processo de oficio</xProcAdm>",
      { nProcAdm: "77", xProcAdm: "Processo de oficio" },
    ],
    "305102": [
      "<CPFAgTrib>52998224725</CPFAgTrib><xMotivo>Bloqueio</xMotivo><codEvento>e101101</codEvento>",
      { codEventoBloqueado: "101101", xMotivo: "Bloqueio" },
    ],
    "305103": [
      `<CPFAgTrib>52998224725</CPFAgTrib><idBloqOfic>EVT${CHAVE}305102001</idBloqOfic>`,
      { idBloqueioOficio: `EVT${CHAVE}305102001` },
    ],
    "907201": ["", {}],
    "907209": ["", {}],
  };

  it("covers every code of adn.md §5.2", () => {
    expect(Object.keys(SPEC).sort()).toEqual(EVENT_CODES.map((c) => c.codigo).sort());
  });

  describe.each(["1.00", "1.01"] as const)("layout %s", (versao) => {
    it.each(EVENT_CODES.map((c) => [c.codigo, c.tipo] as const))("e%s", (codigo, tipo) => {
      const [spec, fields] = SPEC[codigo]!;
      // 1.00 wraps the reason of a rejection in infRej.
      const isRejection = ["202205", "203206", "204207"].includes(codigo);
      const body = versao === "1.00" && isRejection ? `<infRej>${spec}</infRej>` : spec;
      expect(event(eventXml(codigo, versao, body))).toMatchObject({
        id: `EVT${CHAVE}${codigo}002`,
        chave: CHAVE,
        codigo,
        tipo,
        nSeqEvento: 2,
        versao,
        nDfse: "12",
        ambGer: AmbienteGerador.ADN,
        tpAmb: Ambiente.PRODUCAO,
        autor: { kind: TaxIdKind.CPF, number: "52998224725" },
        xDesc: `Evento ${codigo}`,
        ...fields,
      });
    });
  });

  it("takes the code from the EVT Id when the type element is missing, and keeps unknown codes", () => {
    expect(event(eventXml("101101", "1.01", "", { element: false }))).toMatchObject({ codigo: "101101", tipo: TipoEvento.CANCELAMENTO });
    expect(event(eventXml("999999", "1.01", ""))).toMatchObject({ codigo: "999999", tipo: TipoEvento.UNKNOWN });
  });

  it("faults an event without a code anywhere or without a usable chave", () => {
    const noCode = eventXml("101101", "1.01", "", { element: false }).replace(`EVT${CHAVE}101101002`, "EVT1");
    expect(decode(noCode).content.value).toMatchObject({ reason: FaultReason.MISSING_FIELD });
    const noChave = eventXml("101101", "1.01", "").replace(`<chNFSe>${CHAVE}</chNFSe>`, "<chNFSe>123</chNFSe>");
    expect(decode(noChave).content.value).toMatchObject({ reason: FaultReason.MISSING_FIELD, message: expect.stringContaining("chNFSe") });
  });
});
