/**
 * Inter's (077) CNAB 400 remessa against its manual ("Manual CNAB400 – Emissão de boletos de cobrança" v1.1,
 * §4.1–4.4): no public remessa file of Inter's exists to compare with, so the manual's field table (positions,
 * widths, constants) is the reference; the file reads back to the same títulos and passes the checker. The
 * nosso número is Inter's to assign: zeros in the file, refused when given (decision 0033).
 */
import { describe, expect, it } from "vitest";
import { date } from "../date.js";
import { refusalOf } from "../testing/refusal.js";
import { checkCnab } from "./checker.js";
import { type RemessaInput, type Titulo, gerarRemessa, lerRemessa, reescreverRemessa } from "./remessa.js";

const GERADO = { year: 2026, month: 12, day: 2, hour: 8, minute: 30, second: 0 };
const titulo = (n: number, over: Partial<Titulo> = {}): Titulo => ({
  id: `fatura-2026-${n}`,
  numeroDocumento: String(4000 + n),
  vencimento: date(2026, 12, 20),
  emissao: date(2026, 12, 2),
  valorCentavos: 12_300 + n,
  pagador: { nome: "José da Silva", documento: "529.982.247-25", endereco: "Rua Augusta, 1500, ap 12", cep: "01310-100" },
  ...over,
});
const input = (titulos: Titulo[], over: Partial<RemessaInput> = {}): RemessaInput => ({
  banco: "077",
  layout: 400,
  nsa: 12,
  geradoEm: GERADO,
  beneficiario: {
    nome: "Padaria Exemplo Ltda",
    documento: "11.222.333/0001-81",
    agencia: "0001",
    conta: "26245793",
    contaDv: "8",
    carteira: "112",
  },
  titulos,
  ...over,
});
/** 1-based inclusive columns, as the manual numbers them. */
const col = (l: string, de: number, a: number) => l.slice(de - 1, a);
const linhas = (text: string) => text.split("\r\n").slice(0, -1);

