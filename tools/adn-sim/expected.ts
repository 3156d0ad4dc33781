// The simulator's facts in the proto3 JSON shape of malha.nfse.v1.Document / Event (enums as integers,
// empty values dropped), so tests can compare the gateway's typed output with what was generated.
import { tipoEventoOf } from "../../libs/adn/event-codes.js";
import type { EventFacts, NoteFacts, PartyFacts, TaxIdFacts } from "./model.js";

/** Drops "", 0, false, undefined and empty objects recursively (proto3 JSON omits defaults). */
export function compact(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(compact);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const c = compact(v);
      if (
        c === "" ||
        c === 0 ||
        c === false ||
        c === undefined ||
        (c && typeof c === "object" && !Array.isArray(c) && Object.keys(c).length === 0)
      )
        continue;
      out[k] = c;
    }
    return out;
  }
  return value;
}

const utc = (iso: string) => new Date(iso).toISOString().replace(".000Z", "Z");
const cents = (v: bigint | undefined) => (v === undefined ? undefined : v.toString());
const taxId = (t: TaxIdFacts) => ({ kind: t.kind === "CNPJ" ? 1 : 2, number: t.number });

function party(p: PartyFacts | undefined) {
  if (!p) return undefined;
  return { document: taxId(p.doc), name: p.name, inscricaoMunicipal: p.im.trim(), codigoMunicipio: p.cMun, uf: p.uf };
}

export function expectedDocumentJson(n: NoteFacts): unknown {
  const [year, month, day] = n.dCompet.split("-").map(Number);
  return compact({
    chave: n.chave,
    numero: n.numero,
    versao: n.versao,
    cStat: n.cStat,
    dhProc: utc(n.dhProc),
    dhEmi: utc(n.dhEmi),
    competencia: { year, month, day },
    emitente: party(n.emitente),
    prestador: party(n.prestador),
    tomador: party(n.tomador),
    intermediario: party(n.intermediario),
    codigoMunicipioEmissor: n.cLocEmi,
    nomeMunicipioEmissor: n.xLocEmi,
    codigoLocalPrestacao: n.cLocPrestacao,
    nomeLocalPrestacao: n.xLocPrestacao,
    codigoMunicipioIncidencia: n.cLocIncid,
    nomeMunicipioIncidencia: n.xLocIncid,
    servico: { cTribNac: n.cTribNac, cTribMun: n.cTribMun, cNbs: n.cNBS, descricao: n.xDescServ, xTribNac: n.xTribNac },
    valores: {
      vServCents: cents(n.vServ),
      vBcCents: cents(n.vBC),
      aliquotaBps: n.pAliqBps,
      vIssqnCents: cents(n.vISSQN),
      vTotalRetCents: cents(n.vTotalRet),
      vLiqCents: cents(n.vLiq),
      tribIssqn: n.tribISSQN,
      tpRetIssqn: n.tpRetISSQN,
    },
    tpAmb: n.tpAmb,
    ambGer: n.ambGer,
    tpEmis: n.tpEmis,
    tpEmit: n.tpEmit,
    serie: n.serie,
    nDps: n.nDPS,
    nDfse: n.nDFSe,
    opSimpNac: n.opSimpNac,
    chaveSubstituida: n.chSubstda,
    cMotivoSubstituicao: n.cMotivoSubst,
    destinatario: party(n.ibsCbs?.destinatario),
    ibsCbs: n.ibsCbs && {
      codigoLocalidadeIncidencia: n.ibsCbs.cLocalidadeIncid,
      vTotNfCents: cents(n.ibsCbs.vTotNF),
      finNfse: n.ibsCbs.finNFSe,
      ...(n.ibsCbs.full && {
        vBcCents: cents(n.ibsCbs.full.vBC),
        aliquotaIbsUfPpm: n.ibsCbs.full.pIBSUF,
        aliquotaEfetivaIbsUfPpm: n.ibsCbs.full.pIBSUF,
        aliquotaIbsMunPpm: n.ibsCbs.full.pIBSMun,
        aliquotaEfetivaIbsMunPpm: n.ibsCbs.full.pIBSMun,
        aliquotaCbsPpm: n.ibsCbs.full.pCBS,
        aliquotaEfetivaCbsPpm: n.ibsCbs.full.pCBS,
        vIbsUfCents: cents(n.ibsCbs.full.vIBSUF),
        vIbsMunCents: cents(n.ibsCbs.full.vIBSMun),
        vIbsTotalCents: cents(n.ibsCbs.full.vIBSUF + n.ibsCbs.full.vIBSMun),
        vCbsCents: cents(n.ibsCbs.full.vCBS),
        cst: n.ibsCbs.full.cst,
        cClassTrib: n.ibsCbs.full.cClassTrib,
        cIndOp: n.ibsCbs.full.cIndOp,
      }),
    },
  });
}

export function expectedEventJson(e: EventFacts): unknown {
  return compact({
    id: e.id,
    chave: e.chave,
    codigo: e.codigo,
    tipo: tipoEventoOf(e.codigo),
    nSeqEvento: e.nSeqEvento,
    dhEvento: utc(e.dhEvento),
    dhProc: utc(e.dhProc),
    versao: e.versao,
    ambGer: e.ambGer,
    tpAmb: e.tpAmb,
    nDfse: e.nDFSe === "0" ? "0" : e.nDFSe,
    autor: taxId(e.autor),
    cMotivo: e.cMotivo,
    xMotivo: e.xMotivo,
    chaveSubstituta: e.chSubstituta,
    codEventoBloqueado: e.codEvento,
    cpfAgenteTributario: e.cpfAgTrib,
    nProcAdm: e.nProcAdm,
    xProcAdm: e.xProcAdm,
    idEventoRejeicao: e.idEvManifRej,
    idBloqueioOficio: e.idBloqOfic,
    xDesc: e.xDesc,
  });
}
