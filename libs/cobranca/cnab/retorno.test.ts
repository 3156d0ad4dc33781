import { Buffer } from "node:buffer";
import { describe, expect, it } from "vitest";
import { mod10 } from "../checkdigits.js";
import { date } from "../date.js";
import { fixture, repairedFixture } from "../testing/fixtures.js";
import { refusalOf } from "../testing/refusal.js";
import { SEGMENTO_T, SEGMENTO_U } from "./layouts240.js";
import { mapearOcorrencia } from "./ocorrencias.js";
import { encodeRecord } from "./record.js";
import { gerarRemessa } from "./remessa.js";
import { lerRetorno } from "./retorno.js";
import { buildPixDinamico, parsePix } from "../pix.js";

const count = (xs: readonly { ocorrencia: string }[]) =>
  xs.reduce<Record<string, number>>((m, e) => ((m[e.ocorrencia] = (m[e.ocorrencia] ?? 0) + 1), m), {});
const sum = (xs: readonly Record<string, unknown>[], k: string) => xs.reduce((s, e) => s + ((e[k] as number) ?? 0), 0);

describe("retorno CNAB 240: expected values of the fixtures README", () => {
  it("Sicredi (brcobranca)", () => {
    const r = lerRetorno(fixture("retorno/240/brcobranca-748-CNAB240SICREDI.CRT"));
    expect(r.banco).toBe("748");
    expect(r.nsa).toBe(5);
    expect(r.eventos).toHaveLength(2);
    const [a, b] = r.eventos;
    expect(a).toMatchObject({
      agencia: "00390",
      conta: "0000000041468",
      nossoNumero: "172000595",
      carteira: "1",
      vencimento: date(2017, 4, 13),
      valorCentavos: 995,
      bancoRecebedor: "000",
      ocorrencia: "02",
      estado: "REGISTERED",
      tarifaCentavos: 0,
      motivos: ["A4"],
      dataOcorrencia: date(2017, 4, 6),
      jurosCentavos: 0,
      descontoCentavos: 0,
      abatimentoCentavos: 0,
      iofCentavos: 0,
      valorPagoCentavos: 0,
      outrasDespesasCentavos: 0,
      outrosCreditosCentavos: 0,
    });
    expect(a!.dataCredito).toBeUndefined();
    expect(b).toMatchObject({
      nossoNumero: "172000595",
      ocorrencia: "28",
      estado: "FEE",
      tarifaCentavos: 380,
      motivos: ["05"],
      dataCredito: date(2017, 4, 6),
    });
    expect(a!.chaveIdempotencia).not.toBe(b!.chaveIdempotencia);
  });

  it("Caixa (laravel-boleto)", () => {
    const r = lerRetorno(fixture("retorno/240/laravel-boleto-104-caixa.ret"));
    expect(r.eventos).toHaveLength(9);
    expect(r.eventos.every((e) => e.ocorrencia === "06" && e.estado === "PAID")).toBe(true);
    expect(r.eventos.every((e) => e.dataOcorrencia?.day === 6 && e.dataCredito?.day === 7)).toBe(true);
    expect(r.eventos[0]).toMatchObject({
      nossoNumero: "240000000111369979",
      vencimento: date(2014, 1, 2),
      valorCentavos: 8000,
      tarifaCentavos: 125,
      valorPagoCentavos: 8000,
    });
    expect(r.eventos[0]!.nossoNumero!.slice(0, 17)).toBe("24000000011136997");
    const ev = r.eventos as unknown as Record<string, unknown>[];
    expect(sum(ev, "valorCentavos")).toBe(112000);
    expect(sum(ev, "descontoCentavos")).toBe(11000);
    expect(sum(ev, "valorPagoCentavos")).toBe(101000);
    expect(sum(ev, "valorLiquidoCentavos")).toBe(101000);
    expect(sum(ev, "tarifaCentavos")).toBe(1270);
    expect(new Set(r.eventos.map((e) => e.chaveIdempotencia)).size).toBe(9);
  });

  it("Santander (laravel-boleto): own T positions, lote 7031 accepted with a warning", () => {
    const r = lerRetorno(fixture("retorno/240/laravel-boleto-033-santander.ret"));
    expect(r.banco).toBe("033");
    expect(r.eventos).toHaveLength(1);
    expect(r.eventos[0]).toMatchObject({
      ocorrencia: "17",
      estado: "PAID",
      nossoNumero: "0000000001040",
      carteira: "1",
      vencimento: date(2014, 6, 4),
      valorCentavos: 1000,
      tarifaCentavos: 324,
      motivos: ["03"],
      valorPagoCentavos: 1100,
      dataOcorrencia: date(2014, 6, 4),
      dataCredito: date(2014, 6, 5),
    });
    expect(r.warnings.map((w) => w.code)).toEqual(expect.arrayContaining(["LOTE_NUMBER", "TRAILER_LOTE_COUNT"]));
  });
});

