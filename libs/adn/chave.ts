// Chave de acesso of an NFS-e (adn.md §4.2): 50 digits, the last one a mod-11 check digit over the first
// 49 (weights 2..9 cycling from the right, remainder 0 or 1 → 0), the same rule as the NF-e. No official
// formula is published; it is the one every real chave checked so far satisfies.

const CHAVE = /^\d{50}$/;

/** Mod-11 check digit of `digits` (weights 2..9 from the right; 0 when the remainder is 0 or 1). */
export function mod11Dv(digits: string): number {
  let sum = 0;
  let weight = 2;
  for (let i = digits.length - 1; i >= 0; i--) {
    sum += (digits.charCodeAt(i) - 48) * weight;
    weight = weight === 9 ? 2 : weight + 1;
  }
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** True for 50 digits whose last digit is the mod-11 DV of the first 49. */
export function isValidChave(chave: string): boolean {
  return CHAVE.test(chave) && mod11Dv(chave.slice(0, 49)) === Number(chave[49]);
}

/** True for exactly 50 digits, DV not checked (what ingest accepts: the raw XML is the source of truth). */
export function isChaveShaped(chave: string): boolean {
  return CHAVE.test(chave);
}

export interface ChaveParts {
  /** IBGE code of the emitter's municipality, 7 digits. */
  cMun: string;
  /** 1 = municipal own system, 2 = Sefin Nacional. */
  ambGer: 1 | 2;
  /** 1 = CPF, 2 = CNPJ. */
  tpInsc: 1 | 2;
  /** CNPJ (14) or CPF (11, left-padded to 14). */
  inscricao: string;
  nNFSe: number | bigint;
  /** Year and month of emission. */
  year: number;
  month: number;
  /** 9-digit random code. */
  codigo: number;
}

/** Builds a chave with its check digit. */
export function buildChave(p: ChaveParts): string {
  const body =
    p.cMun.padStart(7, "0") +
    String(p.ambGer) +
    String(p.tpInsc) +
    p.inscricao.padStart(14, "0") +
    String(p.nNFSe).padStart(13, "0") +
    String(p.year % 100).padStart(2, "0") +
    String(p.month).padStart(2, "0") +
    String(p.codigo).padStart(9, "0");
  if (!/^\d{49}$/.test(body)) throw new Error("chave parts do not make 49 digits");
  return body + String(mod11Dv(body));
}
