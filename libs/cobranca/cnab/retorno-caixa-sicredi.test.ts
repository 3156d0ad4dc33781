/**
 * Caixa (104) and Sicredi (748) CNAB 400 retornos, read by their manuals' columns: the laravel-boleto files
 * to the values the fixtures README lists, and the columns those mostly-zero files leave empty, written into
 * copies of their own detail lines.
 */
import { describe, expect, it } from "vitest";
import { date } from "../date.js";
import { fixture, fixtureText } from "../testing/fixtures.js";
import { checkCnab } from "./checker.js";
import { lerRetorno } from "./retorno.js";

const CAIXA = "retorno/400/laravel-boleto-104-cef.ret";
const SICREDI = "retorno/400/laravel-boleto-748-sicredi.ret";

/** The file's records (CRLF, the last one unterminated). */
const linhas = (f: string) => fixtureText(f).split("\r\n");

/** `texto` written over `linha` from 1-based column `col`. */
const em = (linha: string, col: number, texto: string) => linha.slice(0, col - 1) + texto + linha.slice(col - 1 + texto.length);

/** A file of the fixture's header and trailer around the given details (sequence numbers renumbered). */
function arquivo(f: string, detalhes: readonly string[]): string {
  const [header, , trailer] = linhas(f);
  return [header!, ...detalhes, trailer!].map((l, i) => em(l, 395, String(i + 1).padStart(6, "0"))).join("\r\n");
}

describe("104 Caixa CNAB 400 retorno (laravel-boleto cef.ret; SIGCB manual v015 §3.6.7–3.6.8)", () => {
  it("the file passes the checker and reads to the README's values: one baixa manual (02), not an entrada", () => {
    expect(checkCnab(fixture(CAIXA))).toMatchObject({ ok: true, banco: "104", direction: "retorno", warnings: [] });
    const r = lerRetorno(fixture(CAIXA));
    expect([r.banco, r.layout, r.dataArquivo, r.nsa, r.eventos.length, r.warnings]).toEqual(["104", 400, "201016", 0, 1, []]);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      ocorrencia: "02",
      estado: "WRITTEN_OFF",
      descricao: "baixa manual confirmada",
      motivos: [],
      nossoNumero: "14000000000000001",
      convenio: "0000000",
      carteira: "00",
      numeroDocumento: "1",
      dataOcorrencia: date(2016, 10, 20),
      vencimento: date(2016, 10, 19),
      valorCentavos: 10000,
      valorPagoCentavos: 10000,
      tarifaCentavos: 0,
      jurosCentavos: 0,
      descontoCentavos: 0,
      abatimentoCentavos: 0,
      iofCentavos: 0,
    });
    expect(r.eventos[0]!.dataCredito).toBeUndefined();
  });

  it("a liquidação with its channel, tarifa and credit date, and a rejection (99) with its motivo at 80–82", () => {
    const base = linhas(CAIXA)[1]!;
    let pago = em(base, 21, " 123456"); // a six-digit código do beneficiário, blank at 21 (NE004)
    pago = em(pago, 32, "boleto-42".toUpperCase().padEnd(25));
    pago = em(pago, 57, "14000000000000042");
    pago = em(pago, 107, "01");
    pago = em(pago, 109, "21");
    pago = em(pago, 166, "10401234");
    pago = em(pago, 176, "0000000000195"); // tarifa R$ 1,95
    pago = em(pago, 189, "003"); // agências CAIXA (NE035)
    pago = em(pago, 254, "0000000010150"); // valor principal
    pago = em(pago, 267, "0000000000100"); // juros
    pago = em(pago, 280, "0000000000050"); // multa
    pago = em(pago, 294, "211016"); // data do crédito
    const rejeitado = em(em(base, 109, "99"), 80, "026");
    const desconhecido = em(base, 109, "24");
    const r = lerRetorno(arquivo(CAIXA, [pago, rejeitado, desconhecido]));
    expect(r.warnings).toEqual([]);
    const [p, rej, unk] = r.eventos;
    expect(p).toMatchObject({
      estado: "PAID",
      descricao: "liquidação",
      convenio: "123456",
      id: "BOLETO-42",
      nossoNumero: "14000000000000042",
      carteira: "01",
      bancoRecebedor: "104",
      agenciaRecebedora: "01234",
      tarifaCentavos: 195,
      codigoLiquidacao: "003",
      valorPagoCentavos: 10150,
      jurosCentavos: 100,
      multaCentavos: 50,
      dataCredito: date(2016, 10, 21),
    });
    expect([rej!.estado, rej!.motivos]).toEqual(["REJECTED", ["026"]]);
    expect([unk!.ocorrencia, unk!.estado]).toEqual(["24", "UNKNOWN"]);
  });
});

