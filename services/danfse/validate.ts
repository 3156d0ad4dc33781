// Request checks before anything is asked of the store: each refusal names the field.
import { Code } from "@connectrpc/connect";
import { chaveProblem } from "../../libs/adn/chave.js";
import type { Date as ProtoDate, DateRange } from "../../libs/gen/malha/common/v1/common_pb.js";
import { danfseError, invalidRange, quote } from "./errors.js";

export function checkIbge(ibge: string): string {
  if (!/^[0-9]{7}$/.test(ibge))
    throw danfseError(`ibge ${quote(ibge)} must be the 7-digit IBGE code of a municipality`, Code.InvalidArgument, "INVALID_IBGE", {
      field: "ibge",
    });
  return ibge;
}

export function checkChave(chave: string, field = "chave"): string {
  const problem = chaveProblem(chave);
  if (problem) throw danfseError(`${field} ${quote(chave)} ${problem}`, Code.InvalidArgument, "INVALID_CHAVE", { field });
  return chave;
}

export function checkChaves(chaves: readonly string[]): string[] {
  const seen = new Set<string>();
  chaves.forEach((c, i) => {
    checkChave(c, `chaves[${i}]`);
    if (seen.has(c)) throw danfseError(`chaves[${i}] repeats ${c}`, Code.InvalidArgument, "INVALID_CHAVE", { field: `chaves[${i}]` });
    seen.add(c);
  });
  return [...chaves];
}

const iso = (d: ProtoDate) => `${String(d.year).padStart(4, "0")}-${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")}`;

function checkDate(d: ProtoDate | undefined, field: string): ProtoDate {
  if (!d) throw invalidRange(`${field} is required`);
  const t = new Date(Date.UTC(d.year, d.month - 1, d.day));
  if (d.year < 1900 || t.getUTCFullYear() !== d.year || t.getUTCMonth() !== d.month - 1 || t.getUTCDate() !== d.day)
    throw invalidRange(`${field} ${iso(d)} is not a calendar date`);
  return d;
}

/** Both bounds, inclusive, start ≤ end. */
export function checkCompetencia(range: DateRange): { start: ProtoDate; end: ProtoDate } {
  const start = checkDate(range.start, "competencia_range.start");
  const end = checkDate(range.end, "competencia_range.end");
  if (iso(end) < iso(start)) throw invalidRange(`competencia_range.end ${iso(end)} is before competencia_range.start ${iso(start)}`);
  return { start, end };
}
