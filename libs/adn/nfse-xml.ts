// NFS-e layouts 1.00 and 1.01 (adn.md §4) → Document, leniently: only the chave is required; every other
// index field is read where either version puts it and left empty when absent.
import { create } from "@bufbuild/protobuf";
import {
  DocumentSchema,
  PartySchema,
  ServicoSchema,
  ValoresSchema,
  type Document,
  type Party,
} from "../gen/malha/nfse/v1/document_pb.js";
import { isChaveShaped } from "./chave.js";
import { FieldError, intCode, optionalBps, optionalCents, optionalDate, optionalDateTime, taxId } from "./fields.js";
import { attr, child, text, type XmlNode } from "./xml-tree.js";

/** A party element; `emit` uses `enderNac`, DPS parties use `end/endNac`. Undefined when absent. */
function party(node: XmlNode | undefined): Party | undefined {
  if (!node) return undefined;
  const address = child(node, "enderNac") ?? child(node, "end", "endNac");
  const document = taxId(node);
  return create(PartySchema, {
    ...(document ? { document } : {}),
    name: text(node, "xNome"),
    inscricaoMunicipal: text(node, "IM"),
    codigoMunicipio: text(address, "cMun"),
    uf: text(address, "UF"),
  });
}

/** `root` is the `NFSe` element. */
export function parseNfse(root: XmlNode): Document {
  const inf = child(root, "infNFSe");
  if (!inf) throw new FieldError("infNFSe", "is missing");
  const id = attr(inf, "Id");
  const chave = id.replace(/^NFS/, "");
  if (!id.startsWith("NFS") || !isChaveShaped(chave)) throw new FieldError("infNFSe/@Id", "is not NFS + 50 digits");
  const dps = child(inf, "DPS", "infDPS");
  const serv = child(dps, "serv");
  const tribMun = child(dps, "valores", "trib", "tribMun");
  const dhProc = optionalDateTime(inf, "dhProc", "dhProc");
  const dhEmi = optionalDateTime(dps, "DPS/infDPS/dhEmi", "dhEmi");
  const competencia = optionalDate(dps, "DPS/infDPS/dCompet", "dCompet");
  const emitente = party(child(inf, "emit"));
  const prestador = party(child(dps, "prest"));
  const tomador = party(child(dps, "toma"));
  const intermediario = party(child(dps, "interm"));
  const valores = create(ValoresSchema, {
    vServCents: optionalCents(dps, "vServ", "valores", "vServPrest", "vServ"),
    vBcCents: optionalCents(inf, "vBC", "valores", "vBC"),
    aliquotaBps: optionalBps(inf, "pAliqAplic", "valores", "pAliqAplic"),
    vIssqnCents: optionalCents(inf, "vISSQN", "valores", "vISSQN"),
    vTotalRetCents: optionalCents(inf, "vTotalRet", "valores", "vTotalRet"),
    vLiqCents: optionalCents(inf, "vLiq", "valores", "vLiq"),
    tribIssqn: intCode(tribMun, "tribISSQN", "tribISSQN"),
    tpRetIssqn: intCode(tribMun, "tpRetISSQN", "tpRetISSQN"),
  });
  return create(DocumentSchema, {
    chave,
    numero: text(inf, "nNFSe"),
    versao: attr(root, "versao"),
    cStat: intCode(inf, "cStat", "cStat"),
    ...(dhProc ? { dhProc } : {}),
    ...(dhEmi ? { dhEmi } : {}),
    ...(competencia ? { competencia } : {}),
    ...(emitente ? { emitente } : {}),
    ...(prestador ? { prestador } : {}),
    ...(tomador ? { tomador } : {}),
    ...(intermediario ? { intermediario } : {}),
    codigoMunicipioEmissor: text(dps, "cLocEmi"),
    nomeMunicipioEmissor: text(inf, "xLocEmi"),
    codigoLocalPrestacao: text(serv, "locPrest", "cLocPrestacao"),
    codigoPaisPrestacao: text(serv, "locPrest", "cPaisPrestacao"),
    nomeLocalPrestacao: text(inf, "xLocPrestacao"),
    codigoMunicipioIncidencia: text(inf, "cLocIncid"),
    nomeMunicipioIncidencia: text(inf, "xLocIncid"),
    servico: create(ServicoSchema, {
      cTribNac: text(serv, "cServ", "cTribNac"),
      cTribMun: text(serv, "cServ", "cTribMun"),
      cNbs: text(serv, "cServ", "cNBS"),
      descricao: text(serv, "cServ", "xDescServ"),
      xTribNac: text(inf, "xTribNac"),
    }),
    valores,
    tpAmb: intCode(dps, "DPS/infDPS/tpAmb", "tpAmb"),
    ambGer: intCode(inf, "ambGer", "ambGer"),
    tpEmis: intCode(inf, "tpEmis", "tpEmis"),
    tpEmit: intCode(dps, "DPS/infDPS/tpEmit", "tpEmit"),
    serie: text(dps, "serie"),
    nDps: text(dps, "nDPS"),
    nDfse: text(inf, "nDFSe"),
    opSimpNac: intCode(dps, "opSimpNac", "prest", "regTrib", "opSimpNac"),
    chaveSubstituida: text(dps, "subst", "chSubstda"),
    cMotivoSubstituicao: text(dps, "subst", "cMotivo"),
  });
}
