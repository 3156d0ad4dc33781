import { dvGeral, mod10 } from "./checkdigits.js";
import { type CalendarDate, addDays, assertDate, diffDays, isoDate, toDayNumber } from "./date.js";
import { fail } from "./errors.js";

/** Base of the fator de vencimento (FEBRABAN): fator = days since 1997-10-07, in the 1000–9999 cycle. */
export const FATOR_BASE: CalendarDate = { year: 1997, month: 10, day: 7 };
/** First due date that has a fator (1000). */
export const FATOR_FIRST_DATE: CalendarDate = { year: 2000, month: 7, day: 3 };
/** Last due date the engine issues (a limit of ours, not FEBRABAN's: the cycle itself is endless). */
export const FATOR_LAST_DATE: CalendarDate = { year: 2099, month: 12, day: 31 };
/** Decoding window (FEBRABAN): a fator names the date within 3000 days before / 5500 after the reference. */
export const FATOR_WINDOW_PAST = 3000;
export const FATOR_WINDOW_FUTURE = 5500;
/** Values are 10 digits of cents: anything ≥ 10^10 cents is refused. */
export const VALOR_MAXIMO_CENTAVOS = 9_999_999_999;

/**
 * Fator de vencimento of a calendar due date, with the 2025 rollover (2025-02-21 = 9999,
 * 2025-02-22 = 1000, next wrap 2049-10-14 = 1000). `null` (no due date) → "0000".
 */
export function fatorVencimento(due: CalendarDate | null, field = "vencimento"): string {
  if (due === null) return "0000";
  const d = assertDate(due, field);
  if (diffDays(d, FATOR_FIRST_DATE) < 0 || diffDays(d, FATOR_LAST_DATE) > 0)
    fail("DATA_FORA_DO_INTERVALO", `due date ${isoDate(d)} is outside ${isoDate(FATOR_FIRST_DATE)}…${isoDate(FATOR_LAST_DATE)}`, field);
  const days = diffDays(d, FATOR_BASE);
  return String(((days - 1000) % 9000) + 1000).padStart(4, "0");
}

export interface FatorDecoding {
  /** The due date in the −3000/+5500 window around the reference, or the nearest candidate. */
  readonly date: CalendarDate;
  /** False when no candidate falls in the window (the nearest one is returned). */
  readonly withinWindow: boolean;
}

/**
 * Decode a fator against an injected reference date ("today" for the caller). "0000" → null
 * (contra-apresentação). Each fator names dates 9000 days apart; the FEBRABAN window picks one.
 */
export function decodeFator(fator: string, reference: CalendarDate, field = "fator"): FatorDecoding | null {
  if (!/^\d{4}$/.test(fator)) fail("CAMPO_INVALIDO", `fator must be 4 digits, got ${JSON.stringify(fator)}`, field);
  if (fator === "0000") return null;
  const f = Number(fator);
  if (f < 1000) fail("DATA_FORA_DO_INTERVALO", `fator ${fator} is below 1000`, field);
  const ref = assertDate(reference, "referenceDate");
  const base = toDayNumber(FATOR_BASE) + f; // first cycle
  const refN = toDayNumber(ref);
  // candidate n = base + 9000k; pick k so that n - ref ∈ [−3000, +5500]
  const k0 = Math.ceil((refN - FATOR_WINDOW_PAST - base) / 9000);
  let best = Math.max(0, k0);
  const n = base + 9000 * best;
  if (n - refN >= -FATOR_WINDOW_PAST && n - refN <= FATOR_WINDOW_FUTURE) {
    return { date: addDays(FATOR_BASE, f + 9000 * best), withinWindow: true };
  }
  // nearest candidate (k ≥ 0)
  const kNear = Math.max(0, Math.round((refN - base) / 9000));
  best = kNear;
  return { date: addDays(FATOR_BASE, f + 9000 * best), withinWindow: false };
}

