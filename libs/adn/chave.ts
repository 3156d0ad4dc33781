// Chave de acesso of an NFS-e (adn.md §4.2; the 2026 form: docs/decisions/0015-alphanumeric-cnpj.md): 50 characters — cMun (7),
// ambGer (1), tpInsc (1: CPF, 2: CNPJ), the emitente's CPF/CNPJ (14; since IN RFB 2.229/2024 a CNPJ may
// hold upper-case letters), nNFSe (13), AAMM (4), a random code (9) and a mod-11 check digit over the first
// 49, each character counting its code − 48 (the CNPJ rule; digits keep their value). No official formula
// is published; it is the one every real chave checked so far satisfies. The XSD's TSChaveNFSe pattern puts
// the letters at 7–20, against its own layout: the letters are accepted where the CNPJ is, at 10–23.
import { mod11CheckDigit } from "../tax-id/index.js";

export { mod11CheckDigit as mod11Dv };

/** Letters only inside the inscrição (10–23); everything else digits. */
const CHAVE_SHAPE = /^[0-9]{9}[0-9A-Z]{14}[0-9]{27}$/;

/**
 * Why `chave` is not a valid chave de acesso, in words fit for an error message, or undefined when it is one
 * (shape, letters only in a CNPJ inscrição, check digit).
 */
export function chaveProblem(chave: string): string | undefined {
  const shape = chaveShapeProblem(chave);
  if (shape) return shape;
  if (chave[8] !== "2" && /[A-Z]/.test(chave.slice(9, 23))) return "has letters in a CPF inscrição (tpInsc is not 2)";
  if (mod11CheckDigit(chave.slice(0, 49)) !== Number(chave[49])) return "has a wrong check digit (mod 11)";
  return undefined;
}

/** Why `chave` does not have the chave's shape (DV not checked), or undefined. */
export function chaveShapeProblem(chave: string): string | undefined {
  if (chave.length !== 50) return `must be 50 characters, got ${chave.length}`;
  if (CHAVE_SHAPE.test(chave)) return undefined;
  if (/[a-z]/.test(chave)) return "has lower-case letters (only upper-case A-Z, in the CNPJ at positions 10-23)";
  return "must be digits, with upper-case letters only in the CNPJ at positions 10-23";
}

/** True for a chave of the right shape whose check digit is right. */
export function isValidChave(chave: string): boolean {
  return chaveProblem(chave) === undefined;
}

/**
 * True for the chave's shape, DV not checked: what ingest accepts (the raw XML is the source of truth, and a
 * note is better stored with a dubious DV than held back).
 */
export function isChaveShaped(chave: string): boolean {
  return CHAVE_SHAPE.test(chave);
}

export interface ChaveParts {
  /** IBGE code of the emitter's municipality, 7 digits. */
  cMun: string;
  /** 1 = municipal own system, 2 = Sefin Nacional. */
  ambGer: 1 | 2;
  /** 1 = CPF, 2 = CNPJ. */
  tpInsc: 1 | 2;
  /** CNPJ (14, possibly alphanumeric) or CPF (11, left-padded to 14). */
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
  if (!CHAVE_SHAPE.test(`${body}0`)) throw new Error("chave parts do not make 49 characters of the chave's shape");
  return body + String(mod11CheckDigit(body));
}
