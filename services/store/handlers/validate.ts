// Request field checks shared by the handlers: each failure is INVALID_ARGUMENT naming the field.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Date as ProtoDate } from "../../../libs/gen/malha/common/v1/common_pb.js";
import type { NsuRange } from "../../../libs/gen/malha/nfse/v1/feed_pb.js";
import { chaveShapeProblem } from "../../../libs/adn/chave.js";
import { cnpjProblem, isCnpjShaped, stripTaxIdMask } from "../../../libs/tax-id/index.js";
import { badRequest } from "../errors.js";
import { parseIbge, type Ibge } from "../ibge.js";
import { toSqlDate } from "../mapping/columns.js";

export function requiredText(value: string, field: string, maxChars: number): string {
  const trimmed = value.trim();
  if (trimmed === "") throw badRequest(`${field} is required`);
  if (Array.from(trimmed).length > maxChars) throw badRequest(`${field} is longer than ${maxChars} characters`);
  return trimmed;
}

export function optionalText(value: string, field: string, maxChars: number): string {
  if (Array.from(value).length > maxChars) throw badRequest(`${field} is longer than ${maxChars} characters`);
  return value;
}

export function optionalIbge(value: string): Ibge | undefined {
  return value === "" ? undefined : parseIbge(value);
}

export function requiredTime(ts: Timestamp | undefined, field: string): Date {
  if (!ts) throw badRequest(`${field} is required`);
  return timestampDate(ts);
}

export function optionalTime(ts: Timestamp | undefined): Date | undefined {
  return ts ? timestampDate(ts) : undefined;
}

/** A chave as stored: its shape (letters only in the CNPJ); the DV is not checked, as at ingest (decision 0015). */
export function chave(value: string, field = "chave"): string {
  const problem = chaveShapeProblem(value);
  if (problem) throw badRequest(`${field} ${problem}`);
  return value;
}

export function optionalChave(value: string, field = "chave"): string | undefined {
  return value === "" ? undefined : chave(value, field);
}

export function nsuRange(range: NsuRange | undefined, field: string): { start?: bigint; end?: bigint } {
  const start = range?.start;
  const end = range?.end;
  if (start !== undefined && end !== undefined && start > end) throw badRequest(`${field}.start is after ${field}.end`);
  return { ...(start !== undefined ? { start } : {}), ...(end !== undefined ? { end } : {}) };
}

export function protoDate(date: ProtoDate | undefined, field: string): string | undefined {
  if (!date) return undefined;
  const sql = toSqlDate(date);
  if (sql === null) throw badRequest(`${field} is not a valid date`);
  return sql;
}

/**
 * A CPF (11 digits) or CNPJ (14, alphanumeric since 2026) goes to the indexed *_documento column; anything
 * else is a foreign NIF — except what is plainly a CNPJ or CPF written wrongly (lower-case letters, a mask),
 * which is refused with the reason rather than searched for as a NIF that no note has.
 */
export function partyDocument<P extends "prestador" | "tomador" | "destinatario">(
  value: string,
  party: P,
): { column: `${P}_documento` | `${P}_nif`; value: string } | undefined {
  if (value === "") return undefined;
  if (/^[0-9]{11}$/.test(value) || isCnpjShaped(value)) return { column: `${party}_documento`, value };
  if (/^[0-9a-zA-Z]{12}[0-9]{2}$/.test(value)) throw badRequest(`${party}_document ${cnpjProblem(value)}`);
  if (stripTaxIdMask(value) !== value && /^[0-9A-Za-z]{11,14}$/.test(stripTaxIdMask(value))) {
    throw badRequest(`${party}_document must be written without punctuation (${JSON.stringify(stripTaxIdMask(value))})`);
  }
  if (Array.from(value).length > 40) throw badRequest(`${party}_document is longer than 40 characters`);
  return { column: `${party}_nif`, value };
}
