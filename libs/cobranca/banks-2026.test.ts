/**
 * The banks added in 2026 (cobranca.md §11.2): each bank's worked examples, from its manual or the
 * reference libraries' tests, digit for digit. The oracle matrix (oracles.test.ts) covers the due dates
 * on both sides of the 2025 fator reset and every DV geral.
 */
import { getBoletoInfo, isValidBoleto } from "@brazilian-utils/brazilian-utils";
import * as bbv from "boleto-brasileiro-validator";
import { describe, expect, it } from "vitest";
import { gerarBoleto, lerBoleto, nossoNumero, type DadosBancarios } from "./campo-livre.js";
import { type CalendarDate, date } from "./date.js";
import { refusalOf } from "./testing/refusal.js";

const boleto = (dados: DadosBancarios, vencimento: CalendarDate | null, valorCentavos: number) =>
  gerarBoleto({ dados, vencimento, valorCentavos });

/** Both validators accept it and BU decodes the same bank, value and due date. */
function aceito(b: ReturnType<typeof boleto>, referencia: CalendarDate) {
  expect(bbv.boleto(b.codigoBarras, true)).toBe(true);
  expect(bbv.boletoBancarioLinhaDigitavel(b.linhaDigitavel, true)).toBe(true);
  expect(isValidBoleto(b.linhaDigitavel)).toBe(true);
  const info = getBoletoInfo(b.linhaDigitavel, { referenceDate: new Date(referencia.year, referencia.month - 1, referencia.day) })!;
  expect([info.bankCode, info.amount]).toEqual([b.banco, b.valorCentavos]);
  const e = info.expirationDate!;
  expect(date(e.getFullYear(), e.getMonth() + 1, e.getDate())).toEqual(b.vencimento);
}

describe("085 Ailos (Manual CNAB 240 v07 §4.1; brcobranca ailos_spec vectors)", () => {
  it("campo livre = convênio + conta + DV + boleto number + carteira; barcode and linha", () => {
    const a = boleto({ banco: "085", convenio: "000000", conta: "1111111", nossoNumero: "1", agencia: "0101" }, date(2015, 5, 25), 100);
    expect(a.campoLivre).toBe("0000001111111900000000101");
    expect(a.codigoBarras).toBe("08593643900000001000000001111111900000000101");
    expect(a.linhaDigitavelFormatada).toBe("08590.00002 01111.111900 00000.001016 3 64390000000100");
    expect(a.bancoComDv).toBe("085-1");
    expect(a.agenciaCodigoBeneficiario).toBe("0101-5 / 1111111-9");
    const b = boleto({ banco: "085", convenio: "234", conta: "356156", nossoNumero: "1" }, date(2015, 5, 25), 100);
    expect(b.codigoBarras).toBe("08593643900000001000002340356156900000000101");
    expect(b.linhaDigitavelFormatada).toBe("08590.00234 40356.156907 00000.001016 3 64390000000100");
  });

  it("nosso número: 17 digits, conta + DV + sequence; agência and conta DVs", () => {
    expect(nossoNumero({ banco: "085", convenio: "1", conta: "0357157", nossoNumero: "1" }).impresso).toBe("03571572000000001");
    const dv = (agencia: string, conta: string) =>
      boleto({ banco: "085", convenio: "1", conta, nossoNumero: "1", agencia }, null, 0).agenciaCodigoBeneficiario;
    expect(dv("0719", "1111111")).toBe("0719-6 / 1111111-9");
    expect(dv("0548", "1448")).toBe("0548-7 / 0001448-6");
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "085", convenio: "123456", conta: "1234567", nossoNumero: "42" }, due, 19990);
      aceito(b, due);
      expect(lerBoleto(b.linhaDigitavel, { referenceDate: due }).dados?.nossoNumero).toBe("12345679000000042");
    }
  });

  it("refuses a nosso número over 9 digits and a convênio over 6, naming the field", () => {
    const d = { banco: "085", convenio: "1", conta: "1", nossoNumero: "1" };
    expect(refusalOf(() => boleto({ ...d, nossoNumero: "1234567890" }, null, 0)).field).toBe("dados.nossoNumero");
    expect(refusalOf(() => boleto({ ...d, convenio: "1234567" }, null, 0)).code).toBe("CONVENIO_INVALIDO");
  });
});

