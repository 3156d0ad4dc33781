// Stored NFS-e XML (layouts 1.00 and 1.01) and its events → what the DANFSe prints, as display strings.
// Parsing is libs/adn's, the one the sync uses: parseNfse validates the fields the store indexes, and
// the fields only the DANFSe prints are read from the same tree with the same field readers. A value the
// layout does not allow is a DanfseError naming its path; an absent one prints "-".
import { parseEvento } from "../adn/event-xml.js";
import { FieldError, optionalCents } from "../adn/fields.js";
import { parseNfse } from "../adn/nfse-xml.js";
import { child, parseXml, root, text, XmlError, type XmlNode } from "../adn/xml-tree.js";
import type { Document } from "../gen/malha/nfse/v1/document_pb.js";
import { DanfseError } from "./errors.js";
import type { DanfseEvent, DanfseInput } from "./index.js";
import * as f from "./format.js";

export interface Pessoa {
  documento: string;
  inscricaoMunicipal: string;
  nome: string;
  telefone: string;
  email: string;
  endereco: string;
  municipio: string;
}

export type Marca = "CANCELADA" | "SUBSTITUÍDA";

export interface Nota {
  chave: string;
  tpAmb: string;
  homologacao: boolean;
  ambGer: string;
  /** Undefined when the service item is 99 (NT 008 hides the municipality then). */
  municipioEmissor: string | undefined;
  numero: string;
  competencia: string;
  dhProc: string;
  dhEmi: string;
  nDps: string;
  serie: string;
  tpEmit: string;
  cStat: string;
  finNFSe: string;
  prestador: Pessoa;
  simplesNacional: string;
  regimeApuracaoSN: string;
  tomador: Pessoa | undefined;
  destinatario: Pessoa | undefined;
  destinatarioEhTomador: boolean;
  intermediario: Pessoa | undefined;
  servico: { cTribNac: string; cTribMun: string; cNbs: string; localPrestacao: string; descricao: string };
  issqn: {
    tributacao: string;
    incidencia: string;
    regimeEspecial: string;
    bc: string;
    aliquota: string;
    retencao: string;
    apurado: string;
  };
  federal: {
    irrf: string;
    cp: string;
    csll: string;
    retencaoPisCofins: string;
    /** PIS/COFINS own-debit lines print only for competência up to 2026 (NT 008). */
    pisCofins: { bc: string; pis: string; cofins: string; cst: string } | undefined;
  };
  ibsCbs:
    | {
        cstClassTrib: string;
        indOp: string;
        localidade: string;
        bc: string;
        aliqUf: string;
        aliqMun: string;
        aliqCbs: string;
        redutor: string;
        vUf: string;
        vMun: string;
        vIbs: string;
        vCbs: string;
      }
    | undefined;
  totais: {
    vServ: string;
    descIncond: string;
    descCond: string;
    retencoes: string;
    vLiq: string;
    ibsCbs: string;
    vTotNF: string;
  };
  /** Lei 12.741/2012 approximate taxes, one sentence. */
  tributosAproximados: string;
  complementares: string[];
  marca: Marca | undefined;
  /** CreationDate of the PDF: derived from the note, so the bytes depend on the input only. */
  instante: Date;
}

/** Paths some parseNfse faults give by element name only, to the full path under infNFSe. */
const SHORT_PATHS: Record<string, string> = {
  opSimpNac: "DPS/infDPS/prest/regTrib/opSimpNac",
  tribISSQN: "DPS/infDPS/valores/trib/tribMun/tribISSQN",
  tpRetISSQN: "DPS/infDPS/valores/trib/tribMun/tpRetISSQN",
};

function notePath(field: string): string {
  if (field.startsWith("NFSe")) return field;
  if (field.startsWith("infNFSe")) return `NFSe/${field}`;
  return `NFSe/infNFSe/${SHORT_PATHS[field] ?? field}`;
}

function asDanfseError(e: unknown, path: (field: string) => string): never {
  if (e instanceof FieldError) throw new DanfseError(path(e.field), e.message.slice(e.field.length + 1));
  if (e instanceof XmlError) throw new DanfseError(path(""), e.message);
  throw e;
}

const INF = "NFSe/infNFSe";
const DPS = `${INF}/DPS/infDPS`;

