// Field readers shared by the document and event parsers. An absent optional field stays empty. A field
// that is present but unparseable, or beyond the layout's limits (the XSD's lengths and patterns, which
// the store's columns are sized to), is a fault naming the field: the note goes to quarantine whole, with
// its raw XML, instead of being stored with a value cut or dropped (docs/decisions/0016-poison-values.md).
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { TaxIdKind, type Date as CalendarDate, type TaxId } from "../gen/malha/common/v1/common_pb.js";
import { cnpjProblem, isCnpjShaped, stripTaxIdMask } from "../tax-id/index.js";
import { parseAdnDate, parseAdnDateTime } from "./time.js";
import { attr, text, type XmlNode } from "./xml-tree.js";

export type FieldFault = "missing" | "invalid";

export class FieldError extends Error {
  override name = "FieldError";
  /** "missing": the index cannot do without it; "invalid": present, but malformed or beyond the layout's limits. */
  readonly fault: FieldFault;
  constructor(
    readonly field: string,
    problem: string,
    fault: FieldFault = "invalid",
  ) {
    super(`${field} ${problem}`);
    this.fault = fault;
  }
}

export function optionalDateTime(node: XmlNode | undefined, field: string, ...path: string[]): Timestamp | undefined {
  const raw = text(node, ...path);
  if (!raw) return undefined;
  const ts = parseAdnDateTime(raw);
  if (!ts) throw new FieldError(field, "is not a date-time");
  return ts;
}

export function optionalDate(node: XmlNode | undefined, field: string, ...path: string[]): CalendarDate | undefined {
  const raw = text(node, ...path);
  if (!raw) return undefined;
  const d = parseAdnDate(raw);
  if (!d) throw new FieldError(field, "is not a date (AAAA-MM-DD)");
  return d;
}

/** Digits that keep an amount in cents below 2^53, so it can be added up as a number. */
const SAFE_INTEGER_DIGITS = 13;

/**
 * `-?\d{1,15}(\.\d{1,2})?` → cents, or undefined. Read by position rather than with a regular expression
 * and BigInt of each part: a document has a dozen amounts.
 */
export function parseCents(raw: string): bigint | undefined {
  const negative = raw.charCodeAt(0) === 45; // -
  const start = negative ? 1 : 0;
  let i = start;
  let whole = 0;
  for (; i < raw.length; i++) {
    const d = raw.charCodeAt(i) - 48;
    if (!(d >= 0 && d <= 9)) break;
    whole = whole * 10 + d;
  }
  const wholeDigits = i - start;
  if (wholeDigits < 1 || wholeDigits > 15) return undefined;
  let fraction = 0;
  if (i < raw.length) {
    if (raw.charCodeAt(i) !== 46) return undefined; // .
    const from = ++i;
    for (; i < raw.length; i++) {
      const d = raw.charCodeAt(i) - 48;
      if (!(d >= 0 && d <= 9)) return undefined;
      fraction = fraction * 10 + d;
    }
    if (i - from < 1 || i - from > 2) return undefined;
    if (i - from === 1) fraction *= 10;
  }
  const cents =
    wholeDigits <= SAFE_INTEGER_DIGITS
      ? BigInt(whole * 100 + fraction)
      : BigInt(raw.slice(start, start + wholeDigits)) * 100n + BigInt(fraction);
  return negative ? -cents : cents;
}

/** "1000.00" → 100000n exactly; at most 15 integer digits and 2 decimals (the layout's TSDec15V2). */
export function optionalCents(node: XmlNode | undefined, field: string, ...path: string[]): bigint | undefined {
  const raw = text(node, ...path);
  if (!raw) return undefined;
  const cents = parseCents(raw);
  if (cents === undefined) throw new FieldError(field, "is not an amount with at most 15 integer digits and 2 decimals");
  return cents;
}

const PERCENT = { 2: /^(\d{1,3})(?:\.(\d{1,2}))?$/, 4: /^(\d{1,3})(?:\.(\d{1,4}))?$/ } as const;

/** A percent with at most 3 integer digits and `decimals` decimals → an integer in units of 10^-decimals percent. */
function percentUnits(node: XmlNode | undefined, field: string, decimals: 2 | 4, path: string[]): number | undefined {
  const raw = text(node, ...path);
  if (!raw) return undefined;
  const m = PERCENT[decimals].exec(raw);
  if (!m) throw new FieldError(field, `is not a rate in percent with at most 3 integer digits and ${decimals} decimals`);
  return Number(m[1]) * 10 ** decimals + Number((m[2] ?? "").padEnd(decimals, "0"));
}

