/**
 * Independent oracles (cobranca.md §9): every boleto we generate must be accepted by
 * boleto-brasileiro-validator (strict) and @brazilian-utils/brazilian-utils, and decode to the same
 * bank, value and due date.
 */
import { getBoletoInfo, isValidBoleto } from "@brazilian-utils/brazilian-utils";
import * as bbv from "boleto-brasileiro-validator";
import { describe, expect, it } from "vitest";
import { fatorVencimento } from "./boleto.js";
import { gerarBoleto, lerBoleto, type Boleto, type DadosBancarios } from "./campo-livre.js";
import { type CalendarDate, addDays, date } from "./date.js";
import { prng } from "./testing/prng.js";

type Gen = (r: ReturnType<typeof prng>) => DadosBancarios;

/** One generator per bank variant, drawing every input from the seeded PRNG. */
const GENERATORS: Record<string, Gen> = {
  "bb-4": (r) => ({
    banco: "001",
    convenio: String(r.int(1000, 9999)),
    nossoNumero: r.digits(7),
    agencia: r.digits(4),
    conta: r.digits(8),
    carteira: r.pick(["17", "18", "11"]),
  }),
  "bb-6": (r) => ({
    banco: "001",
    convenio: String(r.int(100000, 999999)),
    nossoNumero: String(r.int(1, 99999)),
    agencia: r.digits(4),
    conta: r.digits(8),
    carteira: "18",
  }),
  "bb-6-nn17": (r) => ({
    banco: "001",
    convenio: String(r.int(100000, 999999)),
    nossoNumero: String(r.int(100000, 99999999)) + r.digits(9),
    carteira: "18",
  }),
  "bb-7": (r) => ({ banco: "001", convenio: String(r.int(1000000, 9999999)), nossoNumero: r.digits(10), carteira: r.pick(["17", "18"]) }),
  bradesco: (r) => ({
    banco: "237",
    agencia: r.digits(4),
    carteira: r.pick(["02", "06", "09", "26"]),
    nossoNumero: r.digits(11),
    conta: r.digits(7),
  }),
  itau: (r) => ({
    banco: "341",
    carteira: r.pick(["109", "112", "175", "126", "196"]),
    nossoNumero: r.digits(8),
    agencia: r.digits(4),
    conta: r.digits(5),
    seuNumero: r.digits(7),
    codigoCliente: r.digits(5),
  }),
  caixa: (r) => ({ banco: "104", convenio: r.digits(6), nossoNumero: r.digits(15) }),
  santander: (r) => ({ banco: "033", convenio: r.digits(7), nossoNumero: r.digits(12), carteira: r.pick(["101", "102", "201"]) }),
  sicoob: (r) => ({
    banco: "756",
    agencia: r.digits(4),
    convenio: r.digits(7),
    nossoNumero: r.digits(7),
    modalidade: r.pick(["01", "02", "05"]),
  }),
  sicredi: (r) => ({
    banco: "748",
    tipoCobranca: "1",
    agencia: r.digits(4),
    posto: r.digits(2),
    convenio: r.digits(5),
    ano: r.digits(2),
    byteGeracao: String(r.int(2, 9)),
    nossoNumero: r.digits(5),
  }),
  banrisul: (r) => ({ banco: "041", produto: r.pick(["1", "2"]), agencia: r.digits(4), convenio: r.digits(7), nossoNumero: r.digits(8) }),
  brb: (r) => ({ banco: "070", agencia: r.digits(3), conta: r.digits(7), carteira: r.pick(["1", "2", "3"]), nossoNumero: r.digits(9) }),
  c6: (r) => ({ banco: "336", convenio: r.digits(12), nossoNumero: r.digits(10), carteira: r.digits(2), modalidade: r.pick(["3", "4"]) }),
  inter: (r) => ({ banco: "077", carteira: r.pick(["110", "112"]), convenio: r.digits(7), nossoNumero: r.digits(10) }),
  safra: (r) => ({ banco: "422", agencia: r.digits(5), conta: r.digits(9), nossoNumero: r.digits(8) }),
  cresol: (r) => ({ banco: "133", agencia: r.digits(4), carteira: r.pick(["09", "19"]), nossoNumero: r.digits(11), conta: r.digits(7) }),
  bnb: (r) => ({ banco: "004", agencia: r.digits(4), conta: r.digits(8), nossoNumero: r.digits(7), carteira: r.pick(["21", "41"]) }),
  unicred: (r) => ({ banco: "136", agencia: r.digits(4), conta: r.digits(10), nossoNumero: r.digits(10) }),
  ailos: (r) => ({ banco: "085", convenio: r.digits(6), conta: r.digits(7), nossoNumero: r.digits(9), carteira: r.pick(["01", "02"]) }),
};

const REFERENCE: CalendarDate = date(2026, 11, 29);
const DUE_DATES: CalendarDate[] = [
  date(2024, 12, 20),
  date(2025, 2, 21),
  date(2025, 2, 22),
  date(2025, 2, 23),
  date(2026, 12, 15),
  date(2031, 6, 30),
];

function maxValue(banco: string): number {
  return banco === "104" ? 999_999_999 : 9_999_999_999;
}

