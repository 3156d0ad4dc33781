import { describe, expect, it } from "vitest";
import { formatLinha } from "./boleto.js";
import { campoLivre, decodeCampoLivre, gerarBoleto, lerBoleto, nossoNumero, type DadosBancarios } from "./campo-livre.js";
import { banrisulNC, mod10, mod11BB, mod11Bradesco, mod11S, sicoob3197 } from "./checkdigits.js";
import { date } from "./date.js";
import { refusalOf } from "./testing/refusal.js";

const code = (fn: () => unknown) => {
  const e = refusalOf(fn);
  return [e.code, e.field];
};

const boleto = (dados: DadosBancarios, vencimento: ReturnType<typeof date> | null, valorCentavos: number) =>
  gerarBoleto({ dados, vencimento, valorCentavos });

describe("nosso número check digits (cobranca.md §3)", () => {
  it("BB M11-R: 05009401448 → 1", () => expect(mod11BB("05009401448")).toBe("1"));
  it("Bradesco: 19/00000000002 → 8, 19/00000000001 → P, 06/00000000525 → P", () => {
    expect(mod11Bradesco("1900000000002")).toBe("8");
    expect(mod11Bradesco("1900000000001")).toBe("P");
    expect(mod11Bradesco("0600000000525")).toBe("P");
  });
  it("Itaú DAC: 0057/12345 cart 110 NN 12345678 → 8", () => expect(mod10("0057" + "12345" + "110" + "12345678")).toBe(8));
  it("Caixa: 14/000000000000019 → 7", () => expect(mod11S("14000000000000019")).toBe("7"));
  it("Santander: 90002720 → 7, 1961005 → 0", () => {
    expect(mod11S("90002720")).toBe("7");
    expect(mod11S("1961005")).toBe("0");
  });
  it("Sicoob 3197: coop 4327, cliente 229385, NN 1…13", () => {
    const dvs = Array.from({ length: 13 }, (_, i) => sicoob3197("4327" + "0000229385" + String(i + 1).padStart(7, "0")));
    expect(dvs.join(",")).toBe("7,4,1,9,6,3,0,8,5,3,0,8,5");
    expect(nossoNumero({ banco: "756", agencia: "4327", convenio: "229385", nossoNumero: "1" }).impresso).toBe("0000001-7");
  });
  it("Banrisul NC: 22832563-51, 00009274-22", () => {
    expect(banrisulNC("22832563")).toBe("51");
    expect(banrisulNC("00009274")).toBe("22");
  });
  it("printed forms", () => {
    expect(nossoNumero({ banco: "237", carteira: "06", nossoNumero: "525", agencia: "1", conta: "1" }).impresso).toBe("06/00000000525-P");
    expect(nossoNumero({ banco: "104", convenio: "123456", nossoNumero: "19", modalidade: "1", emissao: "4" }).impresso).toBe(
      "14000000000000019-7",
    );
    expect(nossoNumero({ banco: "001", convenio: "050094", nossoNumero: "1448", agencia: "1", conta: "1", carteira: "18" }).impresso).toBe(
      "05009401448-1",
    );
    expect(nossoNumero({ banco: "041", agencia: "16", convenio: "164640", nossoNumero: "22832563" }).impresso).toBe("22832563-51");
    expect(
      nossoNumero({ banco: "748", agencia: "0710", posto: "65", convenio: "00129", ano: "16", byteGeracao: "2", nossoNumero: "08879" })
        .impresso,
    ).toBe("16/208879-3");
  });
});