describe("077 Inter CNAB 400 remessa (Manual CNAB400 v1.1 §4)", () => {
  const out = gerarRemessa(
    input([
      titulo(1, {
        multa: { codigo: "2", valor: 200, data: date(2026, 12, 21) },
        juros: { codigo: "1", valor: 10 },
        desconto: { codigo: "1", valor: 500, data: date(2026, 12, 15) },
        abatimentoCentavos: 100,
        mensagem1: "Não receber após 30 dias",
      }),
      titulo(2, {
        multa: { codigo: "1", valor: 1_990 },
        pagador: { nome: "Comércio Y S.A.", documento: "11.444.777/0001-61", cep: "70072-000" },
      }),
    ]),
  );
  const [header, d1, d2, trailer] = linhas(out.text);

  it("is header, one type-1 record per título and the trailer, every line 400 characters with CR LF", () => {
    expect(out.records).toBe(4);
    expect(out.text.endsWith("\r\n")).toBe(true);
    expect(linhas(out.text).map((l) => [l[0], l.length, col(l, 395, 400)])).toEqual([
      ["0", 400, "000001"],
      ["1", 400, "000002"],
      ["1", 400, "000003"],
      ["9", 400, "000004"],
    ]);
    expect(checkCnab(out.text)).toMatchObject({ ok: true, banco: "077", layout: 400, direction: "remessa", warnings: [] });
  });

  it("header §4.1: literals, código da empresa blank, 077 INTER, the date and the 7-digit sequence at 111–117", () => {
    expect(col(header!, 1, 26)).toBe("01REMESSA01COBRANCA       ");
    expect(col(header!, 27, 46)).toBe(" ".repeat(20));
    expect(col(header!, 47, 76)).toBe("PADARIA EXEMPLO LTDA".padEnd(30));
    expect(col(header!, 77, 94)).toBe("077INTER          ");
    expect(col(header!, 95, 100)).toBe("021226");
    expect(col(header!, 101, 110)).toBe(" ".repeat(10));
    expect(col(header!, 111, 117)).toBe("0000012");
    expect(col(header!, 118, 394).trim()).toBe("");
  });

  it("type 1 §4.2: carteira + agência + conta, our id, the nosso número left zero, the título and its charges", () => {
    expect(col(d1!, 2, 20)).toBe(" ".repeat(19));
    expect(col(d1!, 21, 37)).toBe("112" + "0001" + "0262457938");
    expect(col(d1!, 38, 62)).toBe("fatura-2026-1".padEnd(25));
    expect(col(d1!, 63, 65)).toBe("   ");
    // multa 2 = percentual: zeros in the value, 2,00 % with two decimals, its date
    expect([col(d1!, 66, 66), col(d1!, 67, 79), col(d1!, 80, 83), col(d1!, 84, 89)]).toEqual(["2", "0".repeat(13), "0200", "211226"]);
    expect(col(d1!, 90, 100)).toBe("00000000000");
    expect(col(d1!, 101, 108)).toBe(" ".repeat(8));
    expect([col(d1!, 109, 110), col(d1!, 111, 120), col(d1!, 121, 126), col(d1!, 127, 139)]).toEqual([
      "01",
      "0000004001",
      "201226",
      "0000000012301",
    ]);
    expect([col(d1!, 140, 141), col(d1!, 142, 147), col(d1!, 148, 149), col(d1!, 150, 150), col(d1!, 151, 159)]).toEqual([
      "00",
      " ".repeat(6),
      "99",
      "N",
      " ".repeat(9),
    ]);
    // juros 1 = valor fixo por dia, from the day after the due date
    expect([col(d1!, 160, 160), col(d1!, 161, 173), col(d1!, 174, 177), col(d1!, 178, 183)]).toEqual([
      "1",
      "0000000000010",
      "0000",
      "211226",
    ]);
    expect([col(d1!, 184, 184), col(d1!, 185, 197), col(d1!, 198, 201), col(d1!, 202, 207)]).toEqual([
      "1",
      "0000000000500",
      "0000",
      "151226",
    ]);
    expect(col(d1!, 208, 220)).toBe("0000000000100");
    expect([col(d1!, 221, 222), col(d1!, 223, 236)]).toEqual(["01", "00052998224725"]);
    expect(col(d1!, 237, 276)).toBe("JOSE DA SILVA".padEnd(40));
    expect(col(d1!, 277, 316)).toBe("RUA AUGUSTA 1500 AP 12".padEnd(40));
    expect([col(d1!, 317, 321), col(d1!, 322, 324)]).toEqual(["01310", "100"]);
    expect(col(d1!, 325, 394)).toBe("NAO RECEBER APOS 30 DIAS".padEnd(70));
  });

  it("type 1 without charges: multa 1 = valor fixo, juros and desconto 0 with zeros, a CNPJ pagador", () => {
    expect([col(d2!, 66, 66), col(d2!, 67, 79), col(d2!, 80, 83)]).toEqual(["1", "0000000001990", "0000"]);
    expect(col(d2!, 84, 89)).toBe("211226"); // the day after the due date, as for every multa without a date
    expect(col(d2!, 160, 207)).toBe("0" + "0".repeat(13) + "0000" + "000000" + "0" + "0".repeat(13) + "0000" + "000000");
    expect([col(d2!, 221, 222), col(d2!, 223, 236)]).toEqual(["02", "11444777000161"]);
    expect(col(d2!, 277, 316)).toBe(" ".repeat(40));
  });

  it("a seu número with letters is written as Inter's retornos echo one: left-aligned, blank-filled", () => {
    const l = linhas(gerarRemessa(input([titulo(3, { numeroDocumento: "NF-12/A" })])).text)[1]!;
    expect(col(l, 111, 120)).toBe("NF12A     ");
  });

  it("trailer §4.4: the number of boletos at 2–7, blanks to 394", () => {
    expect(col(trailer!, 1, 7)).toBe("9000002");
    expect(col(trailer!, 8, 394)).toBe(" ".repeat(387));
  });

  it("reads back to the same títulos, without a nosso número, and re-encodes to the same bytes", () => {
    const lida = lerRemessa(out.bytes);
    expect([lida.banco, lida.layout, lida.nsa, lida.data, lida.warnings]).toEqual(["077", 400, 12, date(2026, 12, 2), []]);
    expect(lida.beneficiario).toMatchObject({ nome: "PADARIA EXEMPLO LTDA" });
    expect(lida.titulos.map((t) => [t.id, t.nossoNumero, t.numeroDocumento, t.vencimento, t.valorCentavos, t.pagador?.documento])).toEqual([
      ["fatura-2026-1", undefined, "0000004001", date(2026, 12, 20), 12_301, "00052998224725"],
      ["fatura-2026-2", undefined, "0000004002", date(2026, 12, 20), 12_302, "11444777000161"],
    ]);
    expect(lida.titulos[0]).toMatchObject({
      juros: { valor: 10, data: date(2026, 12, 21) },
      desconto: { valor: 500, data: date(2026, 12, 15) },
      abatimentoCentavos: 100,
      mensagem1: "NAO RECEBER APOS 30 DIAS",
    });
    expect(reescreverRemessa(lida)).toBe(out.text);
  });

  it("the checker refuses a trailer whose count of boletos is not the file's", () => {
    const ls = linhas(out.text);
    const bad = [...ls.slice(0, 3), `9000003${ls[3]!.slice(7)}`].join("\r\n") + "\r\n";
    expect(checkCnab(bad).errors.map((e) => [e.rule, e.line])).toEqual([["TRAILER_COUNT", 4]]);
  });
});

