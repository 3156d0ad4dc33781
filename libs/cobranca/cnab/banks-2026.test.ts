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
import { lerRetorno } from "./retorno.js";

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

/** [file, input, [from, to, ours, why][], expected títulos read back as [id, nosso número, valor]]. */
const GOLDEN: Array<[string, RemessaInput, Array<[number, number, number, string, string]>]> = [
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
  ],
];

describe("remessa of the 2026 banks: golden files", () => {
  it.each(GOLDEN)("%s: equal outside the documented columns", (file, input, differences) => {
    const out = gerarRemessa(input);
    expect(out.check.ok).toBe(true);
    const golden = fixtureText(file).split("\r\n");
    const ours = out.text.split("\r\n");
    expect(ours.map((l) => l.length)).toEqual(golden.map((l) => l.length));
    for (const [line, from, to, value, what] of differences) expect(ours[line - 1]!.slice(from - 1, to), what).toBe(value);
    const blank = (l: string, i: number) =>
      differences.reduce((s, [line, from, to]) => (line === i + 1 ? s.slice(0, from - 1) + "#".repeat(to - from + 1) + s.slice(to) : s), l);
    expect(ours.map(blank)).toEqual(golden.map(blank));
    expect(out.warnings.some((w) => w.code === "TEXTO_TRUNCADO" && w.field.includes("nome"))).toBe(true);
  });

  it.each(GOLDEN)("%s: golden and ours read back to the same título and re-encode to the same bytes", (file, input) => {
    for (const text of [fixtureText(file), gerarRemessa(input).text]) {
      const lida = lerRemessa(text);
      expect(reescreverRemessa(lida)).toBe(text);
      expect(lida.banco).toBe(input.banco);
      const t = input.titulos[0]!;
      expect(lida.titulos.map((x) => [x.id, x.valorCentavos, x.vencimento])).toEqual([[t.id, t.valorCentavos, t.vencimento]]);
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
    expect(sha256(fixture("trimmed/retorno/240/brcobranca-085-CNAB240AILOS.RET"))).toBe(
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
