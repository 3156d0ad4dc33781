import { describe, expect, it } from "vitest";
import { buildChave, isChaveShaped, isValidChave, mod11Dv } from "./chave.js";
import { completeCnpj, completeCpf, isValidCnpj, isValidCpf } from "./tax-id.js";

describe("chave de acesso", () => {
  it("accepts the sample chave of adn.md §7 and its check digit is mod 11", () => {
    const chave = "35503082211222333000181000000000004226031234567893";
    expect(isValidChave(chave)).toBe(true);
    expect(mod11Dv(chave.slice(0, 49))).toBe(3);
  });

  it("rejects every wrong check digit, wrong lengths and non-digits", () => {
    const body = "3550308221122233300018100000000000422603123456789";
    for (let d = 0; d <= 9; d++) expect(isValidChave(body + d)).toBe(d === 3);
    expect(isValidChave(body)).toBe(false);
    expect(isValidChave(`${body}3 `)).toBe(false);
    expect(isChaveShaped(`${body}0`)).toBe(true);
  });

  it("gives 0 when the remainder is 0 or 1", () => {
    // Both special remainders occur among small bodies; every other remainder gives 11 − r.
    const found = new Set<number>();
    for (let n = 0; found.size < 2 && n < 10_000; n++) {
      const body = String(n).padStart(49, "0");
      let sum = 0;
      let w = 2;
      for (let i = 48; i >= 0; i--) {
        sum += Number(body[i]) * w;
        w = w === 9 ? 2 : w + 1;
      }
      if (sum % 11 < 2) {
        expect(mod11Dv(body)).toBe(0);
        found.add(sum % 11);
      } else expect(mod11Dv(body)).toBe(11 - (sum % 11));
    }
    expect(found).toEqual(new Set([0, 1]));
  });

  it("builds chaves from their parts (CPF emitters left-padded) with a valid DV", () => {
    const chave = buildChave({ cMun: "3304557", ambGer: 1, tpInsc: 1, inscricao: "52998224725", nNFSe: 123, year: 2025, month: 12, codigo: 1 });
    expect(chave).toBe("33045571100052998224725000000000012325120000000019");
    expect(isValidChave(chave)).toBe(true);
  });
});

describe("CNPJ and CPF check digits", () => {
  it("validates known numbers and completes bases", () => {
    expect(isValidCnpj("11222333000181")).toBe(true);
    expect(isValidCnpj("11222333000182")).toBe(false);
    expect(isValidCnpj("00000000000000")).toBe(false);
    expect(completeCnpj("112223330001")).toBe("11222333000181");
    expect(isValidCpf("52998224725")).toBe(true);
    expect(isValidCpf("52998224726")).toBe(false);
    expect(isValidCpf("11111111111")).toBe(false);
    expect(completeCpf("529982247")).toBe("52998224725");
  });
});
