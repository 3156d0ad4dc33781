/**
 * CNAB files of the banks added in 2026 against their golden files (test/fixtures/cnab README): remessa
 * written byte for byte or equal outside named columns, read back to the same títulos; retorno values as
 * the fixture's source asserts them.
 */
import { describe, expect, it } from "vitest";
import { date } from "../date.js";
import { fixture, fixtureText, repairedFixture, sha256 } from "../testing/fixtures.js";
import { refusalOf } from "../testing/refusal.js";
import { checkCnab } from "./checker.js";
import { type Pessoa, type RemessaInput, type Titulo, gerarRemessa, lerRemessa, reescreverRemessa } from "./remessa.js";
import { BRB_400_HEADER_RETORNO } from "./layouts400.js";
import { decodeRecord } from "./record.js";
import { lerRetorno } from "./retorno.js";
import { mod11BNB } from "../checkdigits.js";
import { nossoNumero } from "../campo-livre.js";

/** The brcobranca golden inputs (the same pagador and clock as remessa.test.ts). */
const PAGADOR: Pessoa = {
  nome: "PABLO DIEGO JOSÉ FRANCISCO,!^.?\\/@  DE PAULA JUAN NEPOMUCENO MARÍA DE LOS REMEDIOS CIPRIANO DE LA SANTÍSSIMA TRINIDAD RUIZ Y PICASSO",
  documento: "12345678901",
  endereco: "RUA RIO GRANDE DO SUL,!^.?\\/@ São paulo Minas caçapa da silva junior",
  bairro: "São josé dos quatro apostolos magros",
  cep: "12345678",
  cidade: "Santa rita de cássia maria da silva",
  uf: "SP",
};
const HOJE = date(2015, 7, 14);
const GERADO = { ...HOJE, hour: 16, minute: 15, second: 15 };
const NOME = "SOCIEDADE BRASILEIRA DE ZOOLOGIA LTDA";
const titulo = (over: Partial<Titulo>): Titulo => ({
  id: "6969",
  nossoNumero: "123",
  numeroDocumento: "6969",
  vencimento: HOJE,
  emissao: HOJE,
  valorCentavos: 19990,
  pagador: PAGADOR,
  ...over,
});

/**
 * [file, input, [line, from, to, ours, why][], nosso número read back, título id in the golden file]: the
 * columns where our writer deliberately differs, and what reading the files gives.
 */
const GOLDEN: Array<[string, RemessaInput, Array<[number, number, number, string, string]>, string, string | undefined]> = [
  [
    "remessa/240/brcobranca-085-remessa-ailos-cnab240.rem",
    {
      banco: "085",
      layout: 240,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678901",
        convenio: "123456",
        agencia: "12345",
        agenciaDv: "1",
        conta: "1234567",
        contaDv: "9",
      },
      titulos: [titulo({ multa: { codigo: "2", data: HOJE, valor: 200 } })],
    },
    // Ailos C007 has one value, 1 = com cadastramento (registered); brcobranca writes 0.
    [[3, 59, 59, "1", "P forma de cadastramento"]],
    "12345679000000123", // P 38–57 read back is the boleto's nosso número
    "6969",
  ],
  [
    "remessa/400/brcobranca-136-remessa-unicred-cnab400.rem",
    {
      banco: "136",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: NOME,
        documento: "12345678910",
        convenio: "1234567890",
        agencia: "1234",
        agenciaDv: "3",
        conta: "12345",
        contaDv: "1",
      },
      titulos: [
        titulo({
          nossoNumero: "7200003",
          numeroDocumento: "0000001/01",
          juros: { codigo: "1", valor: 200 },
          protesto: { codigo: "2", dias: 5 },
          pagador: {
            nome: "AKRETION LTDA",
            documento: "00012345678901",
            endereco: "AVENIDA PAULISTA 1",
            bairro: "CENTRO",
            cep: "12345678",
            cidade: "SAO PAULO",
            uf: "SP",
          },
        }),
      ],
    },
    [
      // The Unicred manual (remessa §5.5.2): 108–110 zeros, 111–117 the file's sequence; the file leaves both blank.
      [1, 108, 110, "000", "header variação da carteira"],
      [1, 111, 117, "0000001", "header NSA"],
      // 38–62 is the company's own field: we write the título id there; the file leaves it blank.
      [2, 38, 62, "6969                     ", "controle do participante = título id"],
      // The file says mora "5 = isento" beside a mora value of R$ 2,00; a value per day is type 1.
      [2, 105, 105, "1", "tipo de mora for juros code 1"],
      // Our CNAB text keeps letters, digits and blanks: "0000001/01" is written 000000101.
      [2, 118, 120, "01 ", "seu número without the slash"],
    ],
    "7200003",
    undefined, // the file leaves 38–62 blank
  ],
  [
    "remessa/400/brcobranca-004-remessa-banco-nordeste-cnab400.rem",
    {
      banco: "004",
      layout: 400,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: { nome: NOME, documento: "12345678910", agencia: "1234", conta: "1234567", contaDv: "1" },
      titulos: [titulo({ numeroDocumento: undefined })],
    },
    [
      // The BNB manual (§6.1) names the bank "B. DO NORDESTE"; the file has "B.DO NORDESTE".
      [1, 80, 94, "B. DO NORDESTE ", "header nome do banco"],
      // §6.2: 140–142 "preencher com zeros" (the bank picks the collecting bank); the file has 004.
      [2, 140, 142, "000", "detail número do banco"],
    ],
    "123",
    "6969",
  ],
  [
    "remessa/240/brcobranca-341-remessa-itau-cnab240.rem",
    {
      banco: "341",
      layout: 240,
      nsa: 1,
      geradoEm: GERADO,
      validarDocumentos: false,
      beneficiario: {
        nome: "EMPRESA TESTE LTDA",
        documento: "28254225000193",
        carteira: "175",
        agencia: "1234",
        conta: "12345",
        contaDv: "1",
      },
      titulos: [
        titulo({
          id: "9999",
          nossoNumero: "12345678",
          numeroDocumento: "9999",
          especie: "01",
          valorCentavos: 12345,
          baixa: { codigo: "3", dias: 0 },
        }),
      ],
    },
    // Itaú's manual (§2.2: alphanumeric fields left-aligned, blank-filled): the documento 9999 at P 63–72;
    // brcobranca right-aligns it
    [[3, 63, 72, "9999      ", "P número do documento"]],
    "175123456785", // P 38–49: carteira + nosso número + DAC
    "9999",
  ],
];

