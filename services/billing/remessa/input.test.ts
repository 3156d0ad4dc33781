// Contract títulos → libs/cobranca remessa inputs, per bank and layout (pure: no process, no database).
import { describe, expect, it } from "vitest";
import { JurosType, MultaType } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";
import { MovimentoRemessa } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import { boletoValido } from "../testing/fixtures.js";
import {
  beneficiarioDivergente,
  beneficiarioDoSublote,
  beneficiarioOf,
  codigosDoBanco400,
  gerarArquivoSublote,
  tituloOf,
  validarTitulo,
} from "./input.js";

const EMISSAO = { year: 2026, month: 11, day: 29 };
/** A sub-batch key: only the bank and the layout matter to these checks. */
const chave = (banco: string, layout: 240 | 400) => ({
  banco,
  layout,
  convenio: "",
  agencia: "",
  conta: "",
  carteira: "",
  variacao: "",
  pix: false,
});
const AGORA = { ...EMISSAO, hour: 12, minute: 0, second: 0 };
const santander = (codigoTransmissao: string, multa = { type: MultaType.PERCENTUAL, percentualBps: 200 }) =>
  boletoValido(1, {
    conta: { banco: "033", agencia: "8888", conta: "000002997", contaDv: "8", carteira: "101", codigoTransmissao },
    nossoNumero: "123",
    multa,
  });

describe("Santander remessa through billing", () => {
  it("carries the código de transmissão and says a percent multa the way Santander's CNAB 400 does (4)", () => {
    const b = santander("17777751042700080112");
    const febraban = tituloOf(b, "item-1", MovimentoRemessa.ENTRADA, EMISSAO);
    expect(febraban.multa?.codigo).toBe("2");
    const titulo = codigosDoBanco400(febraban, "033");
    expect(titulo.multa).toMatchObject({ codigo: "4", valor: 200 });
    expect(codigosDoBanco400(febraban, "237").multa?.codigo).toBe("2");
    const beneficiario = beneficiarioOf(b);
    expect(beneficiario.codigoTransmissao).toBe("17777751042700080112");
    expect(validarTitulo(chave("033", 400), beneficiario, titulo, AGORA)).toBeUndefined();
    // Without the translation Santander's detail would read code 2 as something else: refused, not written.
    expect(validarTitulo(chave("033", 400), beneficiario, febraban, AGORA)?.field).toBe("titulos[0].multa.codigo");
  });

  it("refuses Santander files without a código de transmissão, and CNAB 400 juros as a monthly rate", () => {
    const none = santander("");
    const titulo = tituloOf(none, "item-1", MovimentoRemessa.ENTRADA, EMISSAO);
    expect(validarTitulo(chave("033", 240), beneficiarioOf(none), titulo, AGORA)).toMatchObject({
      code: "CAMPO_OBRIGATORIO",
      field: "beneficiario.codigoTransmissao",
    });
    const rate = boletoValido(2, { juros: { type: JurosType.TAXA_MENSAL, taxaMensalBps: 100 } });
    const t = tituloOf(rate, "item-2", MovimentoRemessa.ENTRADA, EMISSAO);
    expect(validarTitulo(chave("237", 400), { ...beneficiarioOf(rate), convenio: "4567" }, t, AGORA)).toMatchObject({
      code: "CAMPO_INVALIDO",
      field: "titulos[0].juros.codigo",
    });
    expect(validarTitulo(chave("237", 240), beneficiarioOf(rate), t, AGORA)).toBeUndefined();
  });
});

