// Field readers shared by the document and event parsers. A field that is present but unparseable is a
// MISSING_FIELD fault naming the field; an absent optional field simply stays empty.
import { create } from "@bufbuild/protobuf";
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { TaxIdKind, TaxIdSchema, type Date as CalendarDate, type TaxId } from "../gen/malha/common/v1/common_pb.js";
import { parseAdnDate, parseAdnDateTime } from "./time.js";
import { text, type XmlNode } from "./xml-tree.js";

export class FieldError extends Error {
  override name = "FieldError";
  constructor(readonly field: string, problem: string) {
    super(`${field} ${problem}`);
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

/** "1000.00" → 100000n exactly; at most 2 decimals (the layout's TSDec*V2). */
export function optionalCents(node: XmlNode | undefined, field: string, ...path: string[]): bigint | undefined {
  const raw = text(node, ...path);
  if (!raw) return undefined;
  const m = /^(-?)(\d{1,15})(?:\.(\d{1,2}))?$/.exec(raw);
  if (!m) throw new FieldError(field, "is not an amount with at most 2 decimals");
  const cents = BigInt(m[2]!) * 100n + BigInt((m[3] ?? "").padEnd(2, "0"));
  return m[1] ? -cents : cents;
}

/** "2.00" (percent) → 200 basis points. */
export function optionalBps(node: XmlNode | undefined, field: string, ...path: string[]): number | undefined {
  const cents = optionalCents(node, field, ...path);
  return cents === undefined ? undefined : Number(cents);
}

/** A small integer code (enum-like); 0 when absent. */
export function intCode(node: XmlNode | undefined, field: string, ...path: string[]): number {
  const raw = text(node, ...path);
  if (!raw) return 0;
  if (!/^\d{1,9}$/.test(raw)) throw new FieldError(field, "is not a numeric code");
  return Number(raw);
}

/** CNPJ | CPF | NIF | cNaoNIF child of a party node (or the given element names for authors). */
export function taxId(node: XmlNode | undefined, names = { cnpj: "CNPJ", cpf: "CPF" }): TaxId | undefined {
  const cnpj = text(node, names.cnpj);
  if (cnpj) return create(TaxIdSchema, { kind: TaxIdKind.CNPJ, number: cnpj.replace(/\D/g, "") });
  const cpf = text(node, names.cpf);
  if (cpf) return create(TaxIdSchema, { kind: TaxIdKind.CPF, number: cpf.replace(/\D/g, "") });
  const nif = text(node, "NIF");
  if (nif) return create(TaxIdSchema, { kind: TaxIdKind.NIF, number: nif });
  const naoNif = text(node, "cNaoNIF");
  if (naoNif) return create(TaxIdSchema, { kind: TaxIdKind.NAO_NIF, number: naoNif });
  return undefined;
}