describe("remessa golden files of issue 23 (the 2026 banks, Itaú CNAB 240)", () => {
  it.each(GOLDEN)("%s: equal outside the documented columns", (file, input, differences) => {
    const out = gerarRemessa(input);
    expect(out.check.ok).toBe(true);
    const golden = fixtureText(file).split("\r\n");
    // BNB's manual ends the file with the DOS end-of-file byte after the last CRLF; the golden file has none
    const ours = out.text.replace(/\x1a$/, "").split("\r\n");
    expect(ours.map((l) => l.length)).toEqual(golden.map((l) => l.length));
    for (const [line, from, to, value, what] of differences) expect(ours[line - 1]!.slice(from - 1, to), what).toBe(value);
    const blank = (l: string, i: number) =>
      differences.reduce((s, [line, from, to]) => (line === i + 1 ? s.slice(0, from - 1) + "#".repeat(to - from + 1) + s.slice(to) : s), l);
    expect(ours.map(blank)).toEqual(golden.map(blank));
    expect(out.warnings.some((w) => w.code === "TEXTO_TRUNCADO" && w.field.includes("nome"))).toBe(true);
  });

  it.each(GOLDEN)("%s: golden and ours read back to the same título and re-encode to the same bytes", (file, input, _d, nn, idGolden) => {
    const t = input.titulos[0]!;
    for (const [text, id] of [
      [fixtureText(file), idGolden],
      [gerarRemessa(input).text, t.id],
    ] as const) {
      const lida = lerRemessa(text);
      expect(reescreverRemessa(lida)).toBe(text);
      expect(lida.banco).toBe(input.banco);
      expect(lida.titulos.map((x) => [x.id, x.nossoNumero?.replace(/^0+/, ""), x.valorCentavos, x.vencimento])).toEqual([
        [id, nn, t.valorCentavos, t.vencimento],
      ]);
    }
  });
});

describe("085 Ailos CNAB 240", () => {
  const [, ailos] = GOLDEN[0]!;

  it("P 38–57 is the boleto's nosso número: conta + DV + 9-digit sequence", () => {
    const p = gerarRemessa(ailos).text.split("\r\n")[2]!;
    expect(p.slice(37, 57)).toBe("12345679000000123   ");
  });

  it("needs the conta DV of the beneficiário", () => {
    const e = refusalOf(() => gerarRemessa({ ...ailos, beneficiario: { ...ailos.beneficiario, contaDv: undefined } }));
    expect([e.code, e.field]).toEqual(["CAMPO_OBRIGATORIO", "beneficiario.contaDv"]);
  });

  it("retorno (brcobranca CNAB240AILOS.RET, repaired as the README says): 3 liquidations", () => {
    expect(sha256(fixture("repair/retorno/240/brcobranca-085-CNAB240AILOS.RET"))).toBe(
      "c99d511a2244c3210392b25f4631af7acc8baed865bb68e76bd7703c5e5f32d2",
    );
    const text = repairedFixture("retorno/240/brcobranca-085-CNAB240AILOS.RET", 240, [{ line: 1, column: 103, blanks: 18 }]);
    expect(checkCnab(text).errors).toEqual([]);
    const r = lerRetorno(text);
    expect([r.banco, r.nsa, r.dataArquivo]).toEqual(["085", 1, "11082015"]);
    expect(r.eventos).toHaveLength(3);
    expect(r.eventos[0]).toMatchObject({
      agencia: "03039",
      conta: "0000000489816",
      nossoNumero: "000000000000083",
      carteira: "1",
      vencimento: date(2015, 8, 13),
      valorCentavos: 200,
      bancoRecebedor: "085",
      agenciaRecebedora: "030390",
      dataCredito: date(2015, 8, 10),
      dataOcorrencia: date(2015, 8, 10),
      ocorrencia: "06",
      estado: "PAID",
      outrasDespesasCentavos: 0,
      iofCentavos: 0,
      abatimentoCentavos: 0,
      descontoCentavos: 0,
      valorPagoCentavos: 200,
      jurosCentavos: 0,
      outrosCreditosCentavos: 0,
      tarifaCentavos: 170,
      motivos: ["03"],
    });
    expect(r.eventos.map((e) => [e.nossoNumero, e.estado])).toEqual([
      ["000000000000083", "PAID"],
      ["000000000000116", "PAID"],
      ["000000000000123", "PAID"],
    ]);
  });
});