/** "2.00" (percent) → 200 basis points. */
export function optionalBps(node: XmlNode | undefined, field: string, ...path: string[]): number | undefined {
  return percentUnits(node, field, 2, path);
}

/** "0.1000" (percent, 4 decimals: the IBS/CBS rates) → 1000 parts per million. */
export function optionalPpm(node: XmlNode | undefined, field: string, ...path: string[]): number | undefined {
  return percentUnits(node, field, 4, path);
}

/** A small integer code (enum-like); 0 when absent. */
export function intCode(node: XmlNode | undefined, field: string, ...path: string[]): number {
  const raw = text(node, ...path);
  if (!raw) return 0;
  if (!/^\d{1,9}$/.test(raw)) throw new FieldError(field, "is not a numeric code");
  return Number(raw);
}

/** Free text of at most `maxChars` characters (the XSD's length); "" when absent. */
export function limitedText(node: XmlNode | undefined, field: string, maxChars: number, ...path: string[]): string {
  const raw = text(node, ...path);
  // Length in code points, as the XSD and MySQL's VARCHAR count; the UTF-16 length bounds it from above.
  if (raw.length > maxChars && Array.from(raw).length > maxChars) {
    throw new FieldError(field, `is longer than ${maxChars} characters (${Array.from(raw).length})`);
  }
  return raw;
}

/** A code of printable ASCII of at most `maxChars` characters; "" when absent. */
export function asciiCode(node: XmlNode | undefined, field: string, maxChars: number, ...path: string[]): string {
  const raw = text(node, ...path);
  if (raw.length > maxChars) throw new FieldError(field, `is longer than ${maxChars} characters (${raw.length})`);
  if (!/^[\x20-\x7e]*$/.test(raw)) throw new FieldError(field, "has characters outside printable ASCII");
  return raw;
}

/** A code of exactly one of `lengths` digits (IBGE codes, cTribNac, cNBS); "" when absent. */
export function digitsCode(node: XmlNode | undefined, field: string, lengths: readonly number[], ...path: string[]): string {
  const raw = text(node, ...path);
  if (raw === "") return raw;
  if (!/^[0-9]+$/.test(raw) || !lengths.includes(raw.length)) throw new FieldError(field, `is not ${lengths.join(" or ")} digits`);
  return raw;
}

/**
 * CNPJ | CPF | NIF | cNaoNIF child of a party node (or the given element names for authors). A CNPJ keeps
 * its letters (alphanumeric since 2026); one of the wrong shape (lower case, wrong length) is a fault. Check
 * digits are not verified here, as for the chave: the ADN validated the note, and its XML is the source of
 * truth (docs/decisions/0015-alphanumeric-cnpj.md).
 */
const taxIdOf = (kind: TaxIdKind, number: string): TaxId => ({ $typeName: "malha.common.v1.TaxId", kind, number });

export function taxId(node: XmlNode | undefined, field: string, names = { cnpj: "CNPJ", cpf: "CPF" }): TaxId | undefined {
  const cnpjText = text(node, names.cnpj);
  if (cnpjText) {
    // Nearly every CNPJ arrives bare: strip a mask only when the text is not already one.
    const cnpj = isCnpjShaped(cnpjText) ? cnpjText : stripTaxIdMask(cnpjText);
    if (!isCnpjShaped(cnpj)) throw new FieldError(`${field}/${names.cnpj}`, cnpjProblem(cnpj) ?? "is not a CNPJ");
    return taxIdOf(TaxIdKind.CNPJ, cnpj);
  }
  const cpfText = text(node, names.cpf);
  if (cpfText) {
    const cpf = /^[0-9]{11}$/.test(cpfText) ? cpfText : stripTaxIdMask(cpfText);
    if (!/^[0-9]{11}$/.test(cpf)) throw new FieldError(`${field}/${names.cpf}`, "is not 11 digits");
    return taxIdOf(TaxIdKind.CPF, cpf);
  }
  const nif = limitedText(node, `${field}/NIF`, 40, "NIF");
  if (nif) return taxIdOf(TaxIdKind.NIF, nif);
  const naoNif = asciiCode(node, `${field}/cNaoNIF`, 1, "cNaoNIF");
  if (naoNif) return taxIdOf(TaxIdKind.NAO_NIF, naoNif);
  return undefined;
}

/** The root's `versao` attribute ("1.00", "1.01"); a fault when it could not be a layout version. */
export function versaoOf(root: XmlNode, field: string): string {
  const versao = attr(root, "versao");
  if (versao.length > 8 || !/^[\x20-\x7e]*$/.test(versao))
    throw new FieldError(field, "is not a layout version of at most 8 ASCII characters");
  return versao;
}