describe("campo livre and full boletos: every worked example of cobranca.md §3", () => {
  it("BB convênio 7 (1238798)", () => {
    const b = boleto({ banco: "001", convenio: "1238798", nossoNumero: "7777700168", carteira: "18" }, date(2008, 2, 3), 72356);
    expect(b.codigoBarras).toBe("00195377100000723560000001238798777770016818");
    expect(b.linhaDigitavelFormatada).toBe("00190.00009 01238.798779 77700.168188 5 37710000072356");
    expect(b.nossoNumeroImpresso).toBe("12387987777700168");
  });
  it("BB convênio 6 (123879) with NN 1234 and with NN-17", () => {
    const d = { banco: "001", convenio: "123879", agencia: "4042", conta: "61900", carteira: "18" };
    expect(boleto({ ...d, nossoNumero: "1234" }, date(2008, 2, 1), 13500).codigoBarras).toBe(
      "00192376900000135001238790123440420006190018",
    );
    const b17 = boleto({ ...d, nossoNumero: "1234567899" }, date(2008, 2, 1), 13500);
    expect(b17.codigoBarras).toBe("00199376900000135001238790000000123456789921");
    expect(b17.variante).toBe("bb-convenio-6-nn17");
  });
  it("BB convênio 4", () => {
    const b = boleto(
      { banco: "001", convenio: "1234", nossoNumero: "5678", agencia: "4042", conta: "61900", carteira: "18" },
      date(2026, 12, 15),
      100,
    );
    expect(b.campoLivre).toBe("12340005678" + "4042" + "00061900" + "18");
    expect(b.nossoNumeroImpresso).toBe(`12340005678-${mod11BB("12340005678")}`);
  });
  it("Bradesco 2009 and post-2025", () => {
    const a = boleto(
      { banco: "237", agencia: "1172", carteira: "06", nossoNumero: "75896452", conta: "0403005" },
      date(2009, 4, 30),
      295295,
    );
    expect(a.codigoBarras).toBe("23795422300002952951172060007589645204030050");
    expect(a.linhaDigitavelFormatada).toBe("23791.17209 60007.589645 52040.300502 5 42230000295295");
    const b = boleto(
      { banco: "237", agencia: "1234", carteira: "09", nossoNumero: "00000000123", conta: "0012345" },
      date(2026, 12, 15),
      15000,
    );
    expect(b.codigoBarras).toBe("23792166100000150001234090000000012300123450");
    expect(b.linhaDigitavelFormatada).toBe("23791.23405 90000.000019 23001.234501 2 16610000015000");
    expect(b.fator).toBe("1661");
  });
  it("Itaú carteiras 175, 196 and post-2025 109", () => {
    expect(
      boleto({ banco: "341", carteira: "175", nossoNumero: "12345678", agencia: "0810", conta: "53678" }, date(2009, 8, 14), 0)
        .codigoBarras,
    ).toBe("34191432900000000001751234567840810536789000");
    const c196 = campoLivre(
      { banco: "341", carteira: "196", nossoNumero: "00258281", seuNumero: "1234567", codigoCliente: "12345" },
      13500,
    );
    expect(c196.campoLivre).toBe("1960025828112345671234550");
    const b = lerBoleto("34191252500000135001960025828112345671234550", { referenceDate: date(2006, 1, 1) });
    expect(b.dados?.variante).toBe("itau-especial");
    const p = lerBoleto("34194254800006757871090001015271248021246000", { referenceDate: date(2026, 11, 29) });
    expect(p.dados?.valores).toMatchObject({
      carteira: "109",
      nossoNumero: "00010152",
      agencia: "1248",
      conta: "02124",
      dac: "7",
      dacConta: "6",
    });
    const again = boleto(
      { banco: "341", carteira: "109", nossoNumero: "00010152", agencia: "1248", conta: "02124" },
      date(2029, 5, 20),
      675787,
    );
    expect(formatLinha(again.linhaDigitavel)).toBe("34191.09008 01015.271248 80212.460002 4 25480000675787");
  });
  it("Caixa SIGCB: CEF-BOL worked example and BRC 245274", () => {
    const cef = lerBoleto("10494324200000321120055077222133347777777771");
    expect(cef.dados?.valores).toMatchObject({ convenio: "005507", convenioDv: "7", nn: "14222333777777777" });
    expect(
      campoLivre({ banco: "104", convenio: "245274", nossoNumero: "000000000000001", modalidade: "1", emissao: "4" }, 1).campoLivre,
    ).toBe("2452740000100040000000017");
    const b = boleto({ banco: "104", convenio: "005507", nossoNumero: "222333777777777" }, null, 32112);
    expect(b.campoLivre).toBe("0055077222133347777777771");
  });
  it("Santander", () => {
    const b = boleto({ banco: "033", convenio: "1899775", nossoNumero: "9000026", carteira: "102" }, date(2011, 10, 9), 2500);
    expect(b.codigoBarras).toBe("03399511500000025009189977500000900002690102");
    expect(b.linhaDigitavelFormatada).toBe("03399.18997 77500.000904 00026.901025 9 51150000002500");
  });
  it("Sicoob modalidade 05", () => {
    const b = boleto(
      { banco: "756", carteira: "1", agencia: "4134", modalidade: "05", convenio: "148180", nossoNumero: "110" },
      date(2017, 4, 15),
      23500,
    );
    expect(b.linhaDigitavelFormatada).toBe("75691.41349 05014.818008 00011.040011 4 71300000023500");
  });
  it("Sicredi tipo 3", () => {
    const b = boleto(
      {
        banco: "748",
        tipoCobranca: "3",
        agencia: "0710",
        posto: "65",
        convenio: "00129",
        ano: "16",
        byteGeracao: "2",
        nossoNumero: "08879",
      },
      date(2016, 8, 22),
      19557,
    );
    expect(b.linhaDigitavelFormatada).toBe("74893.11626 08879.307109 65001.291056 1 68940000019557");
  });
  it("Banrisul", () => {
    const b = boleto(
      { banco: "041", produto: "2", agencia: "0016", convenio: "0164640", nossoNumero: "03408099" },
      date(2017, 1, 12),
      121600,
    );
    expect(b.codigoBarras).toBe("04192703700001216002100160164640034080994027");
  });
  it("decodes every campo livre back to its inputs", () => {
    const cases: Array<[DadosBancarios, number]> = [
      [{ banco: "237", agencia: "1234", carteira: "09", nossoNumero: "123", conta: "12345" }, 100],
      [
        { banco: "748", tipoCobranca: "1", agencia: "0710", posto: "65", convenio: "00129", ano: "26", byteGeracao: "2", nossoNumero: "1" },
        0,
      ],
      [{ banco: "041", produto: "1", agencia: "0016", convenio: "0164640", nossoNumero: "1" }, 1],
      [{ banco: "756", agencia: "4327", convenio: "229385", nossoNumero: "13" }, 1],
    ];
    for (const [d, v] of cases) {
      const c = campoLivre(d, v);
      const back = decodeCampoLivre(d.banco, c.campoLivre, { valorCentavos: v });
      expect(back?.valores).toEqual(c.valores);
    }
    expect(decodeCampoLivre("237", "1".repeat(25))).toBeNull();
  });
});

