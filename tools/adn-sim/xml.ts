// Renders facts into NFS-e / event XML of layouts 1.00 and 1.01 (adn.md §4, §5, §7), with the quirks real
// documents have: pretty or compact, CR character references in the signature, padded IM, 1.00/1.01
// placement differences.
import type { EventFacts, NoteFacts, PartyFacts, TotTribFacts, TribFedFacts } from "./model.js";

const NS = "http://www.sped.fazenda.gov.br/nfse";

type Node = { name: string; attrs?: Record<string, string>; children?: Node[]; text?: string; raw?: string };

const esc = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const escAttr = (s: string) => esc(s).replace(/"/g, "&quot;");

function el(name: string, children: (Node | undefined)[] | string, attrs?: Record<string, string>): Node {
  return typeof children === "string"
    ? { name, text: children, ...(attrs ? { attrs } : {}) }
    : { name, children: children.filter((c): c is Node => c !== undefined), ...(attrs ? { attrs } : {}) };
}
/** An element only when its value is non-empty. */
function opt(name: string, value: string | undefined): Node | undefined {
  return value ? el(name, value) : undefined;
}

function render(node: Node, pretty: boolean, depth = 0): string {
  const pad = pretty ? "\n" + " ".repeat(depth) : "";
  const attrs = Object.entries(node.attrs ?? {})
    .map(([k, v]) => ` ${k}="${escAttr(v)}"`)
    .join("");
  if (node.raw !== undefined) return `${pad}${node.raw}`;
  if (node.text !== undefined) return `${pad}<${node.name}${attrs}>${esc(node.text)}</${node.name}>`;
  const inner = (node.children ?? []).map((c) => render(c, pretty, depth + 1)).join("");
  return `${pad}<${node.name}${attrs}>${inner}${pad}</${node.name}>`;
}

function signature(seed: string): Node {
  // Real municipal transcriptions carry CR references inside the signature value.
  const value = Buffer.from(seed.repeat(8)).toString("base64");
  return {
    name: "Signature",
    raw:
      `<Signature xmlns="http://www.w3.org/2000/09/xmldsig#"><SignedInfo><SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256"/></SignedInfo>` +
      `<SignatureValue>${value.slice(0, 60)}&#13;\n${value.slice(60)}</SignatureValue></Signature>`,
  };
}

function money(cents: bigint): string {
  const neg = cents < 0n;
  const abs = neg ? -cents : cents;
  return `${neg ? "-" : ""}${abs / 100n}.${String(abs % 100n).padStart(2, "0")}`;
}

/** Parts per million of the base → the layout's percent with 4 decimals ("0.1000"). */
function rate4(ppm: number): string {
  return `${Math.trunc(ppm / 10_000)}.${String(ppm % 10_000).padStart(4, "0")}`;
}

/** `infNFSe/IBSCBS`: locality and vTotNF always, the rates and amounts when the full group is given. */
function ibsCbsNota(n: NoteFacts): Node | undefined {
  const g = n.ibsCbs;
  if (!g) return undefined;
  const f = g.full;
  const extra = n.nt009 ? el("gTribSN", [el("pAliqSN", "6.00")]) : undefined;
  if (!f) return el("IBSCBS", [el("cLocalidadeIncid", g.cLocalidadeIncid), el("totCIBS", [el("vTotNF", money(g.vTotNF)), extra])]);
  return el("IBSCBS", [
    el("cLocalidadeIncid", g.cLocalidadeIncid),
    el("pRedutor", "0.00"),
    el("valores", [
      el("vBC", money(f.vBC)),
      el("uf", [el("pIBSUF", rate4(f.pIBSUF)), el("pAliqEfetUF", rate4(f.pIBSUF))]),
      el("mun", [el("pIBSMun", rate4(f.pIBSMun)), el("pAliqEfetMun", rate4(f.pIBSMun))]),
      el("fed", [el("pCBS", rate4(f.pCBS)), el("pAliqEfetCBS", rate4(f.pCBS))]),
    ]),
    el("totCIBS", [
      el("vTotNF", money(g.vTotNF)),
      el("gIBS", [
        el("vIBSTot", money(f.vIBSUF + f.vIBSMun)),
        el("gIBSUFTot", [el("vDifUF", "0.00"), el("vIBSUF", money(f.vIBSUF))]),
        el("gIBSMunTot", [el("vDifMun", "0.00"), el("vIBSMun", money(f.vIBSMun))]),
      ]),
      el("gCBS", [el("vDifCBS", "0.00"), el("vCBS", money(f.vCBS))]),
      extra,
    ]),
  ]);
}

/** `DPS/infDPS/IBSCBS`: purpose and final-consumer flags, and with the full group the operation, the destinatário and the classification. */
function ibsCbsDps(n: NoteFacts): Node | undefined {
  const g = n.ibsCbs;
  if (!g) return undefined;
  const f = g.full;
  return el("IBSCBS", [
    el("finNFSe", String(g.finNFSe)),
    el("indFinal", "0"),
    f ? el("cIndOp", f.cIndOp) : undefined,
    f ? el("indDest", g.destinatario ? "1" : "0") : undefined,
    dpsParty("dest", g.destinatario),
    f ? el("valores", [el("trib", [el("gIBSCBS", [el("CST", f.cst), el("cClassTrib", f.cClassTrib)])])]) : undefined,
  ]);
}

function taxIdNode(p: PartyFacts): Node {
  return el(p.doc.kind, p.doc.number);
}

function dpsParty(name: string, p: PartyFacts | undefined, extra: Node[] = []): Node | undefined {
  if (!p) return undefined;
  const e = p.endereco;
  return el(name, [
    taxIdNode(p),
    opt("IM", p.im),
    opt("xNome", p.name),
    p.cMun
      ? el("end", [
          el("endNac", [el("cMun", p.cMun), el("CEP", e?.cep ?? "01001000")]),
          el("xLgr", e?.xLgr ?? "RUA DOIS"),
          el("nro", e?.nro ?? "0"),
          opt("xCpl", e?.xCpl),
          el("xBairro", e?.xBairro ?? "CENTRO"),
        ])
      : undefined,
    opt("fone", p.fone),
    opt("email", p.email),
    ...extra,
  ]);
}

function tribFed(t: TribFedFacts | undefined): Node | undefined {
  if (!t) return undefined;
  const pc = t.piscofins;
  return el("tribFed", [
    pc
      ? el("piscofins", [
          el("CST", pc.cst),
          el("vBCPisCofins", money(pc.vBC)),
          el("pAliqPis", money(BigInt(pc.pPisBps))),
          el("pAliqCofins", money(BigInt(pc.pCofinsBps))),
          el("vPis", money(pc.vPis)),
          el("vCofins", money(pc.vCofins)),
          el("tpRetPisCofins", String(pc.tpRet)),
        ])
      : undefined,
    opt("vRetCP", t.vRetCP !== undefined ? money(t.vRetCP) : undefined),
    opt("vRetIRRF", t.vRetIRRF !== undefined ? money(t.vRetIRRF) : undefined),
    opt("vRetCSLL", t.vRetCSLL !== undefined ? money(t.vRetCSLL) : undefined),
  ]);
}

function totTrib(t: TotTribFacts | undefined): Node {
  if (!t) return el("totTrib", [el("indTotTrib", "0")]);
  if (t.kind === "valor")
    return el("totTrib", [
      el("vTotTrib", [el("vTotTribFed", money(t.fed)), el("vTotTribEst", money(t.est)), el("vTotTribMun", money(t.mun))]),
    ]);
  const pct = (bps: number) => money(BigInt(bps));
  return el("totTrib", [
    el("pTotTrib", [el("pTotTribFed", pct(t.fedBps)), el("pTotTribEst", pct(t.estBps)), el("pTotTribMun", pct(t.munBps))]),
  ]);
}

export function renderNote(n: NoteFacts): string {
  const v101 = n.versao === "1.01";
  const outInf = el("xOutInf", "Documento gerado pelo simulador do ADN");
  const valoresNfse = el("valores", [
    opt("vBC", n.vBC !== undefined ? money(n.vBC) : undefined),
    opt("pAliqAplic", n.pAliqBps !== undefined ? money(BigInt(n.pAliqBps)) : undefined),
    opt("vISSQN", n.vISSQN !== undefined ? money(n.vISSQN) : undefined),
    opt("vTotalRet", n.vTotalRet !== undefined ? money(n.vTotalRet) : undefined),
    // NT 009's renamed deduction field and its new adjustment: unknown to the parser, never a fault.
    n.nt009 ? el("vCalcAjusteBCISSQN", "0.00") : undefined,
    n.nt009 ? el("vAjusteBC", "0.00") : undefined,
    el("vLiq", money(n.vLiq)),
    v101 ? undefined : outInf,
  ]);
  const emit = n.emitente;
  const infDps = el(
    "infDPS",
    [
      el("tpAmb", String(n.tpAmb)),
      el("dhEmi", n.dhEmi),
      el("verAplic", "Simulador_1.0"),
      el("serie", n.serie),
      el("nDPS", n.nDPS),
      el("dCompet", n.dCompet),
      el("tpEmit", String(n.tpEmit)),
      el("cLocEmi", n.cLocEmi),
      n.chSubstda
        ? el("subst", [el("chSubstda", n.chSubstda), el("cMotivo", n.cMotivoSubst), el("xMotivo", "Substituicao por erro de valores")])
        : undefined,
      dpsParty("prest", n.prestador, [el("regTrib", [el("opSimpNac", String(n.opSimpNac)), el("regEspTrib", "0")])]),
      dpsParty("toma", n.tomador),
      dpsParty("interm", n.intermediario),
      el("serv", [
        el("locPrest", [el("cLocPrestacao", n.cLocPrestacao)]),
        el("cServ", [el("cTribNac", n.cTribNac), opt("cTribMun", n.cTribMun), el("xDescServ", n.xDescServ), opt("cNBS", n.cNBS)]),
        n.nt009 ? el("gLocacao", [el("categ", "1"), el("objeto", "1"), el("extensao", "10"), el("nPostes", "0")]) : undefined,
        n.xInfComp ? el("infoCompl", [el("xInfComp", n.xInfComp)]) : undefined,
      ]),
      el("valores", [
        el("vServPrest", [el("vServ", money(n.vServ))]),
        n.vDescIncond !== undefined || n.vDescCond !== undefined
          ? el("vDescCondIncond", [
              opt("vDescIncond", n.vDescIncond !== undefined ? money(n.vDescIncond) : undefined),
              opt("vDescCond", n.vDescCond !== undefined ? money(n.vDescCond) : undefined),
            ])
          : undefined,
        el("trib", [
          el("tribMun", [el("tribISSQN", String(n.tribISSQN)), el("tpRetISSQN", String(n.tpRetISSQN))]),
          tribFed(n.tribFed),
          totTrib(n.totTrib),
        ]),
      ]),
      ibsCbsDps(n),
    ],
    {
      Id: `DPS${n.cLocEmi}${n.emitente.doc.kind === "CNPJ" ? "2" : "1"}${emit.doc.number.padStart(14, "0")}${n.serie.padStart(5, "0")}${n.nDPS.padStart(15, "0")}`,
    },
  );
  const inf = el(
    "infNFSe",
    [
      el("xLocEmi", n.xLocEmi),
      el("xLocPrestacao", n.xLocPrestacao),
      el("nNFSe", n.numero),
      opt("cLocIncid", n.cLocIncid),
      opt("xLocIncid", n.xLocIncid),
      el("xTribNac", n.xTribNac),
      el("verAplic", "Simulador_1.0"),
      el("ambGer", String(n.ambGer)),
      el("tpEmis", String(n.tpEmis)),
      el("procEmi", "1"),
      el("cStat", String(n.cStat)),
      el("dhProc", n.dhProc),
      el("nDFSe", n.nDFSe),
      el("emit", [
        taxIdNode(emit),
        el("IM", n.imPadded ? emit.im.padStart(15, " ") : emit.im),
        el("xNome", emit.name),
        el("enderNac", [
          el("xLgr", emit.endereco?.xLgr ?? "RUA UM"),
          el("nro", emit.endereco?.nro ?? "100"),
          opt("xCpl", emit.endereco?.xCpl),
          el("xBairro", emit.endereco?.xBairro ?? "CENTRO"),
          el("cMun", emit.cMun),
          el("UF", emit.uf),
          el("CEP", emit.endereco?.cep ?? "01001000"),
        ]),
        opt("fone", emit.fone),
        opt("email", emit.email),
      ]),
      valoresNfse,
      v101 ? outInf : undefined,
      ibsCbsNota(n),
      el("DPS", [infDps], { versao: n.versao }),
    ],
    { Id: `NFS${n.chave}` },
  );
  const root = el("NFSe", [inf, signature(n.chave)], { xmlns: NS, versao: n.versao });
  return `<?xml version="1.0" encoding="UTF-8"?>${render(root, n.pretty)}${n.pretty ? "\n" : ""}`;
}

export function renderEvent(e: EventFacts): string {
  const v100 = e.versao === "1.00";
  const reasonNodes = [opt("cMotivo", e.cMotivo), opt("xMotivo", e.xMotivo)];
  const isRejection = ["202205", "203206", "204207"].includes(e.codigo);
  const spec = el(`e${e.codigo}`, [
    el("xDesc", e.xDesc),
    opt("CPFAgTrib", e.cpfAgTrib),
    opt("nProcAdm", e.nProcAdm),
    opt("idEvManifRej", e.idEvManifRej),
    opt("idBloqOfic", e.idBloqOfic),
    ...(isRejection && v100 ? [el("infRej", reasonNodes)] : reasonNodes),
    opt("xProcAdm", e.xProcAdm),
    opt("chSubstituta", e.chSubstituta),
    opt("codEvento", e.codEvento ? `e${e.codEvento}` : ""),
  ]);
  const preId = `PRE${e.chave}${e.codigo}${v100 ? String(e.nSeqEvento).padStart(3, "0") : ""}`;
  const ped = el(
    "infPedReg",
    [
      el("tpAmb", String(e.tpAmb)),
      el("verAplic", "ERP_Exemplo_2.3"),
      el("dhEvento", e.dhEvento),
      el(e.autor.kind === "CNPJ" ? "CNPJAutor" : "CPFAutor", e.autor.number),
      el("chNFSe", e.chave),
      v100 ? el("nPedRegEvento", String(e.nSeqEvento)) : undefined,
      spec,
    ],
    { Id: preId },
  );
  const inf = el(
    "infEvento",
    [
      el("verAplic", "Simulador_1.0"),
      el("ambGer", String(e.ambGer)),
      el("nSeqEvento", String(e.nSeqEvento)),
      el("dhProc", e.dhProc),
      el(v100 ? "nDFe" : "nDFSe", e.nDFSe),
      el("pedRegEvento", [ped], { versao: e.versao }),
    ],
    { Id: e.id },
  );
  const root = el("evento", [inf, signature(e.id)], { xmlns: NS, versao: e.versao });
  return `<?xml version="1.0" encoding="UTF-8"?>${render(root, e.pretty)}${e.pretty ? "\n" : ""}`;
}