describe("077 Inter remessa refusals: the field named, nothing dropped", () => {
  const refusal = (over: Partial<Titulo>, inp: Partial<RemessaInput> = {}) => {
    const e = refusalOf(() => gerarRemessa(input([titulo(1), titulo(2, over)], inp)));
    return [e.code, e.field];
  };

  it("a nosso número given: Inter assigns it (zeros in the file, §4.2)", () => {
    expect(refusal({ nossoNumero: "1234" })).toEqual(["CAMPO_INVALIDO", "titulos[1].nossoNumero"]);
  });
  it("what its records have no slot for", () => {
    expect(refusal({ protesto: { codigo: "1", dias: 5 } })).toEqual(["CAMPO_INVALIDO", "titulos[1].protesto"]);
    expect(refusal({ baixa: { codigo: "1", dias: 30 } })).toEqual(["CAMPO_INVALIDO", "titulos[1].baixa"]);
    expect(refusal({ avalista: { nome: "Avalista", documento: "52998224725" } })).toEqual(["CAMPO_INVALIDO", "titulos[1].avalista"]);
    expect(refusal({ pix: { chave: "52998224725" } })).toEqual(["CAMPO_INVALIDO", "titulos[1].pix"]);
    expect(refusal({ juros: { codigo: "2", valor: 100 } })).toEqual(["CAMPO_INVALIDO", "titulos[1].juros.codigo"]);
    expect(refusal({ desconto: { codigo: "2", valor: 100, data: date(2026, 12, 10) } })).toEqual([
      "CAMPO_INVALIDO",
      "titulos[1].desconto.codigo",
    ]);
  });
  it("a desconto without its limit date (202–207 is required when 184 is not 0)", () => {
    expect(refusal({ desconto: { codigo: "1", valor: 100 } })).toEqual(["CAMPO_OBRIGATORIO", "titulos[1].desconto.data"]);
  });
  it("an account that is not Inter's: agência other than 0001, a conta with its DV over 10 digits", () => {
    const b = input([]).beneficiario;
    expect(refusal({}, { beneficiario: { ...b, agencia: "1234" } })).toEqual(["CAMPO_INVALIDO", "beneficiario.agencia"]);
    expect(refusal({}, { beneficiario: { ...b, conta: "1234567890" } })).toEqual(["CAMPO_EXCEDE_TAMANHO", "beneficiario.conta"]);
  });
  it("every other bank still needs the nosso número; C6, which assigns it too, has no remessa writer", () => {
    const bradesco = refusalOf(() =>
      gerarRemessa(input([titulo(1)], { banco: "237", beneficiario: { ...input([]).beneficiario, agencia: "1234", convenio: "1" } })),
    );
    expect([bradesco.code, bradesco.field]).toEqual(["CAMPO_OBRIGATORIO", "titulos[0].nossoNumero"]);
    const c6 = refusalOf(() => gerarRemessa(input([titulo(1)], { banco: "336" })));
    expect([c6.code, c6.field]).toEqual(["CNAB_LAYOUT_DESCONHECIDO", "banco"]);
  });
});