describe("136 Unicred CNAB 400", () => {
  const [, unicred] = GOLDEN[1]!;
  const detalhe = (over: Partial<Titulo>) => gerarRemessa({ ...unicred, titulos: [titulo(over)] }).text.split("\r\n")[1]!;

  it("nosso número 193–203 with its modulo 11 DV; the bank's codes for multa, mora, desconto and protesto", () => {
    const d = detalhe({ nossoNumero: "299621", multa: { codigo: "2", valor: 200 }, desconto: { codigo: "1", data: HOJE, valor: 500 } });
    expect(d.slice(192, 203)).toBe("00002996219");
    expect([d[93], d.slice(94, 104), d[104], d[149], d.slice(173, 179), d.slice(179, 192), d[157]]).toEqual([
      "2",
      "0000000200",
      "5",
      "1",
      "140715",
      "0000000000500",
      "3",
    ]);
  });

  it("refuses what its slots cannot carry and a beneficiário without its DVs, naming the field", () => {
    const f = (fn: () => unknown) => {
      const e = refusalOf(fn);
      return [e.code, e.field];
    };
    expect(f(() => detalhe({ juros: { codigo: "2", valor: 100 } }))).toEqual(["CAMPO_INVALIDO", "titulos[0].juros.codigo"]);
    expect(f(() => detalhe({ baixa: { codigo: "1", dias: 30 } }))).toEqual(["CAMPO_INVALIDO", "titulos[0].baixa"]);
    expect(f(() => gerarRemessa({ ...unicred, beneficiario: { ...unicred.beneficiario, contaDv: undefined } }))).toEqual([
      "CAMPO_OBRIGATORIO",
      "beneficiario.contaDv",
    ]);
  });

  it("retorno (brcobranca CNAB400UNICRED.RET, repaired as the README says): one liquidation", () => {
    expect(sha256(fixture("repair/retorno/400/brcobranca-136-CNAB400UNICRED.RET"))).toBe(
      "95172c99600aefabcb050b1a1b46823ca255045bd77dd1ad3b1331aa31d70eb7",
    );
    const text = repairedFixture("retorno/400/brcobranca-136-CNAB400UNICRED.RET", 400, [
      { line: 1, column: 77, text: "136UNICREDDOBRASIL" },
      { line: 3, column: 395, text: "000003" },
    ]);
    const r = lerRetorno(text);
    expect(r.banco).toBe("136");
    expect(r.eventos).toHaveLength(1);
    expect(r.eventos[0]).toMatchObject({
      agencia: "4205",
      conta: "06000156",
      nossoNumero: "00000000000000116",
      ocorrencia: "06",
      estado: "PAID",
      dataOcorrencia: date(2015, 5, 15),
      vencimento: date(2015, 5, 13),
      valorCentavos: 44400,
      bancoRecebedor: "090",
      agenciaRecebedora: "42050",
      dataCredito: date(2015, 5, 18),
      tarifaCentavos: 160,
      valorPagoCentavos: 44400,
      valorLiquidoCentavos: 43840,
      descontoCentavos: 0,
      jurosCentavos: 0,
      motivos: [],
    });
  });
});