describe("typed errors with field names", () => {
  it.each<[DadosBancarios, string, string]>([
    [{ banco: "999", nossoNumero: "1" }, "BANCO_DESCONHECIDO", "dados.banco"],
    [{ banco: "001", convenio: "12345", nossoNumero: "1", carteira: "18" }, "CONVENIO_INVALIDO", "dados.convenio"],
    [{ banco: "237", agencia: "1", carteira: "99", nossoNumero: "1", conta: "1" }, "CARTEIRA_INVALIDA", "dados.carteira"],
    [{ banco: "237", agencia: "1", carteira: "09", nossoNumero: "123456789012", conta: "1" }, "CAMPO_EXCEDE_TAMANHO", "dados.nossoNumero"],
    [{ banco: "237", agencia: "1", carteira: "09", nossoNumero: "12a", conta: "1" }, "CAMPO_INVALIDO", "dados.nossoNumero"],
    [{ banco: "237", carteira: "09", nossoNumero: "1", conta: "1" }, "CAMPO_OBRIGATORIO", "dados.agencia"],
    [{ banco: "341", carteira: "999", nossoNumero: "1", agencia: "1", conta: "1" }, "CARTEIRA_INVALIDA", "dados.carteira"],
  ])("%j → %s", (dados, c, f) => {
    expect(code(() => boleto(dados, date(2026, 1, 1), 1))).toEqual([c, f]);
  });
  it("Caixa caps values at R$ 9.999.999,99", () => {
    expect(code(() => boleto({ banco: "104", convenio: "123456", nossoNumero: "1" }, date(2026, 1, 1), 1_000_000_000))).toEqual([
      "VALOR_ACIMA_DO_LIMITE",
      "valorCentavos",
    ]);
  });
});