describe("retorno CNAB 240: the trimmed brcobranca files (repair/, fixtures README)", () => {
  it("Banco do Brasil CNAB240.RET: 35 títulos; the first as retorno_cnab_240_spec asserts", () => {
    const r = lerRetorno(repairedFixture("retorno/240/brcobranca-001-CNAB240.RET", 240));
    expect([r.banco, r.eventos.length]).toEqual(["001", 35]);
    const a = r.eventos[0]!;
    expect(a).toMatchObject({
      agencia: "01234",
      conta: "0000000054321",
      carteira: "7",
      valorCentavos: 34400,
      bancoRecebedor: "001",
      agenciaRecebedora: "020850",
      dataCredito: date(2012, 1, 2),
      outrasDespesasCentavos: 4,
      iofCentavos: 3,
      abatimentoCentavos: 2,
      descontoCentavos: 1,
      valorPagoCentavos: 34400,
      jurosCentavos: 9,
      outrosCreditosCentavos: 5,
      tarifaCentavos: 103,
      motivos: ["03"],
    });
    // T 38–57 whole: convênio 1449957 + the source's nosso número 0000020673; vencimento 00000000 is no date
    expect(a.nossoNumero).toBe("14499570000020673");
    expect(a.vencimento).toBeUndefined();
    expect(a.linha).toBe(3);
  });

  it("Sicoob CNAB240SICOOB.RET: 3 títulos; the first as sicoob_spec asserts", () => {
    const r = lerRetorno(repairedFixture("retorno/240/brcobranca-756-CNAB240SICOOB.RET", 240, [{ line: 1, column: 103, blanks: 17 }]));
    expect([r.banco, r.nsa, r.eventos.length]).toEqual(["756", 1, 3]);
    expect(r.eventos[0]).toMatchObject({
      agencia: "03039",
      conta: "0000000489816",
      carteira: "1",
      vencimento: date(2015, 8, 13),
      valorCentavos: 200,
      bancoRecebedor: "756",
      agenciaRecebedora: "030390",
      ocorrencia: "06",
      estado: "PAID",
      dataOcorrencia: date(2015, 8, 10),
      dataCredito: date(2015, 8, 10),
      valorPagoCentavos: 200,
      tarifaCentavos: 170,
      motivos: ["03"],
    });
    // T 38–57: the source's nosso número 0000000083, then parcela 01, modalidade 01 and form 1
    expect(r.eventos[0]!.nossoNumero).toBe("000000008301011");
  });
});

describe("retorno CNAB 240 Itaú (brcobranca CNAB240ITAU.RET, its lote header restored as the README says)", () => {
  it("T at Itaú's own positions (manual May 2014 §3.2) and U: the values its spec asserts", () => {
    const text = repairedFixture("retorno/240/brcobranca-341-CNAB240ITAU.RET", 240, [{ afterLine: 1, record: "34100011T0100030" }]);
    const r = lerRetorno(text);
    expect([r.banco, r.layout, r.eventos.length, r.check.warnings]).toEqual(["341", 240, 1, []]);
    expect(r.eventos[0]).toMatchObject({
      ocorrencia: "06",
      estado: "PAID",
      agencia: "1234",
      conta: "12345",
      carteira: "175",
      nossoNumero: "123456784",
      numeroDocumento: "DOC000123",
      vencimento: date(2026, 7, 15),
      valorCentavos: 12345,
      agenciaRecebedora: "000000",
      tarifaCentavos: 500,
      jurosCentavos: 0,
      descontoCentavos: 0,
      abatimentoCentavos: 0,
      iofCentavos: 0,
      valorPagoCentavos: 12345,
      valorLiquidoCentavos: 12345,
      dataOcorrencia: date(2026, 7, 29),
      dataCredito: date(2026, 7, 29),
      codigoLiquidacao: "01",
      motivos: [],
    });
    // the file is not a bank's: its DAC (49) is 4 where Itaú's modulo 10 over agência + conta + carteira + number gives 5
    expect(mod10("1234" + "12345" + "175" + "12345678")).toBe(5);
  });
});

