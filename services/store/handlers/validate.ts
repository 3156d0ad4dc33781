// Request field checks shared by the handlers: each failure is INVALID_ARGUMENT naming the field.
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import type { Date as ProtoDate } from "../../../libs/gen/malha/common/v1/common_pb.js";
import type { NsuRange } from "../../../libs/gen/malha/nfse/v1/feed_pb.js";
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

export function chave(value: string, field = "chave"): string {
  if (!/^[0-9]{50}$/.test(value)) throw badRequest(`${field} must be 50 digits`);
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

/** CNPJ/CPF digits go to the indexed *_documento column, anything else is a foreign NIF. */
export function partyDocument<P extends "prestador" | "tomador">(
  value: string,
  party: P,
): { column: `${P}_documento` | `${P}_nif`; value: string } | undefined {
  if (value === "") return undefined;
  if (/^[0-9]{11}$|^[0-9]{14}$/.test(value)) return { column: `${party}_documento`, value };
  if (Array.from(value).length > 40) throw badRequest(`${party}_document is longer than 40 characters`);
  return { column: `${party}_nif`, value };
}