describe("748 Sicredi CNAB 400 retorno (laravel-boleto sicredi.ret; Manual CNAB 400 Sicredi, August 2019, §10)", () => {
  it("the file passes the checker and reads to the README's values: one entrada (02) of nosso número 162000015", () => {
    expect(checkCnab(fixture(SICREDI))).toMatchObject({ ok: true, banco: "748", direction: "retorno", warnings: [] });
    const r = lerRetorno(fixture(SICREDI));
    expect([r.banco, r.layout, r.nsa, r.eventos.length]).toEqual(["748", 400, 1, 1]);
    expect(r.eventos[0]).toMatchObject({
      linha: 2,
      ocorrencia: "02",
      estado: "REGISTERED",
      descricao: "entrada confirmada",
      motivos: [],
      nossoNumero: "162000015",
      numeroDocumento: "1",
      dataOcorrencia: date(2016, 11, 11),
      vencimento: date(2016, 11, 11),
      valorCentavos: 10000,
      valorPagoCentavos: 10000,
      tarifaCentavos: 0,
      outrasDespesasCentavos: 0,
      jurosCentavos: 0,
      descontoCentavos: 0,
      abatimentoCentavos: 0,
    });
    expect(r.eventos[0]!.dataCredito).toBeUndefined();
  });

  it("the header date is AAAAMMDD by the manual: the file's DDMMAA (111116 then 00) is no date, and says so", () => {
    const r = lerRetorno(fixture(SICREDI));
    expect(r.dataArquivo).toBe("");
    expect(r.warnings.map((w) => [w.code, w.field])).toEqual([["DATA_INVALIDA", "linha 1.dataGravacao"]]);
    const [header, detalhe, trailer] = linhas(SICREDI);
    const certo = lerRetorno([em(header!, 95, "20161111"), detalhe, trailer].join("\r\n"));
    expect([certo.dataArquivo, certo.warnings]).toEqual(["11112016", []]);
  });

  it("a liquidação with its credit date (AAAAMMDD), custas and motivos in pairs; the nosso número as written when not zero-filled", () => {
    const base = linhas(SICREDI)[1]!;
    let pago = em(base, 48, "      172000595"); // the nine digits, blank-filled
    pago = em(pago, 109, "06");
    pago = em(pago, 176, "0000000000180"); // despesas de cobrança
    pago = em(pago, 189, "0000000000320"); // custas de protesto
    pago = em(pago, 280, "0000000000200"); // multa
    pago = em(pago, 319, "A8H5000000"); // motivos
    pago = em(pago, 329, "20161114"); // data prevista para o lançamento em conta
    const rejeitado = em(em(em(base, 109, "03"), 319, "0809      "), 48, "X00000162000015");
    const desconhecido = em(base, 109, "99");
    const r = lerRetorno(arquivo(SICREDI, [pago, rejeitado, desconhecido]));
    expect(r.warnings.map((w) => w.field)).toEqual(["linha 1.dataGravacao"]);
    const [p, rej, unk] = r.eventos;
    expect(p).toMatchObject({
      estado: "PAID",
      nossoNumero: "172000595",
      tarifaCentavos: 180,
      outrasDespesasCentavos: 320,
      multaCentavos: 200,
      motivos: ["A8", "H5"],
      dataCredito: date(2016, 11, 14),
    });
    expect([rej!.estado, rej!.motivos, rej!.nossoNumero]).toEqual(["REJECTED", ["08", "09"], "X00000162000015"]);
    expect([unk!.ocorrencia, unk!.estado]).toEqual(["99", "UNKNOWN"]);
  });

  it("re-reading gives the same idempotency keys", () => {
    const a = lerRetorno(fixture(SICREDI)).eventos.map((e) => e.chaveIdempotencia);
    expect(lerRetorno(fixture(SICREDI)).eventos.map((e) => e.chaveIdempotencia)).toEqual(a);
    expect(a[0]).toContain("|162000015|02|2016-11-11|");
  });
});