describe("004 Banco do Nordeste CNAB 400", () => {
  const [, bnb] = GOLDEN[2]!;
  const detalhe = (over: Partial<Titulo>) => gerarRemessa({ ...bnb, titulos: [titulo(over)] }).text.split("\r\n")[1]!;

  it("ends the file with the end-of-file byte after the trailer's CRLF, and reads it back", () => {
    const out = gerarRemessa(bnb);
    expect(out.text.endsWith("000003\r\n\x1a")).toBe(true);
    expect(out.bytes[out.bytes.length - 1]).toBe(0x1a);
    const lida = lerRemessa(out.bytes);
    expect(lida.fimDeArquivo).toBe("\x1a");
    expect(reescreverRemessa(lida)).toBe(out.text);
  });

  it("nosso número + DV at 63–70 (modulo 11, weights 2–8), multa as a whole percentage, protest days or 99", () => {
    const d = detalhe({ nossoNumero: "9061138", multa: { codigo: "2", valor: 200 }, protesto: { codigo: "1", dias: 5 } });
    expect([d.slice(62, 70), d.slice(31, 33), d.slice(391, 393)]).toEqual(["90611381", "02", "05"]);
    expect(detalhe({}).slice(391, 393)).toBe("99");
    const e = refusalOf(() => detalhe({ multa: { codigo: "2", valor: 250 } }));
    expect([e.code, e.field]).toEqual(["CAMPO_INVALIDO", "titulos[0].multa.valor"]);
    expect(refusalOf(() => detalhe({ multa: { codigo: "1", valor: 500 } })).field).toBe("titulos[0].multa.codigo");
  });

  it("retorno (brcobranca): the values its spec asserts", () => {
    const r = lerRetorno(fixture("retorno/400/brcobranca-004-CNAB400BANCONORDESTE.RET"));
    expect(r.banco).toBe("004");
    expect(r.eventos).toHaveLength(1);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      agencia: "0217",
      conta: "00056911",
      nossoNumero: "00000116",
      carteira: "I",
      ocorrencia: "06",
      estado: "PAID",
      dataOcorrencia: date(2014, 11, 19),
      vencimento: date(2014, 11, 19),
      valorCentavos: 17500,
      bancoRecebedor: "004",
      especie: "01",
      tarifaCentavos: 260,
      abatimentoCentavos: 0,
      descontoCentavos: 0,
      valorPagoCentavos: 17500,
      jurosCentavos: 0,
      // the error table flags columns 298–300 (nota 7/8: error = column − 279)
      motivos: ["19", "20", "21"],
    });
  });

  it("retorno (laravel-boleto bnb.ret): 3 entradas and 7 liquidations; every nosso número's DV checks", () => {
    const r = lerRetorno(fixture("retorno/400/laravel-boleto-004-bnb.ret"));
    expect([r.banco, r.dataArquivo, r.eventos.length]).toEqual(["004", "070317", 10]);
    expect(r.eventos.map((e) => e.estado)).toEqual([...Array(3).fill("REGISTERED"), ...Array(7).fill("PAID")]);
    expect(r.eventos.every((e) => e.numeroDocumento)).toBe(true);
    const todos = [...r.eventos, ...lerRetorno(fixture("retorno/400/brcobranca-004-CNAB400BANCONORDESTE.RET")).eventos];
    for (const e of todos) expect(mod11BNB(e.nossoNumero!.slice(0, 7)), e.nossoNumero).toBe(e.nossoNumero!.slice(7));
    expect(r.eventos.filter((e) => e.estado === "PAID").reduce((s, e) => s + (e.valorPagoCentavos ?? 0), 0)).toBe(1_655_516);
  });
});