/** Amount at `path` (relative to `base`, whose full path is `basePath`); "-" when absent. */
function amount(base: XmlNode | undefined, basePath: string, path: string): bigint | undefined {
  return optionalCents(base, `${basePath}/${path}`, ...path.split("/"));
}

/** A percent field, checked for the layout's shape (3 integer digits, `decimals` decimals). */
function rate(base: XmlNode | undefined, basePath: string, path: string, decimals: 2 | 4): string {
  const raw = text(base, ...path.split("/"));
  if (raw === "") return f.EMPTY;
  const shape = decimals === 2 ? /^\d{1,3}(\.\d{1,2})?$/ : /^\d{1,3}(\.\d{1,4})?$/;
  if (!shape.test(raw)) throw new DanfseError(`${basePath}/${path}`, `is not a rate in percent with at most ${decimals} decimals`);
  return f.percent(raw);
}

/** Free text on one line: runs of whitespace (line ends included) become one space. */
const oneLine = (s: string) => s.replace(/\s+/g, " ").trim();

function pessoa(node: XmlNode, doc: Document["prestador"], fallback?: Pessoa): Pessoa {
  const end = child(node, "end") ?? child(node, "enderNac");
  const nac = child(end, "endNac") ?? end;
  const ext = child(end, "endExt");
  const kind = text(node, "CNPJ") ? "CNPJ" : text(node, "CPF") ? "CPF" : text(node, "NIF") ? "NIF" : text(node, "cNaoNIF") ? "cNaoNIF" : "";
  const documento = kind && doc?.document ? f.taxId(kind, doc.document.number) : "";
  const logradouro = [text(end, "xLgr"), text(end, "nro"), text(end, "xCpl"), text(end, "xBairro")].filter((s) => s !== "").join(", ");
  const cMun = text(nac, "cMun");
  const cepText = text(nac, "CEP");
  const municipio = ext
    ? [text(ext, "xCidade"), text(ext, "xEstProvReg"), text(ext, "cEndPost"), text(ext, "cPais")].filter((s) => s !== "").join(" / ")
    : [cMun ? `IBGE ${cMun}` : "", text(nac, "UF"), cepText ? `CEP ${f.cep(cepText)}` : ""].filter((s) => s !== "").join(" / ");
  const p: Pessoa = {
    documento: f.orEmpty(documento),
    inscricaoMunicipal: f.orEmpty(text(node, "IM")),
    nome: f.orEmpty(oneLine(text(node, "xNome"))),
    telefone: f.orEmpty(text(node, "fone")),
    email: f.orEmpty(text(node, "email")),
    endereco: f.orEmpty(oneLine(logradouro)),
    municipio: f.orEmpty(municipio),
  };
  if (!fallback) return p;
  // The DPS's prestador often carries only the document: the rest is the emitente's when they are the same.
  const keep = (k: keyof Pessoa) => (p[k] === f.EMPTY ? fallback[k] : p[k]);
  return {
    documento: keep("documento"),
    inscricaoMunicipal: keep("inscricaoMunicipal"),
    nome: keep("nome"),
    telefone: keep("telefone"),
    email: keep("email"),
    endereco: keep("endereco"),
    municipio: keep("municipio"),
  };
}

const CANCELAMENTO = new Set(["101101", "105104", "305101"]);
const SUBSTITUICAO = "105102";

