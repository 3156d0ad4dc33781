// NFS-e layouts 1.00 and 1.01 (adn.md §4; IBS/CBS of NT 004 v2.0) → Document, leniently: only the chave is
// required; every other index field is read where either version puts it and left empty when absent. A
// value that is present but beyond the layout's limits is a fault naming it (fields.ts).
import { type Document, DocumentStatus, type IbsCbs, type Party, type Valores } from "../gen/malha/nfse/v1/document_pb.js";
import { chaveShapeProblem } from "./chave.js";
import {
  asciiCode,
  digitsCode,
  FieldError,
  intCode,
  limitedText,
  optionalBps,
  optionalCents,
  optionalDate,
  optionalDateTime,
  optionalPpm,
  taxId,
  versaoOf,
} from "./fields.js";
import { attr, child, text, type XmlNode } from "./xml-tree.js";

/** A party element at `path`; `emit` uses `enderNac`, DPS parties use `end/endNac`. Undefined when absent. */
function party(node: XmlNode | undefined, path: string): Party | undefined {
  if (!node) return undefined;
  const address = child(node, "enderNac") ?? child(node, "end", "endNac");
  const addressPath = child(node, "enderNac") ? `${path}/enderNac` : `${path}/end/endNac`;
  const document = taxId(node, path);
  return {
    $typeName: "malha.nfse.v1.Party",
    document,
    name: limitedText(node, `${path}/xNome`, 300, "xNome"),
    inscricaoMunicipal: asciiCode(node, `${path}/IM`, 15, "IM"),
    codigoMunicipio: digitsCode(address, `${addressPath}/cMun`, [7], "cMun"),
    uf: asciiCode(address, `${addressPath}/UF`, 2, "UF"),
  };
}

/** IBS/CBS of layout 1.01: the note's computed group and the DPS's classification; undefined when both are absent. */
function ibsCbs(inf: XmlNode, dps: XmlNode | undefined): IbsCbs | undefined {
  const nota = child(inf, "IBSCBS");
  const declarado = child(dps, "IBSCBS");
  if (!nota && !declarado) return undefined;
  const valores = child(nota, "valores");
  const tot = child(nota, "totCIBS");
  const trib = child(declarado, "valores", "trib", "gIBSCBS");
  const at = (p: string) => `IBSCBS/${p}`;
  return {
    $typeName: "malha.nfse.v1.IbsCbs",
    codigoLocalidadeIncidencia: digitsCode(nota, at("cLocalidadeIncid"), [7], "cLocalidadeIncid"),
    vBcCents: optionalCents(valores, at("valores/vBC"), "vBC"),
    aliquotaIbsUfPpm: optionalPpm(valores, at("valores/uf/pIBSUF"), "uf", "pIBSUF"),
    aliquotaEfetivaIbsUfPpm: optionalPpm(valores, at("valores/uf/pAliqEfetUF"), "uf", "pAliqEfetUF"),
    aliquotaIbsMunPpm: optionalPpm(valores, at("valores/mun/pIBSMun"), "mun", "pIBSMun"),
    aliquotaEfetivaIbsMunPpm: optionalPpm(valores, at("valores/mun/pAliqEfetMun"), "mun", "pAliqEfetMun"),
    aliquotaCbsPpm: optionalPpm(valores, at("valores/fed/pCBS"), "fed", "pCBS"),
    aliquotaEfetivaCbsPpm: optionalPpm(valores, at("valores/fed/pAliqEfetCBS"), "fed", "pAliqEfetCBS"),
    vIbsUfCents: optionalCents(tot, at("totCIBS/gIBS/gIBSUFTot/vIBSUF"), "gIBS", "gIBSUFTot", "vIBSUF"),
    vIbsMunCents: optionalCents(tot, at("totCIBS/gIBS/gIBSMunTot/vIBSMun"), "gIBS", "gIBSMunTot", "vIBSMun"),
    vIbsTotalCents: optionalCents(tot, at("totCIBS/gIBS/vIBSTot"), "gIBS", "vIBSTot"),
    vCbsCents: optionalCents(tot, at("totCIBS/gCBS/vCBS"), "gCBS", "vCBS"),
    vTotNfCents: optionalCents(tot, at("totCIBS/vTotNF"), "vTotNF"),
    cst: asciiCode(trib, "DPS/infDPS/IBSCBS/valores/trib/gIBSCBS/CST", 3, "CST"),
    cClassTrib: asciiCode(trib, "DPS/infDPS/IBSCBS/valores/trib/gIBSCBS/cClassTrib", 6, "cClassTrib"),
    cIndOp: asciiCode(declarado, "DPS/infDPS/IBSCBS/cIndOp", 6, "cIndOp"),
    finNfse: intCode(declarado, "DPS/infDPS/IBSCBS/finNFSe", "finNFSe"),
  };
}

/**
 * `root` is the `NFSe` element. Elements the parser does not know (new groups of NT 007/009, renamed
 * fields) are never read and never fail a note; the raw XML keeps them.
 */