describe("133 Cresol CNAB 400 (Bradesco's records with bank 133)", () => {
  // laravel-boleto tests/Remessa/CresolCnab400Test.php: the positions it asserts for these inputs
  const cresol: RemessaInput = {
    banco: "133",
    layout: 400,
    nsa: 1,
    geradoEm: { year: 2026, month: 2, day: 10, hour: 9, minute: 0, second: 0 },
    beneficiario: {
      nome: "BENEFICIARIO PF",
      documento: "077.651.119-06",
      convenio: "90106900282456",
      carteira: "09",
      agencia: "1069",
      conta: "28245",
      contaDv: "6",
    },
    titulos: [
      {
        id: "CTRL-001",
        nossoNumero: "1",
        numeroDocumento: "1",
        vencimento: date(2026, 3, 10),
        emissao: date(2026, 2, 10),
        valorCentavos: 15000,
        multa: { codigo: "2", valor: 200 },
        pagador: {
          nome: "PAGADOR TESTE",
          documento: "123.456.789-09",
          endereco: "Rua dois, 456",
          bairro: "CENTRO",
          cep: "85010-000",
          cidade: "CIDADE",
          uf: "PR",
        },
      },
    ],
  };

  it("header and detail at the positions the reference asserts; nosso número DV P survives at 82", () => {
    const [h, d, t] = gerarRemessa(cresol).text.split("\r\n");
    expect([h!.slice(0, 26), h!.slice(26, 46), h!.slice(76, 79), h!.slice(79, 94), h!.slice(394)]).toEqual([
      "01REMESSA01COBRANCA       ",
      "00000090106900282456",
      "133",
      "CRESOL         ",
      "000001",
    ]);
    expect([d!.slice(20, 37), d![65], d!.slice(66, 70), d!.slice(70, 81), d![81], d![92], d!.slice(108, 110)]).toEqual([
      "0009010690028245" + "6",
      "2",
      "0200",
      "00000000001",
      "1",
      "2",
      "01",
    ]);
    expect([
      d!.slice(120, 126),
      d!.slice(126, 139),
      d!.slice(147, 149),
      d!.slice(150, 156),
      d!.slice(218, 234),
      d!.slice(326, 334),
    ]).toEqual(["100326", "0000000015000", "02", "100226", "0100012345678909", "85010000"]);
    expect([t![0], t!.slice(394)]).toEqual(["9", "000003"]);
    const p = gerarRemessa({ ...cresol, titulos: [{ ...cresol.titulos[0]!, nossoNumero: "2" }] }).text.split("\r\n")[1]!;
    expect(p.slice(70, 82)).toBe("00000000002P");
    expect(lerRemessa(gerarRemessa(cresol).text).titulos.map((x) => [x.id, x.valorCentavos])).toEqual([["CTRL-001", 15000]]);
  });

  it("refuses a protest instruction, which its CNAB 400 has no slot for", () => {
    const e = refusalOf(() => gerarRemessa({ ...cresol, titulos: [{ ...cresol.titulos[0]!, protesto: { codigo: "1", dias: 5 } }] }));
    expect([e.code, e.field]).toEqual(["CAMPO_INVALIDO", "titulos[0].protesto"]);
  });

  it("retorno (laravel-boleto cresol.ret): entrada, liquidação with P, rejeição, as its test asserts", () => {
    const r = lerRetorno(fixture("retorno/400/laravel-boleto-133-cresol.ret"));
    expect([r.banco, r.eventos.length]).toEqual(["133", 3]);
    const [a, b, c] = r.eventos;
    expect(a).toMatchObject({
      ocorrencia: "02",
      estado: "REGISTERED",
      nossoNumero: "000000000011",
      valorCentavos: 15000,
      vencimento: date(2026, 3, 10),
      dataOcorrencia: date(2026, 2, 12),
    });
    expect(b).toMatchObject({
      ocorrencia: "06",
      estado: "PAID",
      nossoNumero: "00000000002P",
      valorCentavos: 15000,
      valorPagoCentavos: 15308,
      tarifaCentavos: 350,
      jurosCentavos: 8,
      dataCredito: date(2026, 3, 16),
    });
    expect(c).toMatchObject({ ocorrencia: "03", estado: "REJECTED", motivos: ["21"] });
    expect(r.eventos.reduce((s, e) => s + (e.valorCentavos ?? 0), 0)).toBe(37_500);
  });

  it("retorno CNAB 240 (laravel-boleto cresol.ret): FEBRABAN T/U, a liquidation and a rejection with two motivos", () => {
    const r = lerRetorno(fixture("retorno/240/laravel-boleto-133-cresol.ret"));
    expect([r.banco, r.eventos.length]).toEqual(["133", 2]);
    expect(r.eventos[0]).toMatchObject({
      ocorrencia: "06",
      estado: "PAID",
      nossoNumero: "00000000000000000001",
      numeroDocumento: "000000000000001",
      id: "CONTROLE-1",
      vencimento: date(2026, 3, 10),
      valorCentavos: 15000,
      valorPagoCentavos: 15000,
      valorLiquidoCentavos: 14750,
      tarifaCentavos: 250,
      dataOcorrencia: date(2026, 3, 11),
      dataCredito: date(2026, 3, 12),
    });
    expect(r.eventos[1]).toMatchObject({ ocorrencia: "03", estado: "REJECTED", motivos: ["08", "03"], id: "CONTROLE-2" });
  });
});

