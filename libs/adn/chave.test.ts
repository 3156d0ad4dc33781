import { describe, expect, it } from "vitest";
import { completeCnpj, mod11CheckDigit as mod11Dv } from "../tax-id/index.js";
import { buildChave, chaveProblem, isChaveShaped, isValidChave } from "./chave.js";

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
    const chave = buildChave({
      cMun: "3304557",
      ambGer: 1,
      tpInsc: 1,
      inscricao: "52998224725",
      nNFSe: 123,
      year: 2025,
      month: 12,
      codigo: 1,
    });
    expect(chave).toBe("33045571100052998224725000000000012325120000000019");
    expect(isValidChave(chave)).toBe(true);
  });
});

describe("chave de acesso with an alphanumeric CNPJ (IN RFB 2.229/2024)", () => {
  const cnpj = completeCnpj("12ABC34501DE");
  const chave = buildChave({ cMun: "3550308", ambGer: 2, tpInsc: 2, inscricao: cnpj, nNFSe: 42, year: 2026, month: 9, codigo: 123456789 });

  it("carries the letters at positions 10-23 and a DV computed over code − 48", () => {
    expect(chave.slice(9, 23)).toBe("12ABC34501DE35");
    expect(isValidChave(chave)).toBe(true);
    let sum = 0;
    let w = 2;
    for (let i = 48; i >= 0; i--) {
      sum += (chave.charCodeAt(i) - 48) * w;
      w = w === 9 ? 2 : w + 1;
    }
    expect(Number(chave[49])).toBe(sum % 11 < 2 ? 0 : 11 - (sum % 11));
  });

  it("refuses malformed chaves with a reason that names the fault", () => {
    const wrongDv = chave.slice(0, 49) + String((Number(chave[49]) + 1) % 10);
    expect(chaveProblem(wrongDv)).toMatch(/check digit/);
    expect(chaveProblem(chave.toLowerCase())).toMatch(/lower-case/);
    expect(chaveProblem(chave.slice(0, 49))).toMatch(/50 characters, got 49/);
    // A letter outside the inscrição, and letters in a CPF inscrição (tpInsc 1).
    expect(chaveProblem(`A${chave.slice(1)}`)).toMatch(/positions 10-23/);
    const cpfBody = `${chave.slice(0, 8)}1${chave.slice(9, 49)}`;
    expect(chaveProblem(cpfBody + String(mod11Dv(cpfBody)))).toMatch(/CPF/);
    expect(isChaveShaped(wrongDv)).toBe(true);
    expect(isChaveShaped(chave.toLowerCase())).toBe(false);
  });
});