export function parseNfse(root: XmlNode): Document {
  const inf = child(root, "infNFSe");
  if (!inf) throw new FieldError("infNFSe", "is missing", "missing");
  const id = attr(inf, "Id");
  const chave = id.replace(/^NFS/, "");
  const chaveFault = id.startsWith("NFS") ? chaveShapeProblem(chave) : "does not start with NFS";
  if (chaveFault) throw new FieldError("infNFSe/@Id", `is not NFS + a chave: the chave ${chaveFault}`, "missing");
  const dps = child(inf, "DPS", "infDPS");
  const serv = child(dps, "serv");
  const tribMun = child(dps, "valores", "trib", "tribMun");
  const dhProc = optionalDateTime(inf, "dhProc", "dhProc");
  const dhEmi = optionalDateTime(dps, "DPS/infDPS/dhEmi", "dhEmi");
  const competencia = optionalDate(dps, "DPS/infDPS/dCompet", "dCompet");
  const emitente = party(child(inf, "emit"), "emit");
  const prestador = party(child(dps, "prest"), "DPS/infDPS/prest");
  const tomador = party(child(dps, "toma"), "DPS/infDPS/toma");
  const intermediario = party(child(dps, "interm"), "DPS/infDPS/interm");
  const destinatario = party(child(dps, "IBSCBS", "dest"), "DPS/infDPS/IBSCBS/dest");
  const ibs = ibsCbs(inf, dps);
  const chaveSubstituida = text(dps, "subst", "chSubstda");
  const substFault = chaveSubstituida ? chaveShapeProblem(chaveSubstituida) : undefined;
  if (substFault) throw new FieldError("DPS/infDPS/subst/chSubstda", substFault);
  const valores: Valores = {
    $typeName: "malha.nfse.v1.Valores",
    vServCents: optionalCents(dps, "DPS/infDPS/valores/vServPrest/vServ", "valores", "vServPrest", "vServ"),
    vBcCents: optionalCents(inf, "valores/vBC", "valores", "vBC"),
    aliquotaBps: optionalBps(inf, "valores/pAliqAplic", "valores", "pAliqAplic"),
    vIssqnCents: optionalCents(inf, "valores/vISSQN", "valores", "vISSQN"),
    vTotalRetCents: optionalCents(inf, "valores/vTotalRet", "valores", "vTotalRet"),
    vLiqCents: optionalCents(inf, "valores/vLiq", "valores", "vLiq"),
    tribIssqn: intCode(tribMun, "tribISSQN", "tribISSQN"),
    tpRetIssqn: intCode(tribMun, "tpRetISSQN", "tpRetISSQN"),
  };
  return {
    $typeName: "malha.nfse.v1.Document",
    chave,
    numero: asciiCode(inf, "nNFSe", 15, "nNFSe"),
    versao: versaoOf(root, "NFSe/@versao"),
    cStat: intCode(inf, "cStat", "cStat"),
    dhProc,
    dhEmi,
    competencia,
    emitente,
    prestador,
    tomador,
    intermediario,
    destinatario,
    ibsCbs: ibs,
    codigoMunicipioEmissor: digitsCode(dps, "DPS/infDPS/cLocEmi", [7], "cLocEmi"),
    nomeMunicipioEmissor: text(inf, "xLocEmi"),
    codigoLocalPrestacao: digitsCode(serv, "DPS/infDPS/serv/locPrest/cLocPrestacao", [7], "locPrest", "cLocPrestacao"),
    codigoPaisPrestacao: asciiCode(serv, "DPS/infDPS/serv/locPrest/cPaisPrestacao", 2, "locPrest", "cPaisPrestacao"),
    nomeLocalPrestacao: text(inf, "xLocPrestacao"),
    codigoMunicipioIncidencia: digitsCode(inf, "cLocIncid", [7], "cLocIncid"),
    nomeMunicipioIncidencia: text(inf, "xLocIncid"),
    servico: {
      $typeName: "malha.nfse.v1.Servico",
      cTribNac: asciiCode(serv, "DPS/infDPS/serv/cServ/cTribNac", 6, "cServ", "cTribNac"),
      cTribMun: asciiCode(serv, "DPS/infDPS/serv/cServ/cTribMun", 3, "cServ", "cTribMun"),
      cNbs: asciiCode(serv, "DPS/infDPS/serv/cServ/cNBS", 9, "cServ", "cNBS"),
      descricao: limitedText(serv, "DPS/infDPS/serv/cServ/xDescServ", 2000, "cServ", "xDescServ"),
      xTribNac: text(inf, "xTribNac"),
    },
    valores,
    tpAmb: intCode(dps, "DPS/infDPS/tpAmb", "tpAmb"),
    ambGer: intCode(inf, "ambGer", "ambGer"),
    tpEmis: intCode(inf, "tpEmis", "tpEmis"),
    tpEmit: intCode(dps, "DPS/infDPS/tpEmit", "tpEmit"),
    serie: asciiCode(dps, "DPS/infDPS/serie", 5, "serie"),
    nDps: asciiCode(dps, "DPS/infDPS/nDPS", 15, "nDPS"),
    nDfse: asciiCode(inf, "nDFSe", 15, "nDFSe"),
    opSimpNac: intCode(dps, "opSimpNac", "prest", "regTrib", "opSimpNac"),
    chaveSubstituida,
    cMotivoSubstituicao: text(dps, "subst", "cMotivo"),
    // Derived by the store from the events, never read from the note (0034).
    status: DocumentStatus.UNSPECIFIED,
    chaveSubstituta: "",
  };
}