describe("422 Safra CNAB 400 (manual §6; no reference file exists: positions checked against the manual)", () => {
  const safra: RemessaInput = {
    banco: "422",
    layout: 400,
    nsa: 1001,
    geradoEm: { year: 2026, month: 12, day: 1, hour: 9, minute: 0, second: 0 },
    beneficiario: {
      nome: "EMPRESA EXEMPLO LTDA",
      documento: "11222333000181",
      agencia: "1234",
      agenciaDv: "5",
      conta: "00123456",
      contaDv: "7",
    },
    titulos: [
      titulo({
        id: "T1",
        nossoNumero: "453",
        numeroDocumento: "NF1",
        vencimento: date(2026, 12, 15),
        emissao: date(2026, 12, 1),
        valorCentavos: 14150,
        juros: { codigo: "1", valor: 5 },
        multa: { codigo: "2", valor: 200, data: date(2026, 12, 16) },
        protesto: { codigo: "1", dias: 5 },
        pagador: {
          nome: "JOSE DA SILVA",
          documento: "52998224725",
          endereco: "RUA A 1",
          bairro: "CENTRO",
          cep: "01001000",
          cidade: "SAO PAULO",
          uf: "SP",
        },
      }),
    ],
  };

  it("header, detail and trailer at the manual's positions; multa as instrução 16 in the abatimento field", () => {
    const out = gerarRemessa(safra);
    expect(out.check.ok).toBe(true);
    const [h, d, t] = out.text.split("\r\n");
    expect([h!.slice(0, 19), h!.slice(26, 40), h!.slice(76, 90), h!.slice(94, 100), h!.slice(391, 394), h!.slice(394)]).toEqual([
      "01REMESSA01COBRANCA",
      "12345001234567",
      "422BANCO SAFRA",
      "011226",
      "001", // the file number has 3 digits: 1001 wraps
      "000001",
    ]);
    const at = (a: number, b: number) => d!.slice(a - 1, b);
    expect([
      at(2, 3),
      at(4, 17),
      at(18, 31),
      at(38, 62).trim(),
      at(63, 71),
      at(102, 105),
      at(106, 107),
      at(108, 108),
      at(109, 110),
    ]).toEqual(["02", "11222333000181", "12345001234567", "T1", "000004537", "000 ", "05", "1", "01"]);
    expect([at(111, 120), at(121, 126), at(127, 139), at(140, 142), at(157, 158), at(159, 160), at(161, 173), at(206, 218)]).toEqual([
      "NF1       ",
      "151226",
      "0000000014150",
      "422",
      "16",
      "10",
      "0000000000005",
      "1612260200000",
    ]);
    expect([at(219, 220), at(221, 234), at(327, 334), at(389, 391), at(392, 394), at(395, 400)]).toEqual([
      "01",
      "00052998224725",
      "01001000",
      "422",
      "001",
      "000002",
    ]);
    expect([t![0], t!.slice(368, 376), t!.slice(376, 391), t!.slice(391, 394), t!.slice(394)]).toEqual([
      "9",
      "00000001",
      "000000000014150",
      "001",
      "000003",
    ]);
    const lida = lerRemessa(out.text);
    expect(reescreverRemessa(lida)).toBe(out.text);
    expect(lida.titulos.map((x) => [x.id, x.nossoNumero, x.valorCentavos])).toEqual([["T1", "00000453", 14150]]);
  });

  it("refuses a multa beside an abatimento (one field holds either) and needs the agência and conta DVs", () => {
    const t0 = safra.titulos[0]!;
    const e = refusalOf(() => gerarRemessa({ ...safra, titulos: [{ ...t0, abatimentoCentavos: 100 }] }));
    expect([e.code, e.field]).toEqual(["CAMPO_INVALIDO", "titulos[0].abatimentoCentavos"]);
    const semMulta = gerarRemessa({ ...safra, titulos: [{ ...t0, multa: undefined, protesto: undefined, abatimentoCentavos: 100 }] }).text;
    expect([semMulta.split("\r\n")[1]!.slice(156, 160), semMulta.split("\r\n")[1]!.slice(205, 218)]).toEqual(["0000", "0000000000100"]);
    const f = refusalOf(() => gerarRemessa({ ...safra, beneficiario: { ...safra.beneficiario, agenciaDv: undefined } }));
    expect([f.code, f.field]).toEqual(["CAMPO_OBRIGATORIO", "beneficiario.agenciaDv"]);
  });

  it("retorno: a liquidation and a rejection written at the manual's §6.2 positions read back", () => {
    const linha = (campos: Array<[number, string]>) => {
      const l = Array(400).fill(" ");
      for (const [de, v] of campos) for (let i = 0; i < v.length; i++) l[de - 1 + i] = v[i]!;
      return l.join("");
    };
    const header = linha([
      [1, "02RETORNO01COBRANCA"],
      [27, "12345001234567"],
      [47, "EMPRESA EXEMPLO LTDA"],
      [77, "422SAFRA"],
      [95, "161226"],
      [392, "001000001"],
    ]);
    const valores = (pago: string, tarifa: string): Array<[number, string]> => [
      [153, "0000000014150"],
      [166, "42212345"],
      [174, "01"],
      [176, tarifa],
      [189, "0000000000000"],
      [202, "0000000000000"],
      [215, "0000000000000"],
      [228, "0000000000000"],
      [241, "0000000000000"],
      [254, pago],
      [267, "0000000000012"],
      [280, "0000000000000"],
    ];
    const liquidacao = linha([
      [1, "10211222333000181"],
      [18, "12345001234567"],
      [38, "T1"],
      [63, "000004537"],
      [103, "01000"],
      [108, "106161226NF1"],
      [127, "000004537"],
      [147, "151226"],
      ...valores("0000000014162", "0000000000250"),
      [293, "000171226"],
      [392, "001000002"],
    ]);
    const rejeicao = linha([
      [1, "10211222333000181"],
      [18, "12345001234567"],
      [38, "T2"],
      [63, "000004545"],
      [103, "01013"],
      [108, "103161226NF2"],
      [147, "151226"],
      ...valores("0000000000000", "0000000000000"),
      [392, "001000003"],
    ]);
    const trailer = linha([
      [1, "9201422"],
      [18, "0000000100000000014150"],
      [392, "001000004"],
    ]);
    const r = lerRetorno([header, liquidacao, rejeicao, trailer].join("\r\n") + "\r\n");
    expect(r.banco).toBe("422");
    expect(r.eventos[0]).toMatchObject({
      id: "T1",
      nossoNumero: "000004537",
      ocorrencia: "06",
      estado: "PAID",
      dataOcorrencia: date(2026, 12, 16),
      vencimento: date(2026, 12, 15),
      valorCentavos: 14150,
      valorPagoCentavos: 14162,
      jurosCentavos: 12,
      tarifaCentavos: 250,
      bancoRecebedor: "422",
      dataCredito: date(2026, 12, 17),
      motivos: [],
    });
    expect(r.eventos[1]).toMatchObject({ id: "T2", ocorrencia: "03", estado: "REJECTED", motivos: ["013"] });
  });
});