describe("136 Unicred (Composição da Ficha de Compensação 2019 §3.10–3.11; brcobranca unicred_spec vector)", () => {
  it("nosso número DV: the manual's examples 0000299621-9 and 0000000002-7", () => {
    const nn = (n: string) => nossoNumero({ banco: "136", agencia: "1", conta: "1", nossoNumero: n }).impresso;
    expect([nn("299621"), nn("2")]).toEqual(["0000299621-9", "0000000002-7"]);
  });

  it("campo livre = agência + conta with DV + nosso número with DV; barcode and linha", () => {
    const b = boleto({ banco: "136", agencia: "1234", conta: "0000123457", nossoNumero: "13871" }, date(2012, 1, 24), 295295);
    expect(b.campoLivre).toBe("1234000012345700000138711");
    expect(b.linhaDigitavelFormatada).toBe("13691.23409 00012.345708 00001.387117 1 52220000295295");
    expect([b.bancoComDv, b.carteira, b.nossoNumeroImpresso, b.agenciaCodigoBeneficiario]).toEqual([
      "136-8",
      "21",
      "0000013871-1",
      "1234 / 000012345-7",
    ]);
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "136", agencia: "0001", conta: "0000123457", nossoNumero: "42" }, due, 19990);
      aceito(b, due);
      expect(lerBoleto(b.codigoBarras, { referenceDate: due }).dados?.nossoNumero).toBe("00000000426");
    }
  });

  it("carteira 21 only", () => {
    const e = refusalOf(() => boleto({ banco: "136", agencia: "1", conta: "1", nossoNumero: "1", carteira: "11" }, null, 0));
    expect([e.code, e.field]).toEqual(["CARTEIRA_INVALIDA", "dados.carteira"]);
  });
});

describe("004 Banco do Nordeste (CNAB 400 manual nota 1; brcobranca banco_nordeste_spec vectors)", () => {
  it("nosso número DV: modulo 11 with weights 2–8 (the manual's 9061138-1 and 0000010-8, and the reference vectors)", () => {
    const nn = (n: string) => nossoNumero({ banco: "004", agencia: "1", conta: "1", nossoNumero: n }).impresso;
    expect(["9061138", "0000010", "0020572", "1961005", "0000053", "1297105", "0000005"].map(nn)).toEqual([
      "9061138-1",
      "0000010-8",
      "0020572-9",
      "1961005-0",
      "0000053-1",
      "1297105-7",
      "0000005-1",
    ]);
  });

  it("campo livre = agência + conta with DV + NN + DV + tipo de operação + 000; four reference boletos", () => {
    const cases: Array<[string, string, string, CalendarDate, number, string, string]> = [
      [
        "0016",
        "00011932",
        "53",
        date(2009, 10, 21),
        100000,
        "00491439700001000000016000119320000053121000",
        "00490.01605 00119.320000 00531.210003 1 43970000100000",
      ],
      [
        "0016",
        "00011932",
        "2720",
        date(2012, 9, 8),
        5400,
        "00497545000000054000016000119320002720021000",
        "00490.01605 00119.320000 27200.210006 7 54500000005400",
      ],
      [
        "0259",
        "00085493",
        "1",
        date(2017, 1, 17),
        101,
        "00492704200000001010259000854930000001921000",
        "00490.25901 00854.930005 00019.210004 2 70420000000101",
      ],
      [
        "0275",
        "00002535",
        "5",
        date(2016, 7, 28),
        280775,
        "00491686900002807750275000025350000005121000",
        "00490.27501 00025.350000 00051.210003 1 68690000280775",
      ],
    ];
    for (const [agencia, conta, nn, due, valor, barcode, linha] of cases) {
      const b = boleto({ banco: "004", agencia, conta, nossoNumero: nn }, due, valor);
      expect([b.codigoBarras, b.linhaDigitavelFormatada]).toEqual([barcode, linha]);
    }
    const b = boleto({ banco: "004", agencia: "0016", conta: "00011932", nossoNumero: "53" }, null, 0);
    expect([b.bancoComDv, b.agenciaCodigoBeneficiario, b.carteira]).toEqual(["004-3", "0016/0001193-2", "21"]);
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "004", agencia: "0016", conta: "00011932", nossoNumero: "9061138", carteira: "41" }, due, 19990);
      aceito(b, due);
      expect(lerBoleto(b.linhaDigitavel, { referenceDate: due }).dados?.nossoNumero).toBe("90611381");
    }
  });
});

