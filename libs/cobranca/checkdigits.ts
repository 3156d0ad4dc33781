/**
 * Check-digit algorithms, named. Bank tables refer to them by name (see banks.ts), so the bank rules
 * stay data and these are the only arithmetic.
 */

function digitsOf(s: string): number[] {
  if (!/^\d*$/.test(s)) throw new TypeError(`check digit over non-digits: ${JSON.stringify(s)}`);
  return [...s].map(Number);
}

/** FEBRABAN mod 10: weights 2,1,2,1… from the right, products ≥ 10 summed digit by digit. */
export function mod10(s: string): number {
  const d = digitsOf(s);
  let sum = 0;
  let w = 2;
  for (let i = d.length - 1; i >= 0; i--) {
    let p = d[i]! * w;
    if (p >= 10) p = Math.floor(p / 10) + (p % 10);
    sum += p;
    w = w === 2 ? 1 : 2;
  }
  return (10 - (sum % 10)) % 10;
}

/** Sum of digits × weights cycling from `from` to `to` starting at the rightmost digit. */
export function weightedSumFromRight(s: string, from = 2, to = 9): number {
  const d = digitsOf(s);
  let sum = 0;
  let w = from;
  for (let i = d.length - 1; i >= 0; i--) {
    sum += d[i]! * w;
    w = w === to ? from : w + 1;
  }
  return sum;
}

/** DV geral of the 44-digit barcode (over the 43 other digits): 11 − r, and 0/10/11 → 1. Never 0. */
export function dvGeral(s43: string): number {
  const d = 11 - (weightedSumFromRight(s43) % 11);
  return d === 0 || d === 10 || d === 11 ? 1 : d;
}

/** "M11-S": weights 2…9, DV = 11 − r, results > 9 → 0 (Caixa, Sicredi, Santander). */
export function mod11S(s: string): string {
  const d = 11 - (weightedSumFromRight(s) % 11);
  return String(d > 9 ? 0 : d);
}

/** "M11-R" (Banco do Brasil): weights 9…2 from the right, DV = remainder, 10 → X. */
export function mod11BB(s: string): string {
  const d = digitsOf(s);
  let sum = 0;
  let w = 9;
  for (let i = d.length - 1; i >= 0; i--) {
    sum += d[i]! * w;
    w = w === 2 ? 9 : w - 1;
  }
  const r = sum % 11;
  return r === 10 ? "X" : String(r);
}

/** Bradesco NN: weights 2…7, r = 0 → 0, r = 1 → P, else 11 − r. */
export function mod11Bradesco(s: string): string {
  const r = weightedSumFromRight(s, 2, 7) % 11;
  if (r === 0) return "0";
  if (r === 1) return "P";
  return String(11 - r);
}

/** Sicoob "constante 3197": weights 3,1,9,7 left to right; r ∈ {0,1} → 0, else 11 − r. */
export function sicoob3197(s: string): string {
  const d = digitsOf(s);
  const w = [3, 1, 9, 7];
  let sum = 0;
  d.forEach((x, i) => (sum += x * w[i % 4]!));
  const r = sum % 11;
  return String(r <= 1 ? 0 : 11 - r);
}

/** Banrisul "duplo dígito" NC: mod 10, then mod 11 (weights 2…7) with the r = 1 correction. */
export function banrisulNC(s: string): string {
  let d1 = mod10(s);
  for (;;) {
    const r = weightedSumFromRight(s + String(d1), 2, 7) % 11;
    if (r === 1) {
      d1 = (d1 + 1) % 10;
      continue;
    }
    const d2 = r === 0 ? 0 : 11 - r;
    return `${d1}${d2}`;
  }
}

/** Banco do Nordeste NN: weights 2…8 from the right; r ∈ {0,1} → 0, else 11 − r (BNB CNAB 400 manual, nota 1). */
export function mod11BNB(s: string): string {
  const r = weightedSumFromRight(s, 2, 8) % 11;
  return String(r <= 1 ? 0 : 11 - r);
}

/** Safra NN: weights 2…9 from the right; remainder 0 → 1, remainder 1 → 0, else 11 − r (manual §7.1). */
export function mod11Safra(s: string): string {
  const r = weightedSumFromRight(s) % 11;
  return String(r === 0 ? 1 : r === 1 ? 0 : 11 - r);
}

/** Mod 11 for agência/conta DVs as BB prints them (weights 9…2, 10 → X): same rule as the NN. */
export const mod11AgenciaConta = mod11BB;

export const CHECK_DIGITS = {
  mod10: (s: string) => String(mod10(s)),
  mod11S,
  mod11BB,
  mod11Bradesco,
  sicoob3197,
  banrisulNC,
  mod11BNB,
  mod11Safra,
} as const satisfies Record<string, (s: string) => string>;

export type CheckDigitAlgorithm = keyof typeof CHECK_DIGITS;

/** Mod 11 used by the arrecadação (48-digit) linha: weights 2–9, r 0/1 → 0, else 11 − r. */
export function mod11Arrecadacao(s: string): number {
  const r = weightedSumFromRight(s) % 11;
  return r <= 1 ? 0 : 11 - r;
}
