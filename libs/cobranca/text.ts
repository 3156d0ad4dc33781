import { cnpjProblem, cpfProblem, isCnpjShaped, stripTaxIdMask } from "../tax-id/index.js";
import { fail } from "./errors.js";

/** Non-ASCII characters that NFD does not decompose, with their ASCII spelling. */
const SPECIAL: Readonly<Record<string, string>> = {
  ß: "ss",
  æ: "ae",
  Æ: "AE",
  ø: "o",
  Ø: "O",
  œ: "oe",
  Œ: "OE",
  đ: "d",
  Đ: "D",
  ł: "l",
  Ł: "L",
  þ: "th",
  Þ: "TH",
  ð: "d",
  Ð: "D",
  ı: "i",
  ħ: "h",
  Ħ: "H",
  "‘": "'",
  "’": "'",
  "‚": "'",
  "′": "'",
  "“": '"',
  "”": '"',
  "„": '"',
  "″": '"',
  "–": "-",
  "—": "-",
  "‐": "-",
  "‑": "-",
  "…": "...",
  ª: "a",
  º: "o",
  "°": "o",
  "\u00a0": " ",
  "\u2009": " ",
  "\u202f": " ",
  "·": ".",
  "×": "x",
  "´": "'",
  "`": "'",
  "¨": "",
  "¸": "",
};

const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Fold text to printable ASCII: strip diacritics (NFD), spell the few letters NFD keeps, map typographic
 * punctuation. Anything left outside printable ASCII is an error (TEXTO_NAO_CONVERSIVEL) — never dropped.
 * Control characters (tabs, newlines) become spaces.
 */
export function foldAscii(input: string, field = "texto"): string {
  if (typeof input !== "string") fail("CAMPO_INVALIDO", "text expected", field);
  if (PRINTABLE_ASCII.test(input)) return input; // nothing to fold (NFD leaves ASCII as it is)
  let out = "";
  for (const ch of input.normalize("NFD")) {
    const cp = ch.codePointAt(0)!;
    if (cp >= 0x300 && cp <= 0x36f) continue; // combining marks
    if (cp >= 0x20 && cp < 0x7f) out += ch;
    else if (cp < 0x20 || cp === 0x7f) out += " ";
    else if (SPECIAL[ch] !== undefined) out += SPECIAL[ch];
    else
      fail(
        "TEXTO_NAO_CONVERSIVEL",
        `character ${JSON.stringify(ch)} (U+${cp.toString(16).toUpperCase().padStart(4, "0")}) cannot be written in ASCII`,
        field,
        { char: ch },
      );
  }
  return out;
}

/**
 * CNAB text: ASCII-folded, upper-case, punctuation removed, runs of spaces collapsed, trimmed
 * (what the reference generators do, so the golden files come back byte for byte).
 */
export function cnabText(input: string, field = "texto"): string {
  return foldAscii(input, field)
    .toUpperCase()
    .replace(/[^A-Z0-9 ]/g, "")
    .replace(/ +/g, " ")
    .trim();
}

/** Digits only of a CPF/CNPJ/CEP written with punctuation. */
export function onlyDigits(s: string): string {
  return s.replace(/\D/g, "");
}

export type TipoInscricao = "CPF" | "CNPJ";

/**
 * Validate a CPF (11 digits) or CNPJ (14 characters, alphanumeric since 2026: 12 of [0-9A-Z] and 2 check
 * digits) given with or without its mask, with libs/tax-id's rules; returns the bare characters, letters
 * kept. `strict: false` accepts well-shaped numbers with wrong check digits (test data in the golden
 * files uses them).
 */
export function documento(input: string, field = "documento", strict = true): { tipo: TipoInscricao; numero: string } {
  if (input === undefined || input === null || input === "") fail("CAMPO_OBRIGATORIO", "CPF/CNPJ is required", field);
  if (typeof input !== "string") fail("CPF_CNPJ_INVALIDO", "CPF/CNPJ must be text", field);
  const d = stripTaxIdMask(input);
  if (d.length === 11 && /^\d{11}$/.test(d)) {
    const problem = strict ? cpfProblem(d) : undefined;
    if (problem === undefined) return { tipo: "CPF", numero: d };
    fail("CPF_CNPJ_INVALIDO", `CPF ${JSON.stringify(input)} ${problem}`, field);
  }
  if (d.length === 14) {
    const problem = strict || !isCnpjShaped(d) ? cnpjProblem(d) : undefined;
    if (problem === undefined) return { tipo: "CNPJ", numero: d };
    fail("CPF_CNPJ_INVALIDO", `CNPJ ${JSON.stringify(input)} ${problem}`, field);
  }
  fail("CPF_CNPJ_INVALIDO", `not a CPF (11 digits) or CNPJ (14 characters): ${JSON.stringify(input.slice(0, 40))}`, field);
}