describe("133 Cresol (Bradesco's campo livre and P check digit; laravel-boleto CresolTest vectors)", () => {
  it("nosso número DV: the specification's examples (carteira 19) and the P and 0 cases of carteira 09", () => {
    const nn = (carteira: string, n: string) => nossoNumero({ banco: "133", agencia: "1", conta: "1", carteira, nossoNumero: n }).impresso;
    expect([nn("19", "2"), nn("19", "1"), nn("19", "6"), nn("09", "2"), nn("09", "10")]).toEqual([
      "19/00000000002-8",
      "19/00000000001-P",
      "19/00000000006-0",
      "09/00000000002-P",
      "09/00000000010-0",
    ]);
  });

  it("two real boletos: campo livre = agência + carteira + NN + código do cedente + 0", () => {
    const a = boleto({ banco: "133", agencia: "2035", carteira: "09", nossoNumero: "6362", conta: "4497" }, date(2021, 8, 30), 17500);
    expect([a.campoLivre, a.linhaDigitavelFormatada, a.nossoNumero]).toEqual([
      "2035090000000636200044970",
      "13392.03505 90000.000639 62000.449702 4 87280000017500",
      "000000063625",
    ]);
    const b = boleto({ banco: "133", agencia: "1026", carteira: "09", nossoNumero: "3", conta: "3892" }, date(2021, 6, 14), 500);
    expect([b.campoLivre, b.linhaDigitavelFormatada]).toEqual([
      "1026090000000000300038920",
      "13391.02608 90000.000001 03000.389209 7 86510000000500",
    ]);
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "133", agencia: "1069", carteira: "09", nossoNumero: "2", conta: "28245" }, due, 15000);
      aceito(b, due);
      expect(lerBoleto(b.codigoBarras, { referenceDate: due }).dados?.nossoNumero).toBe("00000000002P");
    }
  });
});

describe("422 Safra (CNAB 400 manual §7.1–7.2; brcobranca safra_spec and BoletoNetCore Carteira1 vectors)", () => {
  it("nosso número DV: the manual's three examples (remainder 0 → 1, 1 → 0)", () => {
    const nn = (n: string) => nossoNumero({ banco: "422", agencia: "1", conta: "1", nossoNumero: n }).impresso;
    expect(["94550200", "93199999", "26173001"].map(nn)).toEqual(["94550200-1", "93199999-5", "26173001-1"]);
  });

  it("campo livre = 7 + agência with DV + conta with DV + NN with DV + 2; reference boletos", () => {
    const cases: Array<[string, string, string, CalendarDate, number, string]> = [
      ["00400", "000278247", "26173001", date(2025, 2, 23), 18084, "42297.00408 00002.782472 26173.001129 6 10010000018084"],
      ["11500", "006276729", "50153004", date(2016, 3, 30), 554305, "42297.11504 00062.767298 50153.004523 1 67490000554305"],
      // BoletoNetCore: agência 1234-5, conta 123456-7, one boleto per DV geral 1–9
      ["12345", "001234567", "453", date(2016, 9, 1), 14150, "42297.12346 50012.345679 00000.453720 1 69040000014150"],
      ["12345", "001234567", "456", date(2016, 10, 1), 271112, "42297.12346 50012.345679 00000.456129 2 69340000271112"],
      ["12345", "001234567", "414", date(2016, 8, 1), 64539, "42297.12346 50012.345679 00000.414623 3 68730000064539"],
      ["12345", "001234567", "444", date(2016, 9, 2), 29221, "42297.12346 50012.345679 00000.444828 4 69050000029221"],
      ["12345", "001234567", "562", date(2017, 1, 1), 83800, "42297.12346 50012.345679 00000.562223 5 70260000083800"],
      ["12345", "001234567", "445", date(2016, 9, 2), 292711, "42297.12346 50012.345679 00000.445627 6 69050000292711"],
      ["12345", "001234567", "443", date(2016, 9, 2), 292127, "42297.12346 50012.345679 00000.443028 7 69050000292127"],
      ["12345", "001234567", "468", date(2016, 10, 2), 29321, "42297.12346 50012.345679 00000.468520 8 69350000029321"],
      ["12345", "001234567", "561", date(2017, 1, 1), 27600, "42297.12346 50012.345679 00000.561423 9 70260000027600"],
    ];
    for (const [agencia, conta, nn, due, valor, linha] of cases)
      expect(boleto({ banco: "422", agencia, conta, nossoNumero: nn }, due, valor).linhaDigitavelFormatada, nn).toBe(linha);
    const b = boleto({ banco: "422", agencia: "00400", conta: "000278247", nossoNumero: "26173001" }, date(2025, 2, 23), 18084);
    expect([b.codigoBarras, b.bancoComDv, b.agenciaCodigoBeneficiario]).toEqual([
      "42296100100000180847004000002782472617300112",
      "422-7",
      "0040-0 / 00027824-7",
    ]);
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "422", agencia: "12345", conta: "001234567", nossoNumero: "453" }, due, 14150);
      aceito(b, due);
      expect(lerBoleto(b.linhaDigitavel, { referenceDate: due }).dados?.nossoNumero).toBe("000004537");
    }
  });
});

