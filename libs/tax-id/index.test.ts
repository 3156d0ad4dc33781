import { describe, expect, it } from "vitest";
import {
  cnpjProblem,
  completeCnpj,
  completeCpf,
  cpfProblem,
  formatTaxId,
  isAlphanumericCnpj,
  isCnpjShaped,
  isValidCnpj,
  isValidCpf,
  stripTaxIdMask,
} from "./index.js";

describe("CNPJ", () => {
  it("validates numeric CNPJs as before and completes their bases", () => {
    expect(isValidCnpj("11222333000181")).toBe(true);
    expect(isValidCnpj("11222333000182")).toBe(false);
    expect(isValidCnpj("00000000000000")).toBe(false);
    expect(completeCnpj("112223330001")).toBe("11222333000181");
  });

  it("computes the check digits of an alphanumeric CNPJ over code − 48 (the Receita's example 12.ABC.345/01DE-35)", () => {
    expect(completeCnpj("12ABC34501DE")).toBe("12ABC34501DE35");
    expect(isValidCnpj("12ABC34501DE35")).toBe(true);
    expect(isAlphanumericCnpj("12ABC34501DE35")).toBe(true);
    expect(isAlphanumericCnpj("11222333000181")).toBe(false);
    // Every letter counts its own value: swapping two letters changes the digits.
    expect(completeCnpj("12BAC34501DE")).not.toBe("12BAC34501DE35");
  });

  it("says why a value is not a CNPJ", () => {
    expect(cnpjProblem("12ABC34501DE36")).toBe("has a wrong check digit");
    expect(cnpjProblem("12abc34501de35")).toMatch(/lower-case/);
    expect(cnpjProblem("12ABC34501DE3")).toMatch(/14 characters.*got 13/);
    expect(cnpjProblem("12ABC34501DEAB")).toMatch(/check digits/);
    expect(cnpjProblem("12ABC34501D-35")).toMatch(/other than 0-9 and A-Z/);
    expect(cnpjProblem("11111111111111")).toMatch(/repeated/);
    expect(cnpjProblem("12ABC34501DE35")).toBeUndefined();
    expect(isCnpjShaped("12ABC34501DE36")).toBe(true);
    expect(isCnpjShaped("12abc34501de35")).toBe(false);
  });

  it("refuses a base that is not 12 characters of the alphabet", () => {
    expect(() => completeCnpj("12abc34501de")).toThrow(/0-9 or A-Z/);
    expect(() => completeCnpj("1234")).toThrow();
  });
});

describe("CPF", () => {
  it("validates and completes", () => {
    expect(isValidCpf("52998224725")).toBe(true);
    expect(isValidCpf("52998224726")).toBe(false);
    expect(isValidCpf("11111111111")).toBe(false);
    expect(completeCpf("529982247")).toBe("52998224725");
    expect(cpfProblem("5299822472A")).toMatch(/11 digits/);
    expect(cpfProblem("52998224726")).toBe("has a wrong check digit");
  });
});

describe("masks", () => {
  it("strips and formats both masks, letters kept", () => {
    expect(stripTaxIdMask("12.ABC.345/01DE-35")).toBe("12ABC34501DE35");
    expect(stripTaxIdMask("529.982.247-25")).toBe("52998224725");
    expect(formatTaxId("12ABC34501DE35")).toBe("12.ABC.345/01DE-35");
    expect(formatTaxId("52998224725")).toBe("529.982.247-25");
    expect(formatTaxId("NIF-123")).toBe("NIF-123");
  });
});