describe("retorno CNAB 400: expected values of the fixtures README", () => {
  it("Bradesco (brcobranca)", () => {
    const r = lerRetorno(fixture("retorno/400/brcobranca-237-CNAB400BRADESCO.RET"));
    expect(r.eventos).toHaveLength(6);
    expect(r.eventos.map((e) => e.ocorrencia)).toEqual(["02", "02", "02", "02", "02", "10"]);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      carteira: "009",
      agencia: "01467",
      conta: "0019669P",
      nossoNumero: "000000000303",
      ocorrencia: "02",
      estado: "REGISTERED",
      dataOcorrencia: date(2015, 5, 15),
      vencimento: date(2015, 5, 25),
      valorCentavos: 145000,
      bancoRecebedor: "237",
      agenciaRecebedora: "04157",
      tarifaCentavos: 160,
      iofCentavos: 0,
      abatimentoCentavos: 0,
      descontoCentavos: 0,
      jurosCentavos: 0,
      outrosCreditosCentavos: 0,
      valorPagoCentavos: 145000,
      dataCredito: date(2015, 5, 15),
      motivos: [],
    });
    expect(r.eventos[0]!.especie).toBeUndefined();
    expect(r.eventos[5]!.estado).toBe("WRITTEN_OFF");
  });

  it("Itaú (brcobranca)", () => {
    const r = lerRetorno(fixture("retorno/400/brcobranca-341-CNAB400ITAU.RET"));
    expect(r.eventos).toHaveLength(52);
    expect(count(r.eventos)).toEqual({ "06": 51, "09": 1 });
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      agencia: "0730",
      conta: "035110",
      nossoNumero: "000000114",
      carteira: "109",
      ocorrencia: "06",
      estado: "PAID",
      dataOcorrencia: date(2013, 5, 20),
      valorCentavos: 4000,
      bancoRecebedor: "104",
      agenciaRecebedora: "18739",
      tarifaCentavos: 210,
      valorPagoCentavos: 3790,
      dataCredito: date(2013, 5, 21),
      motivos: [],
    });
    expect(r.eventos[0]!.vencimento).toBeUndefined();
    expect(r.eventos[0]!.nossoNumero!.slice(0, 8)).toBe("00000011");
  });

  it("Banco do Brasil CBR643 (brcobranca)", () => {
    const r = lerRetorno(fixture("retorno/400/brcobranca-001-CBR64310.RET"));
    expect(r.eventos).toHaveLength(26);
    expect(r.eventos.every((e) => e.ocorrencia === "06" && e.carteira === "18" && e.estado === "PAID")).toBe(true);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      agencia: "33251",
      conta: "000289353",
      convenio: "1622420",
      nossoNumero: "16224200000000003",
      dataOcorrencia: date(2009, 1, 20),
      dataCredito: date(2009, 1, 22),
      valorPagoCentavos: 9064,
    });
  });

  it("Santander (brcobranca): bank from the header, PIX record attached", () => {
    const r = lerRetorno(fixture("retorno/400/brcobranca-033-CNAB400SANTANDER.RET"));
    expect(r.banco).toBe("033");
    expect(r.eventos).toHaveLength(52);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      agencia: "0730",
      conta: "035110",
      valorCentavos: 4000,
      bancoRecebedor: "033",
      valorPagoCentavos: 3790,
      motivos: [],
    });
    expect(r.eventos[51]!.pix).toEqual({ tipoChave: "1", chave: "12345678901", txid: "d48c95197d6ec3985b89bc3ccb3351" });
  });

  it("Bradesco (laravel-boleto): 6 liquidations", () => {
    const r = lerRetorno(fixture("retorno/400/laravel-boleto-237-bradesco.ret"));
    expect(r.eventos.map((e) => e.ocorrencia)).toEqual(["02", "06", "17", "17", "17", "17", "17"]);
    expect(r.eventos.filter((e) => e.estado === "PAID")).toHaveLength(6);
    expect(r.eventos[0]).toMatchObject({ nossoNumero: "000000000097", valorCentavos: 500, vencimento: date(2012, 4, 12) });
  });

  it("Itaú (laravel-boleto): 3 liquidations; NN DAC per §3.3 (errata 5)", () => {
    const r = lerRetorno(fixture("retorno/400/laravel-boleto-341-itau.ret"));
    expect(r.eventos.map((e) => e.ocorrencia)).toEqual(["06", "25", "06", "06"]);
    expect(r.eventos.filter((e) => e.estado === "PAID")).toHaveLength(3);
    expect(r.eventos[1]!.estado).toBe("UNKNOWN");
    const e = r.eventos[0]!;
    expect(e).toMatchObject({
      nossoNumero: "002313270",
      carteira: "109",
      valorCentavos: 38975,
      tarifaCentavos: 333,
      valorPagoCentavos: 20997,
      dataOcorrencia: date(2013, 6, 20),
      dataCredito: date(2013, 6, 21),
    });
    // errata 5, on the brcobranca file (the laravel one is synthetic): 63–70 = 86–93, DAC at 94 per §3.3
    const lines = Buffer.from(fixture("retorno/400/brcobranca-341-CNAB400ITAU.RET"))
      .toString("latin1")
      .split("\n")
      .filter((l) => l[0] === "1");
    expect(lines).toHaveLength(52);
    for (const line of lines) {
      expect(line.slice(62, 70)).toBe(line.slice(85, 93));
      expect(String(mod10(line.slice(17, 21) + line.slice(23, 28) + line.slice(82, 85) + line.slice(62, 70)))).toBe(line[93]);
    }
  });

  it("Banco do Brasil (laravel-boleto) and Santander (laravel-boleto, unterminated last record)", () => {
    const bb = lerRetorno(fixture("retorno/400/laravel-boleto-001-banco_brasil.ret"));
    expect(bb.eventos).toHaveLength(1);
    expect(bb.eventos[0]).toMatchObject({
      convenio: "1112245",
      nossoNumero: "11122450000000290",
      carteira: "18",
      ocorrencia: "06",
      estado: "PAID",
      dataOcorrencia: date(2015, 9, 8),
      valorCentavos: 2500,
      dataCredito: date(2015, 9, 10),
      valorPagoCentavos: 2500,
    });
    const s = lerRetorno(fixture("retorno/400/laravel-boleto-033-santander.ret"));
    expect(s.check.finalNewline).toBe(false);
    expect(s.eventos).toHaveLength(1);
    expect(s.eventos[0]).toMatchObject({
      nossoNumero: "00000019",
      ocorrencia: "02",
      estado: "REGISTERED",
      vencimento: date(2016, 10, 20),
      valorCentavos: 10000,
    });
    expect(s.eventos[0]!.pix).toBeUndefined();
  });
});