describe("077 Inter (Manual CNAB400 Inter v1.1 §6.1.3; BoletoNetCore BancoInterCarteira110Tests vectors)", () => {
  // BoletoNetCore's test class asserts each of these 23 vectors twice (boleto printed by the company and by
  // the bank: 46 cases, the same values): agência 0001, carteira 110, código do beneficiário 1234567.
  const inter = (nossoNumero: string): DadosBancarios => ({ banco: "077", carteira: "110", convenio: "1234567", nossoNumero });

  it("nosso número DV: modulo 10 over agência + carteira + NN (five vectors)", () => {
    const nn = (n: string) => nossoNumero(inter(n)).impresso;
    expect(["4309540", "1", "4309541", "4309542", "4309543"].map(nn)).toEqual([
      "0001/110/0004309540-1",
      "0001/110/0000000001-4",
      "0001/110/0004309541-9",
      "0001/110/0004309542-7",
      "0001/110/0004309543-5",
    ]);
  });

  it("campo livre = agência + carteira + operação + NN with DV: barcode, DV geral and linha of six boletos", () => {
    const cases: Array<[number, string, CalendarDate, string, string, string]> = [
      [
        27615,
        "458",
        date(2016, 10, 1),
        "2",
        "07792693400000276150001110123456700000004586",
        "07790.00116 10123.456708 00000.045864 2 69340000027615",
      ],
      [
        64734,
        "451",
        date(2016, 8, 1),
        "1",
        "07791687300000647340001110123456700000004511",
        "07790.00116 10123.456708 00000.045112 1 68730000064734",
      ],
      [
        29323,
        "452",
        date(2016, 10, 2),
        "3",
        "07793693500000293230001110123456700000004529",
        "07790.00116 10123.456708 00000.045294 3 69350000029323",
      ],
      [
        21712,
        "453",
        date(2016, 9, 2),
        "2",
        "07792690500000217120001110123456700000004537",
        "07790.00116 10123.456708 00000.045377 2 69050000021712",
      ],
      [
        13157,
        "457",
        date(2016, 9, 1),
        "9",
        "07799690400000131570001110123456700000004578",
        "07790.00116 10123.456708 00000.045781 9 69040000013157",
      ],
      [
        500,
        "1",
        date(2023, 8, 31),
        "1",
        "07791945900000005000001110123456700000000014",
        "07790.00116 10123.456708 00000.000141 1 94590000000500",
      ],
    ];
    for (const [valor, nn, due, dvGeral, barcode, linha] of cases) {
      const b = boleto(inter(nn), due, valor);
      expect([b.codigoBarras[4], b.codigoBarras, b.linhaDigitavelFormatada], nn).toEqual([dvGeral, barcode, linha]);
    }
    const b = boleto({ banco: "077", convenio: "1234567", nossoNumero: "1" }, null, 0);
    expect([b.bancoComDv, b.carteira, b.agenciaCodigoBeneficiario, b.nossoNumero]).toEqual([
      "077-9",
      "112",
      "0001 / 1234567",
      "00000000010",
    ]);
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "077", convenio: "7654321", nossoNumero: "4309540" }, due, 19990);
      aceito(b, due);
      expect(lerBoleto(b.linhaDigitavel, { referenceDate: due }).dados?.nossoNumero).toBe("00043095407");
    }
  });

  it("agência 0001 and carteiras 110 / 112 only, naming the field", () => {
    const e = refusalOf(() => boleto({ banco: "077", convenio: "1", nossoNumero: "1", carteira: "109" }, null, 0));
    expect([e.code, e.field]).toEqual(["CARTEIRA_INVALIDA", "dados.carteira"]);
    expect(refusalOf(() => boleto({ banco: "077", convenio: "1", nossoNumero: "1", agencia: "0002" }, null, 0)).field).toBe(
      "dados.agencia",
    );
  });
});