function readEvents(events: DanfseEvent[], chave: string): { marca: Marca | undefined; linhas: string[] } {
  if (!Array.isArray(events)) throw new DanfseError("events", "is not a list");
  let cancelada = false;
  let substituida = false;
  const linhas: string[] = [];
  events.forEach((ev, i) => {
    const at = `events[${i}]`;
    if (!ev || typeof ev.tipo !== "string" || !/^\d{6}$/.test(ev.tipo))
      throw new DanfseError(`${at}/tipo`, "is not a 6-digit tpEvento code");
    if (!(ev.xml instanceof Uint8Array)) throw new DanfseError(`${at}/xml`, "is not bytes");
    let parsed: ReturnType<typeof parseEvento>;
    let dhProc: string;
    try {
      const top = root(parseXml(ev.xml));
      if (top?.name !== "evento") throw new DanfseError(`${at}/evento`, `is not the root element (found ${top?.name ?? "none"})`);
      parsed = parseEvento(top.node);
      // parseEvento keeps dhProc as an instant; the DANFSe prints the clock time the XML states.
      dhProc = text(top.node, "infEvento", "dhProc");
    } catch (e) {
      asDanfseError(e, (field) => (field ? `${at}/${field}` : `${at}/xml`));
    }
    if (parsed.codigo !== ev.tipo) throw new DanfseError(`${at}/tipo`, `is ${ev.tipo} but the event XML is e${parsed.codigo}`);
    if (parsed.chave !== chave) throw new DanfseError(`${at}/infPedReg/chNFSe`, `is ${parsed.chave}, not this note's chave`);
    const quando = dhProc ? ` em ${f.dateTime(dhProc)}` : "";
    if (ev.tipo === SUBSTITUICAO) {
      substituida = true;
      linhas.push(`NFS-e substituída${quando}${parsed.chaveSubstituta ? ` pela NFS-e de chave ${parsed.chaveSubstituta}` : ""}`);
    } else if (CANCELAMENTO.has(ev.tipo)) {
      cancelada = true;
      linhas.push(`NFS-e cancelada${quando} (evento e${ev.tipo})`);
    }
  });
  // A note replaced by another is cancelled by that substitution: the more specific mark wins.
  return { marca: substituida ? "SUBSTITUÍDA" : cancelada ? "CANCELADA" : undefined, linhas };
}

function tributosAproximados(trib: XmlNode | undefined, basePath: string): string {
  const tot = child(trib, "totTrib");
  const p = `${basePath}/totTrib`;
  let fed = f.EMPTY;
  let est = f.EMPTY;
  let mun = f.EMPTY;
  if (child(tot, "vTotTrib")) {
    fed = f.money(amount(tot, p, "vTotTrib/vTotTribFed"));
    est = f.money(amount(tot, p, "vTotTrib/vTotTribEst"));
    mun = f.money(amount(tot, p, "vTotTrib/vTotTribMun"));
  } else if (child(tot, "pTotTrib")) {
    fed = rate(tot, p, "pTotTrib/pTotTribFed", 2);
    est = rate(tot, p, "pTotTrib/pTotTribEst", 2);
    mun = rate(tot, p, "pTotTrib/pTotTribMun", 2);
  } else if (text(tot, "pTotTribSN")) {
    return `Totais aproximados dos tributos (Lei 12.741/2012): ${rate(tot, p, "pTotTribSN", 2)} (Simples Nacional)`;
  }
  return `Totais aproximados dos tributos (Lei 12.741/2012): Federais ${fed}; Estaduais ${est}; Municipais ${mun}`;
}

export function readNota(input: DanfseInput): Nota {
  if (!input || !(input.xml instanceof Uint8Array)) throw new DanfseError("xml", "is not bytes");
  let top: ReturnType<typeof root>;
  let doc: Document;
  try {
    top = root(parseXml(input.xml));
    if (top?.name !== "NFSe") throw new DanfseError("NFSe", `is not the root element (found ${top?.name ?? "none"})`);
    doc = parseNfse(top.node);
  } catch (e) {
    asDanfseError(e, (field) => (field ? notePath(field) : "xml"));
  }
  try {
    return build(top.node, doc, input.events);
  } catch (e) {
    asDanfseError(e, notePath);
  }
}

