// The ADN's JSON envelope `LoteDistribuicaoNSUResponse` (adn.md §2.1). The ADN sends PascalCase, Sefin
// camelCase, and clients in the wild meet `Erros`/`erros`/`erro`: keys are matched case-insensitively and
// a single object is accepted where a list is expected.

export type StatusProcessamento = "DOCUMENTOS_LOCALIZADOS" | "NENHUM_DOCUMENTO_LOCALIZADO" | "REJEICAO" | (string & {});

export interface AdnMessageJson {
  codigo: string;
  descricao: string;
  complemento: string;
  parametros: string[];
}

/** One `LoteDFe` entry as sent, before any decoding. */
export interface RawLoteItem {
  /** `NSU` as a decimal string; undefined when missing, null or not a non-negative integer. */
  nsu?: string;
  chaveAcesso: string;
  tipoDocumento: string;
  tipoEvento: string;
  /** `ArquivoXml` text exactly as received; undefined when absent or null. */
  arquivoXml?: string;
  dataHoraGeracao?: string;
}

export interface AdnEnvelope {
  statusProcessamento: StatusProcessamento;
  lote: RawLoteItem[];
  alertas: AdnMessageJson[];
  erros: AdnMessageJson[];
  tipoAmbiente?: string;
  versaoAplicativo: string;
  dataHoraProcessamento?: string;
}

export class EnvelopeError extends Error {
  override name = "EnvelopeError";
}

type Json = Record<string, unknown>;

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/**
 * An object's keys by their lower-case form, the first key of each form in key order: every field of an
 * entry is then one look-up instead of a lower-casing scan of all its keys (a visible share of a page's
 * decoding in the gateway's profile, bench/README.md).
 */
type Keys = Map<string, string>;

function keysOf(obj: Json): Keys {
  const keys: Keys = new Map();
  for (const key of Object.keys(obj)) {
    const lower = key.toLowerCase();
    if (!keys.has(lower)) keys.set(lower, key);
  }
  return keys;
}

/** Value of the first key matching one of `names` (given in lower case) case-insensitively. */
function pick(obj: Json, keys: Keys, ...names: string[]): unknown {
  for (const name of names) {
    const key = keys.get(name);
    if (key !== undefined) return obj[key];
  }
  return undefined;
}

function str(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return "";
}

function optStr(v: unknown): string | undefined {
  const s = str(v);
  return s === "" ? undefined : s;
}

function list(v: unknown): unknown[] {
  if (Array.isArray(v)) return v;
  if (isObject(v)) return [v];
  return [];
}

function message(v: unknown): AdnMessageJson {
  const o = isObject(v) ? v : {};
  const k = keysOf(o);
  const parametros = pick(o, k, "parametros");
  return {
    codigo: str(pick(o, k, "codigo")),
    descricao: str(pick(o, k, "descricao")),
    complemento: str(pick(o, k, "complemento")),
    parametros: Array.isArray(parametros) ? parametros.map(str) : [],
  };
}

function nsuOf(v: unknown): string | undefined {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === "string" && /^\d{1,20}$/.test(v.trim())) return BigInt(v.trim()).toString();
  return undefined;
}

/** The ADN's own spelling of an entry's keys (adn.md §2.1). */
const ITEM_KEYS = ["NSU", "ChaveAcesso", "TipoDocumento", "TipoEvento", "ArquivoXml", "DataHoraGeracao"] as const;

/**
 * The entry's fields by the ADN's spelling when the entry has no other key (then no other spelling can come
 * first); otherwise by the case-insensitive look-up. The fast path is the gateway's per-entry cost in a
 * bootstrap (bench/README.md).
 */
function itemFields(o: Json): unknown[] {
  const values: unknown[] = [];
  let exact = 0;
  for (const key of ITEM_KEYS) {
    values.push(o[key]);
    if (Object.hasOwn(o, key)) exact++;
  }
  let own = 0;
  for (const key in o) if (Object.hasOwn(o, key)) own++;
  if (own === exact) return values;
  const k = keysOf(o);
  return ITEM_KEYS.map((key) => pick(o, k, key.toLowerCase()));
}

function item(v: unknown): RawLoteItem {
  const [nsuValue, chave, tipoDocumento, tipoEvento, arquivo, dataHora] = itemFields(isObject(v) ? v : {});
  const out: RawLoteItem = { chaveAcesso: str(chave), tipoDocumento: str(tipoDocumento), tipoEvento: str(tipoEvento) };
  const nsu = nsuOf(nsuValue);
  if (nsu !== undefined) out.nsu = nsu;
  if (typeof arquivo === "string") out.arquivoXml = arquivo;
  const dh = optStr(dataHora);
  if (dh !== undefined) out.dataHoraGeracao = dh;
  return out;
}

/** Parses the body text; throws EnvelopeError when it is not a JSON object with `StatusProcessamento`. */
export function parseEnvelope(body: string): AdnEnvelope {
  let json: unknown;
  try {
    // NSU is an int64 sent as a JSON number: quote long ones before JSON.parse rounds them to a double.
    json = JSON.parse(body.replace(/^\uFEFF/, "").replace(/("NSU"\s*:\s*)(\d{16,})/gi, '$1"$2"'));
  } catch {
    throw new EnvelopeError("body is not JSON");
  }
  if (!isObject(json)) throw new EnvelopeError("body is not a JSON object");
  const k = keysOf(json);
  const status = str(pick(json, k, "statusprocessamento")).toUpperCase();
  if (!status) throw new EnvelopeError("envelope has no StatusProcessamento");
  const tipoAmbiente = optStr(pick(json, k, "tipoambiente"));
  const dataHora = optStr(pick(json, k, "datahoraprocessamento"));
  return {
    statusProcessamento: status,
    lote: list(pick(json, k, "lotedfe")).map(item),
    alertas: list(pick(json, k, "alertas", "alerta")).map(message),
    erros: list(pick(json, k, "erros", "erro")).map(message),
    ...(tipoAmbiente !== undefined ? { tipoAmbiente: tipoAmbiente.toUpperCase() } : {}),
    versaoAplicativo: str(pick(json, k, "versaoaplicativo")),
    ...(dataHora !== undefined ? { dataHoraProcessamento: dataHora } : {}),
  };
}
