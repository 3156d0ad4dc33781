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

/** Value of the first key matching one of `names` case-insensitively. */
function pick(obj: Json, ...names: string[]): unknown {
  const wanted = names.map((n) => n.toLowerCase());
  for (const name of wanted) {
    for (const key of Object.keys(obj)) if (key.toLowerCase() === name) return obj[key];
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
  const parametros = pick(o, "Parametros");
  return {
    codigo: str(pick(o, "Codigo")),
    descricao: str(pick(o, "Descricao")),
    complemento: str(pick(o, "Complemento")),
    parametros: Array.isArray(parametros) ? parametros.map(str) : [],
  };
}

function nsuOf(v: unknown): string | undefined {
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return String(v);
  if (typeof v === "string" && /^\d{1,20}$/.test(v.trim())) return BigInt(v.trim()).toString();
  return undefined;
}

function item(v: unknown): RawLoteItem {
  const o = isObject(v) ? v : {};
  const arquivo = pick(o, "ArquivoXml");
  const nsu = nsuOf(pick(o, "NSU"));
  const dh = optStr(pick(o, "DataHoraGeracao"));
  return {
    ...(nsu !== undefined ? { nsu } : {}),
    chaveAcesso: str(pick(o, "ChaveAcesso")),
    tipoDocumento: str(pick(o, "TipoDocumento")),
    tipoEvento: str(pick(o, "TipoEvento")),
    ...(typeof arquivo === "string" ? { arquivoXml: arquivo } : {}),
    ...(dh !== undefined ? { dataHoraGeracao: dh } : {}),
  };
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
  const status = str(pick(json, "StatusProcessamento")).toUpperCase();
  if (!status) throw new EnvelopeError("envelope has no StatusProcessamento");
  const tipoAmbiente = optStr(pick(json, "TipoAmbiente"));
  const dataHora = optStr(pick(json, "DataHoraProcessamento"));
  return {
    statusProcessamento: status,
    lote: list(pick(json, "LoteDFe")).map(item),
    alertas: list(pick(json, "Alertas", "Alerta")).map(message),
    erros: list(pick(json, "Erros", "Erro")).map(message),
    ...(tipoAmbiente !== undefined ? { tipoAmbiente: tipoAmbiente.toUpperCase() } : {}),
    versaoAplicativo: str(pick(json, "VersaoAplicativo")),
    ...(dataHora !== undefined ? { dataHoraProcessamento: dataHora } : {}),
  };
}
