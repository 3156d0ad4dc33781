/**
 * BRB's DCB remessa (version 077) against the example file of its manual (test/fixtures/cnab README,
 * "BRB (070) remessa"): written equal outside the columns the README names, both files read back to the
 * same títulos; the manual's positions and constants; what the records cannot carry is refused.
 */
import { describe, expect, it } from "vitest";
import { nossoNumero } from "../campo-livre.js";
import { date } from "../date.js";
import { fixtureText } from "../testing/fixtures.js";
import { refusalOf } from "../testing/refusal.js";
import { checkCnab } from "./checker.js";
import { type RemessaInput, type Titulo, gerarRemessa, lerRemessa, reescreverRemessa } from "./remessa.js";

const GOLDEN = "remessa/400/brb-manual-v077-exemplo-remessa.rem";
const MENSAGEM = "PRIMEIRA MENSAGEM DE TESTE ENVIADA PARA O SISTEMA DCB COM 65 POSI";

/** What every título of the manual's example shares, in the fields our títulos have. */
const base = (over: Partial<Titulo>): Titulo => ({
  id: "2123456789012345678900000",
  nossoNumero: "0",
  vencimento: date(2017, 1, 26),
  emissao: date(2016, 9, 19),
  valorCentavos: 100_001,
  abatimentoCentavos: 10_000,
  instrucao1: "01", // não dispensar juros de mora
  multa: { codigo: "1", valor: 200_000 }, // instruction 02 with R$ 2.000,00 at 378–385
  protesto: { codigo: "1", dias: 30 },
  pagador: {
    nome: "ANTONIO PEREIRA DA SILVA",
    documento: "05028932140",
    endereco: "SBS QD. BL.E ED. BRASILIA 9 ANDAR GEBAN",
    bairro: "SBS",
    cep: "70072000",
    cidade: "BRASILIA",
    uf: "DF",
  },
  ...over,
});
const comSacador: Partial<Titulo> = { avalista: { nome: "SACADOR DA SILVA TESTE 1", documento: "05028932140" }, mensagem1: MENSAGEM };
const descontosPercentuais: Partial<Titulo> = { desconto: { codigo: "2", valor: 1000, data: date(2017, 1, 1) } };
const descontoAteVencimento: Partial<Titulo> = { desconto: { codigo: "1", valor: 1000 }, baixa: { codigo: "1", dias: 1 } };

/** The example's six títulos, in modalidade 3 (the carteira of the file: ours is per file, the example's per título). */
const EXEMPLO: RemessaInput = {
  banco: "070",
  layout: 400,
  nsa: 1,
  geradoEm: { ...date(2016, 12, 19), hour: 10, minute: 1, second: 0 },
  beneficiario: { nome: "BENEFICIARIO", documento: "05028932140", agencia: "027", conta: "0114963", carteira: "3" },
  titulos: [
    base({
      nossoNumero: "001310004",
      especie: "31",
      iofCentavos: 7,
      juros: { codigo: "2", valor: 150 },
      ...descontosPercentuais,
      ...comSacador,
    }),
    base({ nossoNumero: "002310005", especie: "31", juros: { codigo: "1", valor: 150 }, ...descontosPercentuais, ...comSacador }),
    base({ nossoNumero: "003310006", especie: "31", ...descontoAteVencimento, ...comSacador }),
    base({ nossoNumero: "004310007", especie: "21", ...descontoAteVencimento }),
    base({ nossoNumero: "005000000", especie: "22", ...descontoAteVencimento }),
    base({ nossoNumero: "000000000", especie: "25", ...descontoAteVencimento }),
  ],
};

const dd = (incremento: string, nn: string) =>
  nossoNumero({ banco: "070", agencia: "027", conta: "0114963", carteira: "3", nossoNumero: incremento + nn }).completo;

/**
 * [line, from, to, ours, why]: where our file differs from the manual's example, as the fixture README
 * lists them. Records 02 (lines 3, 5, 7) differ the same way; lines 2–10 share the pagador's address.
 */