function checkWithOracles(b: Boleto, reference: CalendarDate): void {
  expect(bbv.boleto(b.codigoBarras, true), `bbv barcode ${b.codigoBarras}`).toBe(true);
  expect(bbv.boletoBancarioCodigoBarras(b.codigoBarras)).toBe(true);
  expect(bbv.boletoBancarioLinhaDigitavel(b.linhaDigitavel, true), `bbv linha ${b.linhaDigitavel}`).toBe(true);
  expect(bbv.boleto(b.linhaDigitavelFormatada, true)).toBe(true);
  expect(isValidBoleto(b.linhaDigitavel), `BU isValidBoleto ${b.linhaDigitavel}`).toBe(true);
  const info = getBoletoInfo(b.linhaDigitavel, { referenceDate: new Date(reference.year, reference.month - 1, reference.day) });
  expect(info).not.toBeNull();
  expect(info!.bankCode).toBe(b.banco);
  expect(info!.amount).toBe(b.valorCentavos);
  if (b.vencimento) {
    const e = info!.expirationDate!;
    expect({ year: e.getFullYear(), month: e.getMonth() + 1, day: e.getDate() }).toEqual(b.vencimento);
  }
  // and our own decoder agrees with both
  const ours = lerBoleto(b.linhaDigitavel, { referenceDate: reference, variante: b.variante });
  expect(ours.valorCentavos).toBe(b.valorCentavos);
  expect(ours.vencimento).toEqual(b.vencimento);
  expect(ours.dados?.nossoNumero).toBe(b.nossoNumero);
}

describe("oracle matrix: bank × due date (both sides of 2025-02-22) × value (zero/normal/max) × DV geral 1–9", () => {
  for (const [name, gen] of Object.entries(GENERATORS)) {
    it(name, () => {
      const r = prng(0xc0b2a + name.length * 7919 + name.charCodeAt(0));
      const seenDv = new Set<string>();
      const seenClDv = new Set<string>();
      let n = 0;
      for (const due of DUE_DATES) {
        for (const valor of [0, 15_000, maxValue(gen(r).banco)]) {
          const b = gerarBoleto({ dados: gen(r), vencimento: due, valorCentavos: valor });
          checkWithOracles(b, REFERENCE);
          seenDv.add(b.codigoBarras[4]!);
          n++;
        }
      }
      // keep drawing until every DV geral 1–9 (and, for Caixa, every campo-livre DV 0–9) was produced
      for (let i = 0; i < 5000 && (seenDv.size < 9 || (name === "caixa" && seenClDv.size < 10)); i++) {
        const due = addDays(date(2025, 2, 22), r.int(-2000, 4000));
        const b = gerarBoleto({ dados: gen(r), vencimento: due, valorCentavos: r.int(0, 99_999_999) });
        checkWithOracles(b, due);
        seenDv.add(b.codigoBarras[4]!);
        seenClDv.add(b.campoLivre[24]!);
        n++;
      }
      expect([...seenDv].sort().join("")).toBe("123456789");
      if (name === "caixa") expect(seenClDv.size).toBe(10);
      expect(n).toBeGreaterThan(17);
    });
  }
});

describe("property: many generated boletos per bank are accepted by the oracles", () => {
  it("300 random boletos per bank variant (seeded)", () => {
    const r = prng(20261129);
    for (const gen of Object.values(GENERATORS)) {
      for (let i = 0; i < 300; i++) {
        const dados = gen(r);
        const due = addDays(date(2025, 2, 22), r.int(-3000, 5000));
        const ref = addDays(due, r.int(-5400, 2900));
        const valor = r.next() < 0.1 ? 0 : r.int(1, maxValue(dados.banco));
        const b = gerarBoleto({ dados, vencimento: due, valorCentavos: valor });
        checkWithOracles(b, ref);
      }
    }
  });

  it("contra-apresentação (fator 0000) is accepted by the DV validators", () => {
    const b = gerarBoleto({ dados: GENERATORS.bradesco!(prng(1)), vencimento: null, valorCentavos: 0 });
    expect(b.fator).toBe("0000");
    expect(bbv.boleto(b.codigoBarras, true)).toBe(true);
    expect(isValidBoleto(b.linhaDigitavel)).toBe(true);
  });

  it("fator agrees with BU's decoding on every day of a 30-year span", () => {
    const ref = date(2026, 11, 29);
    for (let d = date(2018, 1, 1), i = 0; i < 11000; i += 7, d = addDays(d, 7)) {
      const b = gerarBoleto({
        dados: { banco: "237", agencia: "1", carteira: "09", nossoNumero: "1", conta: "1" },
        vencimento: d,
        valorCentavos: 1,
      });
      expect(b.fator).toBe(fatorVencimento(d));
      const e = getBoletoInfo(b.linhaDigitavel, { referenceDate: new Date(ref.year, ref.month - 1, ref.day) })!.expirationDate!;
      const ours = lerBoleto(b.codigoBarras, { referenceDate: ref });
      expect({ year: e.getFullYear(), month: e.getMonth() + 1, day: e.getDate() }).toEqual(ours.vencimento);
    }
  });
});