describe("077 Inter CNAB 400 retorno (Manual CNAB400 Inter v1.1 §5)", () => {
  it("laravel-boleto inter.ret: its identities are zeroed, yet the entry's code, dates and value are there", () => {
    const r = lerRetorno(fixture("retorno/400/laravel-boleto-077-inter.ret"));
    expect([r.banco, r.layout, r.dataArquivo, r.eventos.length]).toEqual(["077", 400, "061221", 1]);
    expect(r.eventos[0]).toMatchObject({
      ocorrencia: "02",
      estado: "REGISTERED",
      carteira: "112",
      agencia: "0001",
      nossoNumero: "00000000000",
      numeroDocumento: "0000000001",
      dataOcorrencia: date(2021, 12, 6),
      vencimento: date(2021, 12, 7),
      valorCentavos: 1000,
      bancoRecebedor: "077",
      agenciaRecebedora: "0001",
      especie: "01",
      motivos: [],
    });
    expect(r.eventos[0]!.valorPagoCentavos).toBeUndefined();
  });

  it("BoletoNetCore's sample retorno: the nosso número Inter assigned, with a DV that checks", () => {
    const r = lerRetorno(fixture("retorno/400/boletonetcore-077-inter.ret"));
    expect([r.banco, r.dataArquivo, r.eventos.length]).toEqual(["077", "311023", 1]);
    expect(r.eventos[0]).toMatchObject({
      ocorrencia: "02",
      estado: "REGISTERED",
      carteira: "110",
      conta: "0262457938",
      id: "796B47DFE22F4D75933DA22C1",
      nossoNumero: "30061000215",
      numeroDocumento: "52A212E",
      dataOcorrencia: date(2023, 10, 24),
      vencimento: date(2023, 10, 25),
      valorCentavos: 500,
    });
    const nn = r.eventos[0]!.nossoNumero!;
    expect(nossoNumero({ banco: "077", carteira: "110", convenio: "1", nossoNumero: nn.slice(0, 10) }).completo).toBe(nn);
  });
});

describe("070 BRB retorno (manual v077, Leiaute Retorno: the bank's own 400 positions, dates DDMMAAAA)", () => {
  it("brcobranca CNAB400BANCOBRASILIA.RET (an excerpt, repaired as the README says): the values its spec asserts", () => {
    const r = lerRetorno(
      repairedFixture("retorno/400/brcobranca-070-CNAB400BANCOBRASILIA.RET", 400, [{ line: 3, column: 395, text: "000003" }]),
    );
    expect([r.banco, r.layout, r.dataArquivo, r.eventos.length]).toEqual(["070", 400, "26072012", 1]);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      conta: "0279998886",
      nossoNumero: "107851907015",
      ocorrencia: "05",
      estado: "PAID",
      dataOcorrencia: date(2012, 7, 26),
      vencimento: date(2012, 7, 26),
      valorCentavos: 26492,
      valorPagoCentavos: 26492,
      bancoRecebedor: "070",
      especie: "00",
      iofCentavos: 0,
      descontoCentavos: 0,
      outrosCreditosCentavos: 0,
      dataPagamento: date(2012, 7, 26),
      motivos: [],
    });
    // the manual's data de crédito (119–126) is blank here; brcobranca reports 300–307, the payment date
    expect(r.eventos[0]!.dataCredito).toBeUndefined();
  });

  it("the manual's example retorno: entries, liquidations with their credit date, rejections with their code", () => {
    // its bytes as the manual gives them, Latin-1 accents in the header included (decision 0025)
    const r = lerRetorno(fixture("retorno/400/brb-manual-v077-exemplo-retorno.ret"));
    expect([r.banco, r.dataArquivo, r.eventos.length]).toEqual(["070", "15062016", 12]);
    expect(decodeRecord(BRB_400_HEADER_RETORNO, r.check.lines[0]!).data).toMatchObject({
      nomeEmpresa: "BENEFICIÁRIO COBRANÇA",
      banco: "070",
      nomeBanco: "BRB",
      dataGravacao: "15062016",
    });
    expect(r.warnings).toEqual([]);
    expect(r.eventos.map((e) => [e.nossoNumero, e.ocorrencia, e.estado])).toEqual([
      ["300058407027", "00", "WRITTEN_OFF"],
      ["300058707017", "00", "WRITTEN_OFF"],
      ["300061407083", "02", "REGISTERED"],
      ["300061507088", "02", "REGISTERED"],
      ["104265407038", "05", "PAID"],
      ["204265507010", "06", "PAID"],
      ["104265607010", "05", "PAID"],
      ["100288607071", "09", "REJECTED"],
      ["210003907042", "09", "REJECTED"],
      ["210003907042", "16", "PAID"],
      ["110004007024", "09", "REJECTED"],
      ["110004007024", "15", "PAID"],
    ]);
    expect(r.eventos[4]).toMatchObject({
      id: "CTR 20450/2015 456",
      numeroDocumento: "CTR 20450/201",
      dataOcorrencia: date(2016, 6, 15),
      dataCredito: date(2016, 6, 16),
      vencimento: date(2016, 6, 15),
      valorCentavos: 2268390,
      valorPagoCentavos: 2268390,
      agenciaRecebedora: "03071",
      especie: "21",
    });
    expect(r.eventos[7]).toMatchObject({ motivos: ["019"], motivoDescricao: "CEP INVALIDO" });
    expect(r.eventos[3]).toMatchObject({ pagadorDda: "1" });
    // every nosso número's duplo dígito checks against the chave it was issued with (incremento 25–27)
    for (const e of r.eventos) {
      const nn = e.nossoNumero!;
      const linha = r.check.lines[e.linha - 1]!;
      const dados = { banco: "070", agencia: "240", conta: "0044990", carteira: nn[0]!, nossoNumero: linha.slice(24, 27) + nn.slice(1, 7) };
      expect(nossoNumero(dados).completo, nn).toBe(nn);
    }
  });
});

