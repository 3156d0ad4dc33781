import { describe, expect, it } from "vitest";
import { brasiliaDayStart, chaveInput, partyDocumentInput } from "./documents-view.js";

describe("Documentos search input", () => {
  it("turns a day into its start in Brasília time and names the field of a bad date", () => {
    expect(new Date(brasiliaDayStart("2026-12-01", "from")).toISOString()).toBe("2026-12-01T03:00:00.000Z");
    expect(() => brasiliaDayStart("2026-02-30", "to")).toThrow("to must be a date YYYY-MM-DD");
    expect(() => brasiliaDayStart("01/12/2026", "from")).toThrow("from must be a date YYYY-MM-DD");
  });

  it("accepts CNPJ/CPF as typed, punctuation and all, and refuses what no index holds", () => {
    expect(partyDocumentInput("11.222.333/0001-81", "prestador")).toBe("11222333000181");
    expect(partyDocumentInput("12.abc.345/01de-35", "tomador")).toBe("12ABC34501DE35");
    expect(() => partyDocumentInput("11*222", "tomador")).toThrow("tomador may hold only digits and letters");
    expect(chaveInput(` ${"1".repeat(50)} `)).toBe("1".repeat(50));
    expect(() => chaveInput("123")).toThrow("chave must be 50 digits");
  });
});
