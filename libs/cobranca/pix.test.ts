import { getPixPayloadInfo, isValidPixKey, isValidPixPayload } from "@brazilian-utils/brazilian-utils";
import { describe, expect, it } from "vitest";
import { buildPixDinamico, buildPixEstatico, crc16ccitt, parsePix } from "./pix.js";
import { prng } from "./testing/prng.js";
import { refusalOf } from "./testing/refusal.js";

const code = (fn: () => unknown) => refusalOf(fn).code;

describe("CRC16-CCITT-FALSE (cobranca.md §6.2)", () => {
  it("check values 29B1 and the BCB static example 1D3D", () => {
    expect(crc16ccitt("123456789")).toBe("29B1");
    const bcb =
      "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***6304";
    expect(crc16ccitt(bcb)).toBe("1D3D");
    expect(parsePix(bcb + "1D3D").chave).toBe("123e4567-e12b-12d1-a456-426655440000");
  });
  it("zero-pads to four hex digits", () => {
    const r = prng(7);
    let found = 0;
    for (let i = 0; i < 20000 && found < 3; i++) {
      const c = crc16ccitt(`x${r.digits(8)}`);
      expect(c).toMatch(/^[0-9A-F]{4}$/);
      if (c.startsWith("0")) found++;
    }
    expect(found).toBe(3);
  });
});

describe("BR Code build and parse", () => {
  it("reproduces the BCB static example from its fields", () => {
    const p = buildPixEstatico({ chave: "123e4567-e12b-12d1-a456-426655440000", nome: "Fulano de Tal", cidade: "BRASILIA" });
    expect(p).toBe(
      "00020126580014br.gov.bcb.pix0136123e4567-e12b-12d1-a456-4266554400005204000053039865802BR5913Fulano de Tal6008BRASILIA62070503***63041D3D",
    );
  });

  it("static with amount, txid and accented names (folded to ASCII) is accepted by BU", () => {
    const p = buildPixEstatico({
      chave: "fulano@example.com",
      nome: "Padaria São João",
      cidade: "São Paulo",
      valorCentavos: 15000,
      txid: "BOLETO123",
      infoAdicional: "Pedido 42",
    });
    expect(isValidPixPayload(p)).toBe(true);
    const info = getPixPayloadInfo(p) as unknown as Record<string, unknown>;
    expect(info).toMatchObject({ merchantName: "Padaria Sao Joao", merchantCity: "Sao Paulo" });
    expect(parsePix(p)).toMatchObject({
      tipo: "ESTATICO",
      chave: "fulano@example.com",
      valorCentavos: 15000,
      txid: "BOLETO123",
      infoAdicional: "Pedido 42",
      nome: "Padaria Sao Joao",
    });
  });

  it("dynamic (cobv location) is accepted by BU and parses back", () => {
    const p = buildPixDinamico({
      url: "https://pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25",
      nome: "EMPRESA LTDA",
      cidade: "CURITIBA",
    });
    expect(isValidPixPayload(p)).toBe(true);
    expect((getPixPayloadInfo(p) as unknown as Record<string, unknown>).url).toContain("pix.example.com/qr/v2/cobv/");
    expect(parsePix(p)).toMatchObject({
      tipo: "DINAMICO",
      url: "pix.example.com/qr/v2/cobv/9d36b84fc70b478fb95c12729b90ca25",
      txid: "***",
      usoUnico: true,
    });
  });

  it("property: 500 random static payloads are valid for BU and parse back to their fields", () => {
    const r = prng(99);
    const keys = () =>
      r.pick([
        () => "12345678909",
        () => "11222333000181",
        () => `+55${r.digits(11)}`,
        () => `user${r.digits(4)}@example.com.br`,
        () => "123e4567-e12b-12d1-a456-426655440000",
      ])();
    for (let i = 0; i < 500; i++) {
      const input = {
        chave: keys(),
        nome: "NOME " + r.digits(r.int(1, 20)),
        cidade: "CIDADE " + r.digits(r.int(0, 8)),
        valorCentavos: r.int(1, 99_999_999),
        txid: r.next() < 0.5 ? undefined : "T" + r.digits(r.int(0, 24)),
      };
      const p = buildPixEstatico(input);
      expect(isValidPixPayload(p), p).toBe(true);
      const back = parsePix(p);
      expect(back.chave).toBe(input.chave);
      expect(back.valorCentavos).toBe(input.valorCentavos);
      expect(back.txid).toBe(input.txid ?? "***");
    }
  });

  it("enforces the limits and rejects a bad CRC, with stable codes", () => {
    const base = { chave: "12345678909", nome: "X", cidade: "Y" };
    expect(isValidPixKey("12345678909")).toBe(true);
    expect(code(() => buildPixEstatico({ ...base, nome: "N".repeat(26) }))).toBe("CAMPO_EXCEDE_TAMANHO");
    expect(code(() => buildPixEstatico({ ...base, cidade: "C".repeat(16) }))).toBe("CAMPO_EXCEDE_TAMANHO");
    expect(code(() => buildPixEstatico({ ...base, txid: "A".repeat(26) }))).toBe("PIX_INVALIDO");
    expect(code(() => buildPixEstatico({ ...base, txid: "a-b" }))).toBe("PIX_INVALIDO");
    expect(code(() => buildPixEstatico({ ...base, chave: "not a key" }))).toBe("PIX_INVALIDO");
    expect(code(() => buildPixEstatico({ ...base, valorCentavos: 0 }))).toBe("VALOR_INVALIDO");
    expect(code(() => buildPixEstatico({ ...base, nome: "東京" }))).toBe("TEXTO_NAO_CONVERSIVEL");
    expect(code(() => buildPixDinamico({ url: "pix.example.com/" + "a".repeat(70), nome: "X", cidade: "Y" }))).toBe("CAMPO_EXCEDE_TAMANHO");
    const ok = buildPixEstatico(base);
    expect(code(() => parsePix(ok.slice(0, -4) + "0000"))).toBe("PIX_CRC_INVALIDO");
    expect(code(() => parsePix(ok.slice(0, -10)))).toBe("PIX_INVALIDO");
    expect(parsePix(ok.slice(0, -4) + ok.slice(-4).toLowerCase()).chave).toBe("12345678909");
  });
});