describe("070 BRB (Manual e Leiautes v077, Composição Barra-Linha and Cálculo D1 e D2; brcobranca banco_brasilia_spec vectors)", () => {
  it("duplo dígito over incremento + conta + modalidade + sequencial + 070: the manual's worked example and its example files", () => {
    const nn = (agencia: string, conta: string, carteira: string, n: string) =>
      nossoNumero({ banco: "070", agencia, conta, carteira, nossoNumero: n }).completo;
    // the worked example: chave 000 058 6002006 1 000001 070 → D1 4, D2 5
    expect(nn("058", "6002006", "1", "1")).toBe("100000107045");
    // the manual's example retorno (conta 2400044990; the first with incremento 001) and example remessa (0270114963)
    const cases: Array<[string, string, string, string, string]> = [
      ["240", "0044990", "3", "001000584", "300058407027"],
      ["240", "0044990", "3", "000584", "300058407048"],
      ["240", "0044990", "3", "000587", "300058707017"],
      ["240", "0044990", "3", "000614", "300061407083"],
      ["240", "0044990", "3", "000615", "300061507088"],
      ["240", "0044990", "1", "042654", "104265407038"],
      ["240", "0044990", "2", "042655", "204265507010"],
      ["240", "0044990", "1", "042656", "104265607010"],
      ["240", "0044990", "1", "002886", "100288607071"],
      ["240", "0044990", "2", "100039", "210003907042"],
      ["240", "0044990", "1", "100040", "110004007024"],
      ["027", "0114963", "3", "004310007", "331000707091"],
    ];
    for (const [agencia, conta, carteira, n, esperado] of cases) expect(nn(agencia, conta, carteira, n), n).toBe(esperado);
  });

  it("campo livre = chave BRB; the manual's barcode and linha and brcobranca's", () => {
    const a = boleto({ banco: "070", agencia: "240", conta: "44990", carteira: "1", nossoNumero: "002000001" }, date(2016, 7, 25), 37277);
    expect([a.campoLivre, a.codigoBarras, a.linhaDigitavelFormatada]).toEqual([
      "0022400044990100000107070",
      "07099686600000372770022400044990100000107070",
      "07090.02240 00044.990109 00001.070705 9 68660000037277",
    ]);
    const b = boleto({ banco: "070", agencia: "082", conta: "0000528", nossoNumero: "1" }, date(2015, 4, 30), 1000);
    expect([b.campoLivre, b.codigoBarras, b.linhaDigitavelFormatada, b.nossoNumero]).toEqual([
      "0000820000528200000107013",
      "07099641400000010000000820000528200000107013",
      "07090.00087 20000.528206 00001.070135 9 64140000001000",
      "200000107013",
    ]);
    expect([b.bancoComDv, b.carteira, b.agenciaCodigoBeneficiario]).toEqual(["070-1", "2", "082 - 0000528"]);
  });

  it("around the fator reset: accepted by both validators and read back with the incremento", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "070", agencia: "240", conta: "0044990", carteira: "1", nossoNumero: "002000001" }, due, 19990);
      aceito(b, due);
      const lido = lerBoleto(b.linhaDigitavel, { referenceDate: due }).dados!;
      expect([lido.nossoNumero, lido.valores.nossoNumero]).toEqual(["100000107070", "002000001"]);
    }
  });

  it("agência of 3 digits, conta of 7, modalidades 1–3, naming the field", () => {
    const d = { banco: "070", agencia: "82", conta: "528", nossoNumero: "1" };
    expect(refusalOf(() => boleto({ ...d, agencia: "1801" }, null, 0)).field).toBe("dados.agencia");
    expect(refusalOf(() => boleto({ ...d, conta: "12345678" }, null, 0)).field).toBe("dados.conta");
    expect(refusalOf(() => boleto({ ...d, nossoNumero: "1234567890" }, null, 0)).field).toBe("dados.nossoNumero");
    expect(refusalOf(() => boleto({ ...d, carteira: "4" }, null, 0)).code).toBe("CARTEIRA_INVALIDA");
  });
});