export function assertValorCentavos(v: unknown, field = "valor"): number {
  if (v === undefined || v === null) fail("CAMPO_OBRIGATORIO", "value in cents is required", field);
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0)
    fail("VALOR_INVALIDO", `value must be a non-negative integer number of cents, got ${String(v)}`, field);
  if (v > VALOR_MAXIMO_CENTAVOS)
    fail("VALOR_ACIMA_DO_LIMITE", `value ${v} cents exceeds ${VALOR_MAXIMO_CENTAVOS}`, field, { max: VALOR_MAXIMO_CENTAVOS });
  return v;
}

export interface BarcodeParts {
  /** 3-digit COMPE code. */
  readonly banco: string;
  /** Due date, or null for fator 0000 (contra-apresentação). */
  readonly vencimento: CalendarDate | null;
  readonly valorCentavos: number;
  /** 25 digits, bank-specific (banks.ts). */
  readonly campoLivre: string;
}

/** Assemble the 44-digit barcode: bank + 9 + DV + fator + value + campo livre. */
export function buildBarcode(p: BarcodeParts): string {
  if (!/^\d{3}$/.test(p.banco)) fail("CAMPO_INVALIDO", "bank code must be 3 digits", "banco");
  if (!/^\d{25}$/.test(p.campoLivre)) fail("CAMPO_INVALIDO", "campo livre must be 25 digits", "campoLivre");
  const valor = assertValorCentavos(p.valorCentavos, "valorCentavos");
  const fator = fatorVencimento(p.vencimento, "vencimento");
  const body = `${p.banco}9${fator}${String(valor).padStart(10, "0")}${p.campoLivre}`;
  const dv = dvGeral(body);
  return `${body.slice(0, 4)}${dv}${body.slice(4)}`;
}

function digitsOnly(s: string): string {
  return s.replace(/[\s.-]/g, "");
}

export interface ParsedBarcode {
  readonly barcode: string;
  readonly banco: string;
  readonly moeda: string;
  readonly dv: number;
  readonly fator: string;
  /** Resolved with the window when a reference date is given; null for fator 0000. */
  readonly vencimento: CalendarDate | null | undefined;
  readonly vencimentoNaJanela: boolean | undefined;
  readonly valorCentavos: number;
  readonly campoLivre: string;
}

/** Validate and split a 44-digit cobrança barcode (DV geral, currency). Arrecadação (8…) is refused. */
export function parseBarcode(input: string, opts: { referenceDate?: CalendarDate } = {}): ParsedBarcode {
  const bc = digitsOnly(input ?? "");
  if (!/^\d{44}$/.test(bc)) fail("CODIGO_BARRAS_INVALIDO", `a barcode has 44 digits, got ${JSON.stringify(input)}`, "codigoBarras");
  if (bc[0] === "8") fail("BOLETO_DE_ARRECADACAO", "barcodes starting with 8 are arrecadação/convênio, not cobrança", "codigoBarras");
  if (bc[3] !== "9") fail("MOEDA_INVALIDA", `currency digit must be 9 (real), got ${bc[3]}`, "codigoBarras");
  const dv = dvGeral(bc.slice(0, 4) + bc.slice(5));
  if (String(dv) !== bc[4]) fail("DV_INVALIDO", `DV geral is ${bc[4]}, expected ${dv}`, "codigoBarras", { expected: dv });
  const fator = bc.slice(5, 9);
  let vencimento: CalendarDate | null | undefined;
  let vencimentoNaJanela: boolean | undefined;
  // CEF-BOL §5.2.3 / BB-DOC Anexo IV: a leading 0 means "no fator"; the 14 digits are then all value
  const semFator = fator[0] === "0";
  if (semFator) vencimento = null;
  else if (opts.referenceDate) {
    const dec = decodeFator(fator, opts.referenceDate);
    vencimento = dec!.date;
    vencimentoNaJanela = dec!.withinWindow;
  }
  return {
    barcode: bc,
    banco: bc.slice(0, 3),
    moeda: bc[3]!,
    dv,
    fator,
    vencimento,
    vencimentoNaJanela,
    valorCentavos: semFator ? Number(bc.slice(5, 19)) : Number(bc.slice(9, 19)),
    campoLivre: bc.slice(19),
  };
}