describe("Bolepix: the bank's PIX data in the retorno", () => {
  const lines = (f: string) =>
    Buffer.from(fixture(f))
      .toString("latin1")
      .split("\r\n")
      .filter((l) => l.length === 400);
  it("Itaú type 3 carries the full EMV, which parses as a BR Code", () => {
    const [h, d] = lines("retorno/400/laravel-boleto-341-itau.ret");
    const emv = buildPixDinamico({
      url: "pix.itau.example/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25",
      nome: "EMPRESA",
      cidade: "SAO PAULO",
    });
    const pix = "3" + emv.padEnd(390, " ") + "   " + "000003";
    const text = [h!, d!.slice(0, 394) + "000002", pix, "9" + " ".repeat(393) + "000004"].join("\r\n") + "\r\n";
    const e = lerRetorno(text).eventos[0]!;
    expect(e.pix?.emv).toBe(emv);
    expect(parsePix(e.pix!.emv!).tipo).toBe("DINAMICO");
  });
  it("Bradesco type 4 carries location and txid", () => {
    const [h, d] = lines("retorno/400/laravel-boleto-237-bradesco.ret");
    const rec =
      "4" +
      " ".repeat(27) +
      "pix.bradesco.example/cobv/abc".padEnd(77, " ") +
      "TXID0123456789ABCDEFGHIJKLMNOP".padEnd(35, " ") +
      " ".repeat(254) +
      "000003";
    const text = [h!, d!.slice(0, 394) + "000002", rec, "9" + " ".repeat(393) + "000004"].join("\r\n") + "\r\n";
    expect(lerRetorno(text).eventos[0]!.pix).toEqual({ url: "pix.bradesco.example/cobv/abc", txid: "TXID0123456789ABCDEFGHIJKLMNOP" });
  });
});