describe("336 C6 CNAB 400 retorno (laravel-boleto c6.ret: built by its author from C6's manual, not a bank file)", () => {
  it("one liquidation with the nosso número C6 assigned, as the source's test asserts", () => {
    const r = lerRetorno(fixture("retorno/400/laravel-boleto-336-c6.ret"));
    expect([r.banco, r.layout, r.eventos.length]).toEqual(["336", 400, 1]);
    expect(r.eventos[0]).toMatchObject({
      carteira: "20",
      nossoNumero: "000000000016",
      id: "CTRL0000000001",
      ocorrencia: "06",
      estado: "PAID",
      valorCentavos: 10000,
      valorPagoCentavos: 10000,
      dataOcorrencia: date(2026, 8, 18),
      vencimento: date(2026, 8, 25),
      dataCredito: date(2026, 8, 18),
      bancoRecebedor: "336",
      convenio: "000000123456",
    });
    // the number the boleto carries for the same carteira and NN
    expect(nossoNumero({ banco: "336", convenio: "123456", carteira: "20", nossoNumero: "1" }).completo).toBe(r.eventos[0]!.nossoNumero);
  });
});

describe("341 Itaú CNAB 240 (its manual, May 2014)", () => {
  const itau: RemessaInput = {
    banco: "341",
    layout: 240,
    nsa: 1,
    geradoEm: GERADO,
    validarDocumentos: false,
    beneficiario: { nome: NOME, documento: "28254225000193", carteira: "109", agencia: "1234", conta: "12345", contaDv: "1" },
    titulos: [titulo({ nossoNumero: "12345678" })],
  };
  const p = (over: Partial<Titulo>, carteira = "109") =>
    gerarRemessa({
      ...itau,
      beneficiario: { ...itau.beneficiario, carteira },
      titulos: [titulo({ nossoNumero: "12345678", ...over })],
    }).text.split("\r\n")[2]!;

  it("P 38–49 is the boleto's carteira + nosso número + DAC, whose rule depends on the carteira", () => {
    for (const carteira of ["109", "126"]) {
      const boleto = nossoNumero({ banco: "341", agencia: "1234", conta: "12345", carteira, nossoNumero: "12345678" }).completo;
      expect(p({}, carteira).slice(37, 49)).toBe(carteira + boleto);
    }
  });

  it("juros as a value per day with no code, a desconto up to a date with no code; what has no slot is refused", () => {
    const linha = p({ juros: { codigo: "1", valor: 150 }, desconto: { codigo: "1", data: HOJE, valor: 500 } });
    expect([linha[117], linha.slice(126, 141), linha[141], linha.slice(142, 150)]).toEqual(["0", "000000000000150", "0", "14072015"]);
    const e = (over: Partial<Titulo>) => refusalOf(() => p(over));
    expect([e({ juros: { codigo: "2", valor: 100 } }).field, e({ desconto: { codigo: "2", data: HOJE, valor: 100 } }).field]).toEqual([
      "titulos[0].juros.codigo",
      "titulos[0].desconto.codigo",
    ]);
    expect(e({ baixa: { codigo: "1", dias: 120 } }).field).toBe("titulos[0].baixa.dias");
    const semDac = refusalOf(() => gerarRemessa({ ...itau, beneficiario: { ...itau.beneficiario, contaDv: undefined } }));
    expect([semDac.code, semDac.field]).toEqual(["CAMPO_OBRIGATORIO", "beneficiario.contaDv"]);
  });
});

describe("layouts the 2026 banks do not have are refused, never written generically", () => {
  it.each([
    ["136", 240],
    ["004", 240],
    ["133", 240],
    ["422", 240],
    ["085", 400],
    // Inter's remessa is its CNAB 400 (decision 0033; remessa-inter.test.ts); C6's manual was not readable
    // (decisions 0023, 0033); BRB's remessa is its own DCB file, written for layout 400 only (decision 0027)
    ["077", 240],
    ["336", 400],
    ["336", 240],
    ["070", 240],
  ] as const)("bank %s CNAB %s", (banco, layout) => {
    const e = refusalOf(() =>
      gerarRemessa({
        banco,
        layout,
        nsa: 1,
        geradoEm: GERADO,
        validarDocumentos: false,
        beneficiario: { nome: NOME, documento: "12345678901", agencia: "1", conta: "1", contaDv: "1", agenciaDv: "1", convenio: "1" },
        titulos: [titulo({})],
      }),
    );
    expect([e.code, e.field]).toEqual(["CNAB_LAYOUT_DESCONHECIDO", "banco"]);
  });
});
