import { describe, expect, it } from "vitest";
import {
  barcodeToLinha,
  buildBarcode,
  decodeFator,
  fatorVencimento,
  formatLinha,
  linhaToBarcode,
  parseBarcode,
  parseBoletoCode,
} from "./boleto.js";
import { dvGeral, mod10 } from "./checkdigits.js";
import { addDays, date, saoPauloDate } from "./date.js";
import { refusalOf } from "./testing/refusal.js";

const code = (fn: () => unknown) => refusalOf(fn).code;

describe("fator de vencimento (cobranca.md §1.3)", () => {
  it.each([
    [date(2000, 7, 3), "1000"],
    [date(2025, 2, 21), "9999"],
    [date(2025, 2, 22), "1000"],
    [date(2025, 2, 23), "1001"],
    [date(2029, 5, 20), "2548"],
    [date(2026, 11, 29), "1645"],
    [date(2026, 12, 15), "1661"],
    [date(2049, 10, 13), "9999"],
    [date(2049, 10, 14), "1000"],
    [date(2008, 2, 3), "3771"],
  ])("%o → %s", (d, f) => expect(fatorVencimento(d)).toBe(f));

  it("0000 for contra-apresentação", () => expect(fatorVencimento(null)).toBe("0000"));

  it("refuses dates before 2000-07-03 and invalid dates", () => {
    expect(code(() => fatorVencimento(date(2000, 7, 2)))).toBe("DATA_FORA_DO_INTERVALO");
    expect(code(() => fatorVencimento(date(2025, 2, 30)))).toBe("DATA_INVALIDA");
  });

  it("is computed on the calendar date of São Paulo, not on an instant", () => {
    // 2025-02-21 23:30 in São Paulo is already 2025-02-22 in UTC: the fator is still 9999.
    const instant = new Date("2025-02-22T02:30:00Z");
    expect(fatorVencimento(saoPauloDate(instant))).toBe("9999");
    expect(fatorVencimento(saoPauloDate(new Date("2025-02-22T03:00:00Z")))).toBe("1000");
  });

  it("decodes with the −3000/+5500 window against an injected reference date", () => {
    expect(decodeFator("1000", date(2026, 11, 29))).toEqual({ date: date(2025, 2, 22), withinWindow: true });
    expect(decodeFator("1000", date(2001, 1, 1))).toEqual({ date: date(2000, 7, 3), withinWindow: true });
    expect(decodeFator("9999", date(2024, 1, 1))!.date).toEqual(date(2025, 2, 21));
    expect(decodeFator("9999", date(2026, 11, 29))!.date).toEqual(date(2025, 2, 21)); // 646 days ago
    expect(decodeFator("2548", date(2026, 11, 29))!.date).toEqual(date(2029, 5, 20));
    expect(decodeFator("3771", date(2008, 1, 1))!.date).toEqual(date(2008, 2, 3));
    expect(decodeFator("3771", date(2030, 1, 1))!.date).toEqual(date(2032, 9, 24)); // 3771 of the 2nd cycle (+9000 days)
    expect(decodeFator("0000", date(2026, 1, 1))).toBeNull();
  });

  it("round-trips every day from 2000-07-03 to 2060 (reference = the date itself)", () => {
    let d = date(2000, 7, 3);
    for (let i = 0; i < 22000; i++) {
      const f = fatorVencimento(d);
      expect(decodeFator(f, d)!.date).toEqual(d);
      d = addDays(d, 1);
    }
  });
});