describe("occurrence mapping", () => {
  it("unknown codes are UNKNOWN, never PAID", () => {
    for (const [b, l] of [
      ["237", 400],
      ["341", 400],
      ["001", 400],
      ["033", 400],
      ["104", 240],
      ["999", 240],
    ] as const) {
      expect(mapearOcorrencia(b, l, "ZZ").estado).toBe("UNKNOWN");
      expect(mapearOcorrencia(b, l, "99").estado).not.toBe("PAID");
    }
  });
  it("Itaú 06 then 10 for the same payment: only one PAID event", () => {
    expect(mapearOcorrencia("341", 400, "06").estado).toBe("PAID");
    expect(mapearOcorrencia("341", 400, "10").estado).toBe("WRITTEN_OFF");
  });
  it("re-reading the same file gives the same idempotency keys", () => {
    const a = lerRetorno(fixture("retorno/400/brcobranca-341-CNAB400ITAU.RET")).eventos.map((e) => e.chaveIdempotencia);
    const b = lerRetorno(fixture("retorno/400/brcobranca-341-CNAB400ITAU.RET")).eventos.map((e) => e.chaveIdempotencia);
    expect(a).toEqual(b);
    expect(new Set(a).size).toBe(a.length);
  });
});

describe("our boleto id round-trips remessa → retorno", () => {
  it("CNAB 240: P 196–220 echoed in T 106–130", () => {
    const remessa = gerarRemessa({
      banco: "756",
      layout: 240,
      nsa: 7,
      geradoEm: { year: 2026, month: 11, day: 29, hour: 10, minute: 0, second: 0 },
      beneficiario: {
        nome: "Empresa",
        documento: "11222333000181",
        agencia: "4327",
        agenciaDv: "3",
        conta: "3666",
        contaDv: "8",
        convenio: "512231",
        modalidade: "01",
      },
      titulos: [
        {
          id: "bol_01HZX9K2",
          nossoNumero: "42",
          vencimento: date(2026, 12, 15),
          emissao: date(2026, 11, 29),
          valorCentavos: 15000,
          pagador: { nome: "Fulano", documento: "52998224725", cep: "01001000", uf: "SP" },
        },
      ],
    });
    const p = remessa.text.split("\r\n")[2]!;
    const id = p.slice(195, 220).trim();
    expect(id).toBe("bol_01HZX9K2");
    // the bank's answer, written with the same T/U tables
    const t = encodeRecord(SEGMENTO_T, {
      banco: "756",
      seq: 1,
      ocorrencia: "06",
      id,
      nossoNumero: "42",
      valorCentavos: 15000,
      vencimento: date(2026, 12, 15),
    });
    const u = encodeRecord(SEGMENTO_U, {
      banco: "756",
      seq: 2,
      ocorrencia: "06",
      valorPagoCentavos: 15000,
      dataOcorrencia: date(2026, 12, 14),
    });
    const lote = (l: string) => l.slice(0, 3) + "0001" + l.slice(7);
    const header = "756" + "0000" + "0" + " ".repeat(134) + "2" + " ".repeat(97);
    const hl = "756" + "0001" + "1" + "T" + " ".repeat(231);
    const tl = "756" + "0001" + "5" + " ".repeat(9) + "000004" + " ".repeat(217);
    const ta = "756" + "9999" + "9" + " ".repeat(9) + "000001000006" + " ".repeat(211);
    const file = [header, hl, lote(t), lote(u), tl, ta].join("\r\n") + "\r\n";
    const r = lerRetorno(file);
    expect(r.eventos[0]).toMatchObject({ id: "bol_01HZX9K2", estado: "PAID", valorPagoCentavos: 15000 });
  });

  it("CNAB 400: 38–62 echoed back (Bradesco)", () => {
    const remessa = gerarRemessa({
      banco: "237",
      layout: 400,
      nsa: 3,
      geradoEm: { year: 2026, month: 11, day: 29, hour: 10, minute: 0, second: 0 },
      beneficiario: {
        nome: "Empresa",
        documento: "11222333000181",
        agencia: "1234",
        conta: "12345",
        contaDv: "0",
        carteira: "09",
        convenio: "999",
      },
      titulos: [
        {
          id: "bol-400-xyz",
          nossoNumero: "77",
          vencimento: date(2026, 12, 15),
          emissao: date(2026, 11, 29),
          valorCentavos: 100,
          pagador: { nome: "Fulano", documento: "52998224725" },
        },
      ],
    });
    const det = remessa.text.split("\r\n")[1]!;
    const bankLine = fixtureLine("retorno/400/brcobranca-237-CNAB400BRADESCO.RET", 1);
    const echoed = bankLine.slice(0, 37) + det.slice(37, 62) + bankLine.slice(62);
    const text =
      [fixtureLine("retorno/400/brcobranca-237-CNAB400BRADESCO.RET", 0), echoed, "9" + " ".repeat(393) + "000003"].join("\r\n") + "\r\n";
    expect(lerRetorno(text).eventos[0]!.id).toBe("bol-400-xyz");
  });
});