const DIFERENCAS: Array<[number, number, number, string, string]> = [
  [1, 34, 39, "000010", "header: the layout's header + registros (10 lines); the example says 000006, its count of records 01"],
  ...[2, 4, 6, 8, 9, 10].map((l): [number, number, number, string, string] => [
    l,
    98,
    157,
    "SBS QD BLE ED BRASILIA 9 ANDAR GEBAN".padEnd(60),
    "our CNAB text keeps letters, digits and single blanks",
  ]),
  ...[3, 5, 7].flatMap(
    (l): Array<[number, number, number, string, string]> => [
      [l, 3, 47, "SACADOR DA SILVA TESTE 1".padEnd(45), "the example's double blank is one in our text"],
      [l, 162, 356, " ".repeat(195), "mensagens 2–4: a título carries one message"],
    ],
  ),
  // modalidade 5 is in no table of the manual (1–3): the example's first three are written in modalidade 3
  [2, 16, 27, dd("001", "310004"), "nosso número in modalidade 3"],
  [4, 16, 27, dd("002", "310005"), "nosso número in modalidade 3"],
  [6, 16, 27, dd("003", "310006"), "nosso número in modalidade 3"],
  // a título left for BRB to number (300000000000) has no nosso número for us: every boleto carries one
  [9, 16, 27, dd("005", "000000"), "nosso número computed, not left to BRB"],
  [10, 16, 27, dd("000", "000000"), "nosso número computed, not left to BRB"],
  [2, 276, 285, "0000000000", "desconto por antecipação: the título's one desconto is desconto 1"],
  [2, 296, 297, "21", "juros: a monthly rate (FEBRABAN 2) is BRB's 21; the example's 22 (% a day) has no FEBRABAN code"],
  ...[6, 8, 9, 10].map((l): [number, number, number, string, string] => [
    l,
    296,
    307,
    "000000000000",
    "juros 11 (R$ a month) has no FEBRABAN code: none",
  ]),
  [2, 327, 362, "0".repeat(36), "descontos 2 and 3"],
  [4, 327, 362, "0".repeat(36), "descontos 2 and 3"],
  [2, 368, 372, "00000", "instruction 94 (não receber após 30 dias) has no field in a título"],
  [4, 368, 372, "00000", "instruction 94 (não receber após 30 dias) has no field in a título"],
  // local de pagamento is always 01; impressão and distribuição follow the modalidade (3: BRB prints and posts)
  ...[4, 6, 8, 9, 10].map((l): [number, number, number, string, string] => [l, 389, 390, "01", "local de pagamento 01"]),
  [9, 229, 229, "1", "indicador de impressão of modalidade 3: BRB"],
  ...[4, 6, 8, 10].map((l): [number, number, number, string, string] => [l, 391, 391, "2", "distribuição of modalidade 3: postagem"]),
];