describe("336 C6 (campo livre as boletonet's BancoC6Teste vectors; nosso número assigned by C6, decision 0023)", () => {
  it("campo livre = código do beneficiário + NN + carteira + layout identifier: boletonet's two boletos", () => {
    const a = boleto({ banco: "336", convenio: "000000000001", nossoNumero: "0000113522", carteira: "21" }, date(2020, 4, 25), 42000);
    expect([a.campoLivre, a.codigoBarras, a.linhaDigitavelFormatada]).toEqual([
      "0000000000010000113522213",
      "33691823600000420000000000000010000113522213",
      "33690.00009 00000.010009 01135.222139 1 82360000042000",
    ]);
    const b = boleto({ banco: "336", convenio: "2", nossoNumero: "2", carteira: "24" }, date(2021, 7, 29), 45612);
    expect([b.codigoBarras, b.linhaDigitavelFormatada]).toEqual([
      "33691869600000456120000000000020000000002243",
      "33690.00009 00000.020008 00000.022434 1 86960000045612",
    ]);
    expect([b.bancoComDv, b.carteira, b.agenciaCodigoBeneficiario]).toEqual(["336-0", "24", "000000000002"]);
  });

  it("nosso número DV over 0 + carteira + NN (the retorno fixture's carteira 20, NN 1 → 6); layout 4 for the beneficiário's own", () => {
    expect(nossoNumero({ banco: "336", convenio: "1", carteira: "20", nossoNumero: "1" })).toMatchObject({
      impresso: "0000000001-6",
      completo: "000000000016",
    });
    const b = boleto({ banco: "336", convenio: "1", nossoNumero: "1", carteira: "20", modalidade: "4" }, null, 0);
    expect(b.campoLivre.slice(22)).toBe("204");
  });

  it("around the fator reset: accepted by both validators and read back", () => {
    for (const due of [date(2025, 2, 21), date(2025, 2, 22), date(2026, 12, 15)]) {
      const b = boleto({ banco: "336", convenio: "123456789012", nossoNumero: "113522", carteira: "21" }, due, 19990);
      aceito(b, due);
      expect(lerBoleto(b.codigoBarras, { referenceDate: due }).dados?.nossoNumero).toBe(
        nossoNumero({ banco: "336", convenio: "1", carteira: "21", nossoNumero: "113522" }).completo,
      );
    }
  });

  it("refuses a layout identifier other than 3 or 4 and a nosso número over 10 digits, naming the field", () => {
    const d = { banco: "336", convenio: "1", nossoNumero: "1", carteira: "20" };
    expect(refusalOf(() => boleto({ ...d, modalidade: "5" }, null, 0)).field).toBe("dados.modalidade");
    expect(refusalOf(() => boleto({ ...d, nossoNumero: "12345678901" }, null, 0)).field).toBe("dados.nossoNumero");
  });
});