/** Barcode (44) → linha digitável (47 digits, no formatting). Validates the barcode first. */
export function barcodeToLinha(barcode: string): string {
  const bc = parseBarcode(barcode).barcode;
  const f1 = bc.slice(0, 4) + bc.slice(19, 24);
  const f2 = bc.slice(24, 34);
  const f3 = bc.slice(34, 44);
  return `${f1}${mod10(f1)}${f2}${mod10(f2)}${f3}${mod10(f3)}${bc[4]}${bc.slice(5, 19)}`;
}

/** Linha digitável (47, masks allowed) → barcode (44). Checks the three field DVs and the DV geral. */
export function linhaToBarcode(linha: string): string {
  const ld = digitsOnly(linha ?? "");
  if (!/^\d{47}$/.test(ld))
    fail("LINHA_DIGITAVEL_INVALIDA", `a linha digitável has 47 digits, got ${JSON.stringify(linha)}`, "linhaDigitavel");
  if (ld[0] === "8") fail("BOLETO_DE_ARRECADACAO", "linhas starting with 8 are arrecadação/convênio, not cobrança", "linhaDigitavel");
  const fields: Array<[string, string, number]> = [
    [ld.slice(0, 9), ld[9]!, 1],
    [ld.slice(10, 20), ld[20]!, 2],
    [ld.slice(21, 31), ld[31]!, 3],
  ];
  for (const [body, dv, n] of fields) {
    if (String(mod10(body)) !== dv)
      fail("DV_INVALIDO", `field ${n} DV is ${dv}, expected ${mod10(body)}`, "linhaDigitavel", { campo: n, expected: mod10(body) });
  }
  const bc = ld.slice(0, 4) + ld[32] + ld.slice(33, 47) + ld.slice(4, 9) + ld.slice(10, 20) + ld.slice(21, 31);
  try {
    return parseBarcode(bc).barcode;
  } catch (e) {
    if (e instanceof Error && "code" in e && (e as { code: string }).code === "CODIGO_BARRAS_INVALIDO") throw e;
    const err = e as { code: "DV_INVALIDO"; message: string; details?: Record<string, unknown> };
    fail(err.code, err.message.replace(/^[A-Z_]+ \([^)]*\): /, ""), "linhaDigitavel", err.details);
  }
}

/** `AAABC.CCCCX DDDDD.DDDDDY EEEEE.EEEEEZ K UUUUVVVVVVVVVV` */
export function formatLinha(linha: string): string {
  const ld = digitsOnly(linha);
  if (!/^\d{47}$/.test(ld)) fail("LINHA_DIGITAVEL_INVALIDA", "a linha digitável has 47 digits", "linhaDigitavel");
  return `${ld.slice(0, 5)}.${ld.slice(5, 10)} ${ld.slice(10, 15)}.${ld.slice(15, 21)} ${ld.slice(21, 26)}.${ld.slice(26, 32)} ${ld[32]} ${ld.slice(33)}`;
}

/** Parse a linha digitável (all DVs checked) into the barcode parts. */
export function parseLinha(linha: string, opts: { referenceDate?: CalendarDate } = {}): ParsedBarcode & { linha: string } {
  const bc = linhaToBarcode(linha);
  return { ...parseBarcode(bc, opts), linha: digitsOnly(linha) };
}

/** Accepts a barcode (44) or a linha (47). */
export function parseBoletoCode(code: string, opts: { referenceDate?: CalendarDate } = {}): ParsedBarcode & { linha: string } {
  const d = digitsOnly(code ?? "");
  if (d.length === 44) {
    const p = parseBarcode(d, opts);
    return { ...p, linha: barcodeToLinha(d) };
  }
  if (d.length === 47) return parseLinha(d, opts);
  if (d.length === 48 && d[0] === "8") fail("BOLETO_DE_ARRECADACAO", "48-digit linha of an arrecadação boleto", "codigo");
  fail("CODIGO_BARRAS_INVALIDO", `expected 44 (barcode) or 47 (linha) digits, got ${d.length}`, "codigo");
}