function fixtureLine(f: string, n: number): string {
  return Buffer.from(fixture(f)).toString("latin1").split(/\r?\n/)[n]!;
}

describe("retorno character set: Latin-1 read one byte a character, UTF-8 refused by line and column (decision 0025)", () => {
  // BoletoNetCore's Inter (077) retorno, its detail's pagador (182–221) and rejection text (241–380) rewritten
  const inter = fixture("retorno/400/boletonetcore-077-inter.ret");
  const detalhe = (pagador: Buffer, motivo: Buffer): Uint8Array => {
    const lines = Buffer.from(inter).toString("latin1").split("\n");
    const l = Buffer.from(lines[1]!, "latin1");
    const out = Buffer.concat([l.subarray(0, 181), pagador, l.subarray(221, 240), motivo, l.subarray(380)]);
    return Buffer.concat([Buffer.from(`${lines[0]}\n`, "latin1"), out, Buffer.from(`\n${lines[2]}`, "latin1")]);
  };
  const latin1 = (s: string, width: number) => Buffer.from(s.padEnd(width, " "), "latin1");

  it("a Latin-1 pagador and rejection text: the values after them stay in place", () => {
    const bytes = detalhe(latin1("JOSÉ DA CONCEIÇÃO", 40), latin1("CEP INVÁLIDO: NÃO ENCONTRADO", 140));
    expect(bytes.length).toBe(inter.length);
    const r = lerRetorno(bytes);
    const antes = lerRetorno(inter).eventos[0]!;
    expect(r.check.lines[1]!.slice(181, 221).trim()).toBe("JOSÉ DA CONCEIÇÃO");
    expect(r.eventos[0]).toEqual({
      ...antes,
      motivos: ["CEP INVÁLIDO: NÃO ENCONTRADO"],
      chaveIdempotencia: r.eventos[0]!.chaveIdempotencia,
    });
    expect(r.warnings).toEqual(lerRetorno(inter).warnings);
  });

  it("the same name in UTF-8 is refused with its line and column, not misread", () => {
    // the bank counted characters: É, Ç and Ã take two bytes each, the line has 403
    const utf8 = Buffer.from("JOSÉ DA CONCEIÇÃO".padEnd(40, " "), "utf8");
    const e = refusalOf(() => lerRetorno(detalhe(utf8, latin1("", 140))));
    expect(e.code).toBe("CNAB_ESTRUTURA_INVALIDA");
    expect(e.message).toBe(
      'CNAB_ESTRUTURA_INVALIDA: line 2 UTF8: column 185: "É" encoded in UTF-8 (bytes C3 89); CNAB files are one byte a character ' +
        "(ASCII, or Latin-1 in a retorno), and its extra bytes shift every position after it",
    );
  });

  it("a UTF-8 header: the error names it, and the other lines are not called too short", () => {
    const lines = Buffer.from(inter).toString("latin1").split("\n");
    const header = Buffer.from(`${lines[0]!.slice(0, 46)}${"BENEFICIÁRIO COBRANÇA".padEnd(30, " ")}${lines[0]!.slice(76)}`, "utf8");
    const bytes = Buffer.concat([header, Buffer.from(`\n${lines[1]}\n${lines[2]}`, "latin1")]);
    const e = refusalOf(() => lerRetorno(bytes));
    expect((e.details!.errors as { rule: string; line: number }[]).map((f) => [f.line, f.rule])).toEqual([[1, "UTF8"]]);
    expect(e.message).toContain('line 1 UTF8: column 55: "Á" encoded in UTF-8 (bytes C3 81)');
  });
});