function build(nfse: XmlNode, doc: Document, events: DanfseEvent[]): Nota {
  const inf = child(nfse, "infNFSe")!;
  const dps = child(inf, "DPS", "infDPS");
  const serv = child(dps, "serv");
  const valores = child(dps, "valores");
  const trib = child(valores, "trib");
  const tribFed = child(trib, "tribFed");
  const pisCofins = child(tribFed, "piscofins");
  const notaIbs = child(inf, "IBSCBS");
  const dpsIbs = child(dps, "IBSCBS");
  const v = doc.valores!;
  const status = readEvents(events, doc.chave);

  const emitNode = child(inf, "emit");
  if (!emitNode) throw new DanfseError(`${INF}/emit`, "is missing (the emitente is required)");
  const emitente = pessoa(emitNode, doc.emitente);
  const prestNode = child(dps, "prest");
  const sameAsEmit = !prestNode || doc.tpEmit === 1 || doc.prestador?.document?.number === doc.emitente?.document?.number;
  const prestador = prestNode ? pessoa(prestNode, doc.prestador, sameAsEmit ? emitente : undefined) : emitente;
  const tomaNode = child(dps, "toma");
  const intermNode = child(dps, "interm");
  const destNode = child(dpsIbs, "dest");

  const competencia = text(dps, "dCompet");
  const item = doc.servico?.cTribNac.slice(0, 2) ?? "";
  const emitUf = text(inf, "emit", "enderNac", "cMun") === doc.codigoMunicipioEmissor ? text(inf, "emit", "enderNac", "UF") : "";
  const incid = [doc.nomeMunicipioIncidencia, doc.codigoMunicipioIncidencia ? `IBGE ${doc.codigoMunicipioIncidencia}` : ""]
    .filter((s) => s !== "")
    .join(" - ");
  const local = [
    doc.nomeLocalPrestacao,
    doc.codigoLocalPrestacao ? `IBGE ${doc.codigoLocalPrestacao}` : "",
    doc.codigoPaisPrestacao ? `País ${doc.codigoPaisPrestacao}` : "",
  ]
    .filter((s) => s !== "")
    .join(" - ");

  const ibs = doc.ibsCbs;
  const vIbsTot = ibs?.vIbsTotalCents;
  const vCbs = ibs?.vCbsCents;
  const totalIbsCbs = vIbsTot === undefined && vCbs === undefined ? undefined : (vIbsTot ?? 0n) + (vCbs ?? 0n);
  const ibsPath = `${INF}/IBSCBS`;
  const pair = (a: string, b: string) => (a === f.EMPTY && b === f.EMPTY ? f.EMPTY : `${a} / ${b}`);

  const xOutInf = text(inf, "xOutInf") || text(inf, "valores", "xOutInf");
  const complementares = [
    ...status.linhas,
    doc.chaveSubstituida ? `Esta NFS-e substitui a NFS-e de chave ${doc.chaveSubstituida}` : "",
    oneLine(text(serv, "infoCompl", "xInfComp")),
    oneLine(xOutInf),
  ].filter((s) => s !== "");

  const ano = /^(\d{4})/.exec(competencia)?.[1];
  return {
    chave: doc.chave,
    tpAmb: f.code(text(dps, "tpAmb"), f.CODES.tpAmb),
    homologacao: doc.tpAmb === 2,
    ambGer: f.code(text(inf, "ambGer"), f.CODES.ambGer),
    municipioEmissor: item === "99" ? undefined : f.orEmpty([doc.nomeMunicipioEmissor, emitUf].filter((s) => s !== "").join(" - ")),
    numero: f.orEmpty(doc.numero),
    competencia: f.date(competencia),
    dhProc: f.dateTime(text(inf, "dhProc")),
    dhEmi: f.dateTime(text(dps, "dhEmi")),
    nDps: f.orEmpty(doc.nDps),
    serie: f.orEmpty(doc.serie),
    tpEmit: f.code(text(dps, "tpEmit"), f.CODES.tpEmit),
    cStat: f.code(text(inf, "cStat"), f.CODES.cStat),
    finNFSe: f.code(text(dpsIbs, "finNFSe"), f.CODES.finNFSe),
    prestador,
    simplesNacional: f.code(text(prestNode, "regTrib", "opSimpNac"), f.CODES.opSimpNac),
    regimeApuracaoSN: f.code(text(prestNode, "regTrib", "regApTribSN"), f.CODES.regApTribSN),
    tomador: tomaNode ? pessoa(tomaNode, doc.tomador) : undefined,
    destinatario: destNode ? pessoa(destNode, doc.destinatario) : undefined,
    destinatarioEhTomador: !destNode && text(dpsIbs, "indDest") === "0" && tomaNode !== undefined,
    intermediario: intermNode ? pessoa(intermNode, doc.intermediario) : undefined,
    servico: {
      cTribNac: f.orEmpty(
        [f.cTribNac(doc.servico?.cTribNac ?? ""), oneLine(doc.servico?.xTribNac ?? "")].filter((s) => s !== "").join(" - "),
      ),
      cTribMun: f.orEmpty(doc.servico?.cTribMun),
      cNbs: f.orEmpty(doc.servico?.cNbs),
      localPrestacao: f.orEmpty(local),
      descricao: f.orEmpty(doc.servico?.descricao),
    },
    issqn: {
      tributacao: f.code(text(trib, "tribMun", "tribISSQN"), f.CODES.tribISSQN),
      incidencia: f.orEmpty(incid),
      regimeEspecial: f.code(text(prestNode, "regTrib", "regEspTrib"), f.CODES.regEspTrib),
      bc: f.money(v.vBcCents),
      aliquota: rate(inf, INF, "valores/pAliqAplic", 2),
      retencao: f.code(text(trib, "tribMun", "tpRetISSQN"), f.CODES.tpRetISSQN),
      apurado: f.money(v.vIssqnCents),
    },
    federal: {
      irrf: f.money(amount(tribFed, `${DPS}/valores/trib/tribFed`, "vRetIRRF")),
      cp: f.money(amount(tribFed, `${DPS}/valores/trib/tribFed`, "vRetCP")),
      csll: f.money(amount(tribFed, `${DPS}/valores/trib/tribFed`, "vRetCSLL")),
      retencaoPisCofins: f.code(text(pisCofins, "tpRetPisCofins"), f.CODES.tpRetPisCofins),
      pisCofins:
        ano !== undefined && Number(ano) > 2026
          ? undefined
          : {
              bc: f.money(amount(pisCofins, `${DPS}/valores/trib/tribFed/piscofins`, "vBCPisCofins")),
              pis: f.money(amount(pisCofins, `${DPS}/valores/trib/tribFed/piscofins`, "vPis")),
              cofins: f.money(amount(pisCofins, `${DPS}/valores/trib/tribFed/piscofins`, "vCofins")),
              cst: f.orEmpty(text(pisCofins, "CST")),
            },
    },
    ibsCbs:
      ibs === undefined
        ? undefined
        : {
            cstClassTrib: pair(f.orEmpty(ibs.cst), f.orEmpty(ibs.cClassTrib)),
            indOp: f.orEmpty(ibs.cIndOp),
            localidade: f.orEmpty(ibs.codigoLocalidadeIncidencia ? `IBGE ${ibs.codigoLocalidadeIncidencia}` : ""),
            bc: f.money(ibs.vBcCents),
            aliqUf: pair(rate(notaIbs, ibsPath, "valores/uf/pIBSUF", 4), rate(notaIbs, ibsPath, "valores/uf/pAliqEfetUF", 4)),
            aliqMun: pair(rate(notaIbs, ibsPath, "valores/mun/pIBSMun", 4), rate(notaIbs, ibsPath, "valores/mun/pAliqEfetMun", 4)),
            aliqCbs: pair(rate(notaIbs, ibsPath, "valores/fed/pCBS", 4), rate(notaIbs, ibsPath, "valores/fed/pAliqEfetCBS", 4)),
            redutor: rate(notaIbs, ibsPath, "pRedutor", 2),
            vUf: f.money(ibs.vIbsUfCents),
            vMun: f.money(ibs.vIbsMunCents),
            vIbs: f.money(ibs.vIbsTotalCents),
            vCbs: f.money(ibs.vCbsCents),
          },
    totais: {
      vServ: f.money(v.vServCents),
      descIncond: f.money(amount(valores, `${DPS}/valores`, "vDescCondIncond/vDescIncond")),
      descCond: f.money(amount(valores, `${DPS}/valores`, "vDescCondIncond/vDescCond")),
      retencoes: f.money(v.vTotalRetCents),
      vLiq: f.money(v.vLiqCents),
      ibsCbs: f.money(totalIbsCbs),
      vTotNF: f.money(ibs?.vTotNfCents),
    },
    tributosAproximados: tributosAproximados(trib, `${DPS}/valores/trib`),
    complementares,
    marca: status.marca,
    instante: instantOf(doc),
  };
}

/** dhProc of the note (else a fixed instant): the PDF's CreationDate, never the clock. */
function instantOf(doc: Document): Date {
  const s = doc.dhProc?.seconds;
  return new Date(s !== undefined ? Number(s) * 1000 : Date.UTC(2000, 0, 1));
}

/** Every string the page prints from the note, joined (to choose the font embedding, embed.ts). */
export function notaText(n: Nota): string {
  const out: string[] = [];
  const walk = (v: unknown): void => {
    if (typeof v === "string") out.push(v);
    else if (v && typeof v === "object" && !(v instanceof Date)) for (const x of Object.values(v)) walk(x);
  };
  walk(n);
  return out.join("");
}