describe("070 BRB remessa (DCB 077, the manual's Leiaute Remessa)", () => {
  it("the manual's example, written from its títulos: equal outside the documented columns", () => {
    const out = gerarRemessa({ ...EXEMPLO, validarDocumentos: false });
    expect(out.check.ok).toBe(true);
    expect(out.check.warnings).toEqual([]);
    const golden = fixtureText(GOLDEN).split("\r\n");
    const ours = out.text.split("\r\n");
    expect(ours.map((l) => l.length)).toEqual(golden.map((l) => l.length));
    for (const [line, from, to, value, what] of DIFERENCAS) expect(ours[line - 1]!.slice(from - 1, to), what).toBe(value);
    const mask = (l: string, i: number) =>
      DIFERENCAS.reduce((s, [line, from, to]) => (line === i + 1 ? s.slice(0, from - 1) + "#".repeat(to - from + 1) + s.slice(to) : s), l);
    expect(ours.map(mask)).toEqual(golden.map(mask));
    // the columns the masks hide are the named ones only: everything else is byte for byte
    expect(ours.filter((l, i) => l !== golden[i]).length).toBe(10);
  });

  it("the example and our file read back to the títulos, and re-encode to the same bytes", () => {
    const golden = fixtureText(GOLDEN);
    const lida = lerRemessa(golden);
    expect(reescreverRemessa(lida)).toBe(golden);
    expect([lida.banco, lida.layout, lida.data, lida.beneficiario]).toEqual([
      "070",
      400,
      date(2016, 12, 19),
      { codigoBeneficiario: "0270114963", agencia: "027", conta: "0114963" },
    ]);
    expect(lida.titulos.map((t) => [t.nossoNumero, t.nossoNumeroBrb, t.especie, t.impressao, t.distribuicao, t.localPagamento])).toEqual([
      ["001310004", "531000407066", "31", "1", "2", "01"],
      ["002310005", "531000507031", "31", "1", "1", "02"],
      ["003310006", "531000607007", "31", "1", "0", "03"],
      ["004310007", "331000707091", "21", "1", "0", "03"],
      ["005000000", "300000000000", "22", "2", "2", "03"],
      ["000000000", "300000000000", "25", "1", "1", "03"],
    ]);
    expect(lida.titulos[0]).toMatchObject({
      id: "2123456789012345678900000",
      vencimento: date(2017, 1, 26),
      emissao: date(2016, 9, 19),
      valorCentavos: 100_001,
      abatimentoCentavos: 10_000,
      iofCentavos: 7,
      tipoJurosBrb: "22",
      desconto: { codigo: "2", valor: 1000, data: date(2017, 1, 1) },
      multa: { codigo: "1", valor: 200_000 },
      protesto: { codigo: "1", dias: 30 },
      instrucoes: [
        { codigo: "01", prazo: 0 },
        { codigo: "94", prazo: 30 },
        { codigo: "02", prazo: 0 },
      ],
      avalista: { nome: "SACADOR DA SILVA TESTE  1", tipoInscricao: "1", documento: "05028932140" },
      mensagem1: MENSAGEM,
      pagador: { nome: "ANTONIO PEREIRA DA SILVA", cep: "70072000", uf: "DF", tipoInscricao: "1", documento: "05028932140" },
    });
    expect(lida.titulos[3]!.baixa).toEqual({ codigo: "1", dias: 1 });

    const ours = gerarRemessa({ ...EXEMPLO, validarDocumentos: false }).text;
    const nossa = lerRemessa(ours);
    expect(reescreverRemessa(nossa)).toBe(ours);
    expect(nossa.titulos).toHaveLength(6);
    nossa.titulos.forEach((t, i) => {
      const dado = EXEMPLO.titulos[i]!;
      expect(t).toMatchObject({
        id: dado.id,
        nossoNumero: dado.nossoNumero,
        vencimento: dado.vencimento,
        emissao: dado.emissao,
        valorCentavos: dado.valorCentavos,
        abatimentoCentavos: dado.abatimentoCentavos,
        especie: dado.especie,
        multa: dado.multa,
        protesto: dado.protesto,
        desconto: { ...dado.desconto, data: dado.desconto!.data ?? dado.vencimento },
        ...(dado.juros ? { juros: dado.juros } : {}),
        ...(dado.baixa ? { baixa: dado.baixa } : {}),
        ...(dado.mensagem1 ? { mensagem1: dado.mensagem1 } : {}),
      });
      expect(t.nossoNumeroBrb).toBe(dd(dado.nossoNumero!.slice(0, 3), dado.nossoNumero!.slice(3)));
    });
  });

  it("writes the manual's positions and constants; modalidade 1 and 2 are printed by the beneficiário", () => {
    const out = gerarRemessa({
      ...EXEMPLO,
      validarDocumentos: false,
      geradoEm: { ...date(2026, 12, 1), hour: 8, minute: 9, second: 10 },
      beneficiario: { ...EXEMPLO.beneficiario, carteira: "1" },
      titulos: [
        base({
          id: "B-1",
          nossoNumero: "2000001",
          especie: undefined,
          multa: { codigo: "2", valor: 200 },
          protesto: undefined,
          instrucao1: undefined,
          avalista: { nome: "Empresa Avalista Ltda", documento: "11222333000181" },
        }),
      ],
    });
    const [h, r1, r2] = out.text.split("\r\n");
    expect(h).toBe(`DCB001077027011496320261201080910000003${" ".repeat(361)}`);
    expect([r1!.slice(0, 2), r1!.slice(2, 5), r1!.slice(5, 15), r1!.slice(15, 27)]).toEqual([
      "01",
      "002", // the 9-digit nosso número's first three digits
      "0270114963",
      nossoNumero({ banco: "070", agencia: "027", conta: "0114963", carteira: "1", nossoNumero: "2000001" }).completo,
    ]);
    expect(r1!.slice(27, 52)).toBe("B-1".padEnd(25));
    expect(r1!.slice(204, 219)).toBe("105028932140   ");
    // carnê, tipo de cobrança, espécie (duplicata mercantil by default), moeda, impressão, agência cobradora
    expect([r1!.slice(219, 223), r1![223], r1!.slice(224, 226), r1!.slice(226, 228), r1![228], r1!.slice(229, 233)]).toEqual([
      "0000",
      "0",
      "21",
      "02",
      "2",
      "0027",
    ]);
    // instructions: none, none, multa of 2,00 % (03) with its rate at 378–385; no protest; distribuição 0
    expect([r1!.slice(362, 377), r1!.slice(377, 385), r1!.slice(385, 388), r1!.slice(388, 391), r1!.slice(391)]).toEqual([
      "000000000003000",
      "00000200",
      "000",
      "010",
      " ".repeat(9),
    ]);
    expect([r2!.slice(0, 2), r2!.slice(2, 47).trimEnd(), r2![47], r2!.slice(48, 62), r2!.slice(62, 96)]).toEqual([
      "02",
      "EMPRESA AVALISTA LTDA",
      "2",
      "11222333000181",
      "0".repeat(34),
    ]);
  });

  it("refuses what its records cannot carry, naming the field", () => {
    const um = (over: Partial<Titulo>, beneficiario: Partial<RemessaInput["beneficiario"]> = {}) =>
      refusalOf(() =>
        gerarRemessa({
          ...EXEMPLO,
          validarDocumentos: false,
          beneficiario: { ...EXEMPLO.beneficiario, ...beneficiario },
          titulos: [base({ nossoNumero: "1", ...over })],
        }),
      );
    const casos: Array<[Partial<Titulo>, string, string]> = [
      [{ especie: "02" }, "CAMPO_INVALIDO", "titulos[0].especie"],
      [{ juros: { codigo: "1", valor: 10, data: date(2017, 2, 5) } }, "CAMPO_INVALIDO", "titulos[0].juros.data"],
      [{ desconto: { codigo: "3", valor: 10 } }, "CAMPO_INVALIDO", "titulos[0].desconto.codigo"],
      [{ multa: { codigo: "2", valor: 10, data: date(2017, 2, 5) } }, "CAMPO_INVALIDO", "titulos[0].multa.data"],
      [{ protesto: { codigo: "2", dias: 5 } }, "CAMPO_INVALIDO", "titulos[0].protesto.codigo"],
      [{ instrucao1: "94" }, "CAMPO_INVALIDO", "titulos[0].instrucao1"],
      [{ baixa: { codigo: "1", dias: 10 }, instrucao2: "08" }, "CAMPO_INVALIDO", "titulos[0].instrucao2"],
      [{ movimento: "02" }, "CAMPO_INVALIDO", "titulos[0].movimento"],
      [{ pix: { chave: "+5561999999999" } }, "CAMPO_INVALIDO", "titulos[0].pix"],
      [{ nossoNumero: "1234567890" }, "CAMPO_EXCEDE_TAMANHO", "titulos[0].nossoNumero"],
    ];
    for (const [over, code, field] of casos) expect([um(over).code, um(over).field], field).toEqual([code, field]);
    expect([um({}, { carteira: "5" }).code, um({}, { carteira: "5" }).field]).toEqual(["CARTEIRA_INVALIDA", "beneficiario.carteira"]);
    expect([um({}, { conta: "12345678" }).code, um({}, { conta: "12345678" }).field]).toEqual([
      "CAMPO_EXCEDE_TAMANHO",
      "beneficiario.conta",
    ]);
  });

  it("the checker knows the DCB shape: version 077, records 01 and 02 in order, one beneficiário", () => {
    const golden = fixtureText(GOLDEN);
    const [h, ...rest] = golden.split("\r\n").slice(0, -1);
    const file = (lines: string[]) => lines.map((l) => `${l}\r\n`).join("");
    const rules = (lines: string[]) => checkCnab(file(lines)).errors.map((e) => [e.rule, e.line]);
    expect(checkCnab(golden)).toMatchObject({ ok: true, banco: "070", layout: 400, direction: "remessa" });
    expect(checkCnab(golden).warnings.map((w) => w.rule)).toEqual(["HEADER_COUNT"]);
    expect(rules([`DCB001075${h!.slice(9)}`, ...rest])).toEqual([["HEADER", 1]]);
    expect(rules([h!, rest[1]!, ...rest])).toEqual([["DCB_RECORDS", 2]]);
    expect(rules([h!, `01000${"9".repeat(10)}${rest[0]!.slice(15)}`])).toEqual([["BANK_CODE", 2]]);
    expect(rules([h!])).toEqual([["DCB_RECORDS", 1]]);
  });
});
