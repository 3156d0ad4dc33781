// CNPJ and CPF as the Receita Federal defines them, for every part of the tree (NFS-e parties and chaves,
// certificates, boleto pagador and beneficiário). Since IN RFB 2.229/2024 a CNPJ may be alphanumeric:
// 12 characters [0-9A-Z] (8 of root, 4 of order) and 2 numeric check digits, computed mod 11 as before over
// each character's code minus 48 (so "A" counts 17). Numeric CNPJs are the special case where all 12 are
// digits, so one rule covers both. Lower case is not a CNPJ. CPFs stay 11 digits.
// docs/decisions/0015-alphanumeric-cnpj.md.

const CNPJ_SHAPE = /^[0-9A-Z]{12}[0-9]{2}$/;
const CNPJ_BASE = /^[0-9A-Z]{12}$/;
const CPF_SHAPE = /^[0-9]{11}$/;

/** Mod-11 check digit over `chars` (value = code − 48), weights 2..9 cycling from the right; 0 for remainders 0 and 1. */
export function mod11CheckDigit(chars: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = chars.length - 1; i >= 0; i--) {
    sum += (chars.charCodeAt(i) - 48) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** Appends the two check digits to a 12-character CNPJ base ([0-9A-Z]). */
export function completeCnpj(base12: string): string {
  if (!CNPJ_BASE.test(base12)) throw new Error(`CNPJ base must be 12 characters 0-9 or A-Z, got ${JSON.stringify(base12)}`);
  const d1 = mod11CheckDigit(base12);
  return `${base12}${d1}${mod11CheckDigit(base12 + d1)}`;
}

/** Appends the two check digits to a 9-digit CPF base. */
export function completeCpf(base9: string): string {
  if (!/^[0-9]{9}$/.test(base9)) throw new Error(`CPF base must be 9 digits, got ${JSON.stringify(base9)}`);
  const dv = (digits: string) => {
    let sum = 0;
    for (let i = 0; i < digits.length; i++) sum += (digits.charCodeAt(i) - 48) * (digits.length + 1 - i);
    const rest = sum % 11;
    return rest < 2 ? 0 : 11 - rest;
  };
  const d1 = dv(base9);
  return `${base9}${d1}${dv(base9 + d1)}`;
}

/**
 * Why `value` is not a CNPJ, in words fit for an error message ("has a wrong check digit"), or undefined
 * when it is one. Punctuation is not accepted here: callers that take formatted input strip it first.
 */
export function cnpjProblem(value: string): string | undefined {
  if (value.length !== 14) return `must be 14 characters (12 of 0-9/A-Z and 2 check digits), got ${value.length}`;
  if (/[a-z]/.test(value)) return "has lower-case letters (CNPJ letters are upper case)";
  if (!CNPJ_SHAPE.test(value))
    return /^[0-9A-Z]{14}$/.test(value)
      ? "has letters in its check digits (the last 2 are digits)"
      : "has characters other than 0-9 and A-Z";
  if (/^(\d)\1{13}$/.test(value)) return "is a repeated digit, not a CNPJ";
  if (completeCnpj(value.slice(0, 12)) !== value) return "has a wrong check digit";
  return undefined;
}

/** Why `value` is not a CPF, or undefined when it is one. */
export function cpfProblem(value: string): string | undefined {
  if (!CPF_SHAPE.test(value)) return `must be 11 digits, got ${JSON.stringify(value.slice(0, 20))}`;
  if (/^(\d)\1{10}$/.test(value)) return "is a repeated digit, not a CPF";
  if (completeCpf(value.slice(0, 9)) !== value) return "has a wrong check digit";
  return undefined;
}

export function isValidCnpj(value: string): boolean {
  return cnpjProblem(value) === undefined;
}

export function isValidCpf(value: string): boolean {
  return cpfProblem(value) === undefined;
}

/** 14 characters of the CNPJ alphabet, check digits not verified (what a column or an index may hold). */
export function isCnpjShaped(value: string): boolean {
  return CNPJ_SHAPE.test(value);
}

/** True for a valid CNPJ with at least one letter (the form introduced in 2026). */
export function isAlphanumericCnpj(value: string): boolean {
  return /[A-Z]/.test(value) && isValidCnpj(value);
}

/**
 * CPF/CNPJ as written by people and systems ("12.ABC.345/01DE-35", "123.456.789-09") → the bare characters.
 * Only the punctuation of the two masks is removed; anything else is kept, so that validation names it.
 */
export function stripTaxIdMask(value: string): string {
  return value.replace(/[.\-/\s]/g, "");
}

/** "12ABC34501DE35" → "12.ABC.345/01DE-35"; "12345678909" → "123.456.789-09"; anything else as given. */
export function formatTaxId(value: string): string {
  if (CNPJ_SHAPE.test(value))
    return `${value.slice(0, 2)}.${value.slice(2, 5)}.${value.slice(5, 8)}/${value.slice(8, 12)}-${value.slice(12)}`;
  if (CPF_SHAPE.test(value)) return `${value.slice(0, 3)}.${value.slice(3, 6)}.${value.slice(6, 9)}-${value.slice(9)}`;
  return value;
}