describe("PIX in a remessa through billing", () => {
  const comPix = (pix: NonNullable<Parameters<typeof boletoValido>[1]>["pix"], banco = "033") =>
    boletoValido(3, {
      conta: {
        banco,
        agencia: "8888",
        conta: "000002997",
        contaDv: "8",
        carteira: "101",
        codigoTransmissao: "123456789012345",
        convenio: "4567",
      },
      nossoNumero: "123",
      pix,
    });

  it("writes the DICT key and txid into Santander CNAB 400's record 8, and refuses banks whose files carry no PIX", () => {
    const b = comPix({ kind: { case: "chaveEstatica", value: { chave: "cobranca@example.com.br", txid: "Fatura123" } } });
    const titulo = tituloOf(b, "item-3", MovimentoRemessa.ENTRADA, EMISSAO);
    expect(titulo.pix).toEqual({ chave: "cobranca@example.com.br", txid: "Fatura123" });
    const out = gerarArquivoSublote({
      chave: { ...chave("033", 400), pix: true },
      nsa: 1,
      geradoEm: AGORA,
      beneficiario: beneficiarioOf(b),
      titulos: [titulo],
    });
    const record8 = out.text.split("\r\n")[2]!;
    expect([record8[0], record8[42], record8.slice(43, 120).trimEnd(), record8.slice(120, 155).trimEnd()]).toEqual([
      "8",
      "4",
      "cobranca@example.com.br",
      "Fatura123",
    ]);
    for (const [banco, layout] of [
      ["033", 240],
      ["237", 400],
      ["237", 240],
    ] as const) {
      const other = comPix(b.pix, banco);
      expect(
        validarTitulo(chave(banco, layout), beneficiarioOf(other), tituloOf(other, "item-3", MovimentoRemessa.ENTRADA, EMISSAO), AGORA),
      ).toMatchObject({
        code: "CAMPO_INVALIDO",
        field: "titulos[0].pix",
      });
    }
  });

  it("refuses a PIX payload: the bank creates the charge and returns it", () => {
    const b = comPix({ kind: { case: "payload", value: "00020126…" } });
    expect(() => tituloOf(b, "item-3", MovimentoRemessa.ENTRADA, EMISSAO)).toThrow(
      expect.objectContaining({ code: "CAMPO_INVALIDO", field: "pix.payload" }),
    );
  });
});

describe("a bank that assigns the nosso número (Inter, decision 0033)", () => {
  const conta = { banco: "077", agencia: "0001", conta: "26245793", contaDv: "8", carteira: "112" };

  it("takes a título without one into Inter's file, and refuses one that brings a number, naming the field", () => {
    const b = boletoValido(1, { conta, nossoNumero: "", numeroDocumento: "501" });
    const titulo = tituloOf(b, "item-1", MovimentoRemessa.ENTRADA, EMISSAO);
    expect(titulo.nossoNumero).toBeUndefined();
    expect(validarTitulo(chave("077", 400), beneficiarioOf(b), titulo, AGORA)).toBeUndefined();
    expect(() => tituloOf(boletoValido(2, { conta, nossoNumero: "123" }), "item-2", MovimentoRemessa.ENTRADA, EMISSAO)).toThrow(
      expect.objectContaining({ code: "CAMPO_INVALIDO", field: "nosso_numero" }),
    );
  });

  it("still requires the nosso número of every other bank", () => {
    expect(() => tituloOf(boletoValido(3, { nossoNumero: "" }), "item-3", MovimentoRemessa.ENTRADA, EMISSAO)).toThrow(
      expect.objectContaining({ code: "CAMPO_OBRIGATORIO", field: "nosso_numero" }),
    );
  });
});

describe("the beneficiário of a sub-batch's header", () => {
  const base = {
    nome: "Padaria São João Ltda",
    documento: "11.222.333/0001-81",
    agencia: "1234",
    conta: "12345",
    contaDv: "1",
    convenio: "111",
  };
  it("ignores what the file does not tell apart: case, accents, punctuation of the document, leading zeros", () => {
    const same = { ...base, nome: "PADARIA SAO  JOAO LTDA", documento: "11222333000181", conta: "0012345" };
    expect(beneficiarioDivergente(base, same)).toBeUndefined();
    expect(beneficiarioDivergente(base, { ...base, contaDv: "2" })).toBe("contaDv");
    expect(beneficiarioDivergente(base, { ...base, codigoTransmissao: "1" })).toBe("codigoTransmissao");
    expect(beneficiarioDivergente(base, { ...base, nome: "Padaria Sao Joao ME" })).toBe("nome");
  });

  it("is the one most títulos name, the earliest on a tie, whatever the order of the others", () => {
    const outro = { ...base, documento: "52998224725" };
    expect(beneficiarioDoSublote([outro, base, base])).toBe(base);
    expect(beneficiarioDoSublote([base, outro, outro, base, outro])).toBe(outro);
    expect(beneficiarioDoSublote([outro, base])).toBe(outro);
    expect(beneficiarioDoSublote([])).toBeUndefined();
  });
});