describe("barcode and linha digitável (cobranca.md §1–2)", () => {
  const bb = "00193373700000001000500940144816060680935031";
  const bbLinha = "00190.50095 40144.816069 06809.350314 3 37370000000100";
  const cef = "10494324200000321120055077222133347777777771";
  const cefLinha = "10490.05505 77222.133348 77777.777713 4 32420000032112";

  it("converts the BB-DOC and CEF-BOL reference pairs both ways", () => {
    expect(formatLinha(barcodeToLinha(bb))).toBe(bbLinha);
    expect(linhaToBarcode(bbLinha)).toBe(bb);
    expect(formatLinha(barcodeToLinha(cef))).toBe(cefLinha);
    expect(linhaToBarcode(cefLinha)).toBe(cef);
  });

  it("DV geral: CEF-BOL Anexo I sum 788 → 4, never 0", () => {
    expect(dvGeral(cef.slice(0, 4) + cef.slice(5))).toBe(4);
    for (let i = 0; i < 500; i++) expect(dvGeral(String(i).padStart(43, "7"))).not.toBe(0);
  });

  it("mod 10 field DVs as printed in BB-DOC (5, 9, 4)", () => {
    expect(mod10("001905009")).toBe(5);
    expect(mod10("4014481606")).toBe(9);
    expect(mod10("0680935031")).toBe(4);
  });

  it("builds the barcode from parts, zero and maximum value", () => {
    const p = { banco: "001", vencimento: date(2007, 12, 31), valorCentavos: 100, campoLivre: bb.slice(19) };
    expect(buildBarcode(p)).toBe(bb);
    expect(buildBarcode({ ...p, valorCentavos: 0 }).slice(9, 19)).toBe("0000000000");
    expect(buildBarcode({ ...p, valorCentavos: 9_999_999_999 }).slice(9, 19)).toBe("9999999999");
    expect(buildBarcode({ ...p, vencimento: null }).slice(5, 9)).toBe("0000");
  });

  it("refuses bad values with stable codes", () => {
    const p = { banco: "001", vencimento: date(2026, 1, 1), campoLivre: "0".repeat(25) };
    expect(code(() => buildBarcode({ ...p, valorCentavos: 10_000_000_000 }))).toBe("VALOR_ACIMA_DO_LIMITE");
    expect(code(() => buildBarcode({ ...p, valorCentavos: -1 }))).toBe("VALOR_INVALIDO");
    expect(code(() => buildBarcode({ ...p, valorCentavos: 1.5 }))).toBe("VALOR_INVALIDO");
  });

  it("rejects wrong DVs, wrong currency, arrecadação and wrong lengths", () => {
    expect(code(() => parseBarcode(bb.slice(0, 4) + "4" + bb.slice(5)))).toBe("DV_INVALIDO");
    expect(code(() => parseBarcode("0018" + bb.slice(4)))).toBe("MOEDA_INVALIDA");
    expect(code(() => parseBarcode("8" + bb.slice(1)))).toBe("BOLETO_DE_ARRECADACAO");
    expect(code(() => parseBarcode(bb.slice(1)))).toBe("CODIGO_BARRAS_INVALIDO");
    const ld = bbLinha.replace(/\D/g, "");
    for (const i of [9, 20, 31, 32]) {
      const bad = ld.slice(0, i) + String((Number(ld[i]) + 1) % 10) + ld.slice(i + 1);
      expect(code(() => linhaToBarcode(bad))).toBe("DV_INVALIDO");
    }
    expect(code(() => linhaToBarcode("8".repeat(47)))).toBe("BOLETO_DE_ARRECADACAO");
    expect(code(() => parseBoletoCode("8".repeat(48)))).toBe("BOLETO_DE_ARRECADACAO");
  });

  it("a leading 0 in the fator means no due date, and the 14 digits are the value (BB-DOC Anexo IV)", () => {
    const body = "0019" + "00012345678901" + bb.slice(19);
    const bc = body.slice(0, 4) + dvGeral(body) + body.slice(4);
    const p = parseBarcode(bc, { referenceDate: date(2026, 1, 1) });
    expect(p.vencimento).toBeNull();
    expect(p.valorCentavos).toBe(12345678901);
  });

  it("parses value and due date with a reference date", () => {
    const p = parseBoletoCode("34194254800006757871090001015271248021246000", { referenceDate: date(2026, 11, 29) });
    expect(p.valorCentavos).toBe(675787);
    expect(p.vencimento).toEqual(date(2029, 5, 20));
    expect(p.banco).toBe("341");
    expect(formatLinha(p.linha)).toBe("34191.09008 01015.271248 80212.460002 4 25480000675787");
  });
});
