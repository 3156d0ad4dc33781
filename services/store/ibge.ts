// IBGE municipality codes are the only thing that ever becomes part of an SQL identifier, so they are
// checked here, once, and table names can only be built from the branded result.
import { invalidIbge } from "./errors.js";

/** IBGE prefix (the UF's IBGE code) → state abbreviation. */
export const UF_BY_PREFIX: Readonly<Record<string, string>> = {
  "11": "RO",
  "12": "AC",
  "13": "AM",
  "14": "RR",
  "15": "PA",
  "16": "AP",
  "17": "TO",
  "21": "MA",
  "22": "PI",
  "23": "CE",
  "24": "RN",
  "25": "PB",
  "26": "PE",
  "27": "AL",
  "28": "SE",
  "29": "BA",
  "31": "MG",
  "32": "ES",
  "33": "RJ",
  "35": "SP",
  "41": "PR",
  "42": "SC",
  "43": "RS",
  "50": "MS",
  "51": "MT",
  "52": "GO",
  "53": "DF",
};

declare const validIbge: unique symbol;
/** A string that passed parseIbge: seven ASCII digits with a known UF prefix. */
export type Ibge = string & { readonly [validIbge]: true };

// `\d` would also match other Unicode digits only with the u flag; spell the ASCII range out anyway.
const IBGE_PATTERN = /^[0-9]{7}$/;

export function parseIbge(value: string): Ibge {
  if (!IBGE_PATTERN.test(value)) throw invalidIbge(value, "expected exactly 7 digits");
  if (UF_BY_PREFIX[value.slice(0, 2)] === undefined) throw invalidIbge(value, `unknown UF prefix ${value.slice(0, 2)}`);
  return value as Ibge;
}

export function ufOf(ibge: Ibge): string {
  return UF_BY_PREFIX[ibge.slice(0, 2)]!;
}

export interface MunicipalityTables {
  documentos: string;
  eventos: string;
}

/** Backquoted table names of a municipality; only a parsed Ibge gets here. */
export function municipalityTables(ibge: Ibge): MunicipalityTables {
  // Re-checked on purpose: a cast elsewhere must not be able to smuggle text into an identifier.
  if (!IBGE_PATTERN.test(ibge)) throw invalidIbge(ibge, "expected exactly 7 digits");
  return { documentos: `\`nfse_documentos_${ibge}\``, eventos: `\`nfse_eventos_${ibge}\`` };
}
