// Test notes for the DANFSe, from the ADN simulator's generator (tools/adn-sim): a seeded feed gives notes
// of both layouts with and without IBS/CBS, tomador, intermediário and destinatário; `longest` stretches a
// note to the longest values the XSD allows; events are the generator's own, re-aimed at a chosen note.
import { completeCnpj, completeCpf } from "../../tax-id/index.js";
import { FeedGenerator } from "../../../tools/adn-sim/generate.js";
import type { EventFacts, NoteFacts, PartyFacts } from "../../../tools/adn-sim/model.js";
import { renderEvent, renderNote } from "../../../tools/adn-sim/xml.js";
import type { DanfseEvent, DanfseInput } from "../index.js";

export interface Feed {
  notes: NoteFacts[];
  events: EventFacts[];
}

export function feed(seed = 17, count = 400, tpAmb: 1 | 2 = 1): Feed {
  const entries = new FeedGenerator({ seed, ibge: "3550308", tipoNsu: "DISTRIBUICAO", tpAmb }).next(count);
  return {
    notes: entries.flatMap((e) => (e.facts.kind === "NFSE" ? [e.facts.note] : [])),
    events: entries.flatMap((e) => (e.facts.kind === "EVENTO" ? [e.facts.event] : [])),
  };
}

export function pick(notes: readonly NoteFacts[], what: string, test: (n: NoteFacts) => boolean): NoteFacts {
  const n = notes.find(test);
  if (!n) throw new Error(`the seeded feed has no note that ${what}`);
  return n;
}

const utf8 = new TextEncoder();

export const xmlOf = (n: NoteFacts): Uint8Array => utf8.encode(renderNote(n));

export const inputOf = (n: NoteFacts, events: DanfseEvent[] = []): DanfseInput => ({ xml: xmlOf(n), events });

/** A generated event of `codigo`, re-aimed at `note` (its chave, Ids and, for a substitution, the substitute). */
export function eventFor(f: Feed, note: NoteFacts, codigo: string, chSubstituta = ""): DanfseEvent {
  const template = f.events.find((e) => e.codigo === codigo);
  if (!template) throw new Error(`the seeded feed has no event ${codigo}`);
  const e: EventFacts = {
    ...template,
    chave: note.chave,
    id: `EVT${note.chave}${codigo}001`,
    chSubstituta: codigo === "105102" ? chSubstituta || template.chSubstituta : template.chSubstituta,
  };
  return { tipo: codigo, xml: utf8.encode(renderEvent(e)) };
}

const fill = (s: string, n: number) => s.repeat(Math.ceil(n / s.length)).slice(0, n);

/** A party at the XSD's limits: xNome 300, IM 15, fone 20, email 80, xLgr 255, nro 60, xCpl 156, xBairro 60. */
function longParty(p: PartyFacts, label: string): PartyFacts {
  return {
    ...p,
    name: fill(`${label} MUITO LONGA DE SERVIÇOS ÉPSILON `, 300),
    im: "123456789012345",
    fone: "55119999999999999999",
    email: fill(`${label.toLowerCase().replace(/\W/g, "")}.contato@`, 70) + "exemplo.br",
    endereco: {
      xLgr: fill("AVENIDA DOS BANDEIRANTES ", 255),
      nro: fill("1234", 60),
      xCpl: fill("BLOCO B SALA 1001 ", 156),
      xBairro: fill("JARDIM PAULISTANO ", 60),
      cep: "04571010",
    },
  };
}

/** The biggest amount the layout allows (TSDec15V2). */
export const MAX_CENTS = 99_999_999_999_999_999n;

/** `n` with every party present and every printed value as long as the XSD allows. */
export function longest(n: NoteFacts): NoteFacts {
  const cnpj = (base: string) => ({ kind: "CNPJ" as const, number: completeCnpj(base) });
  // tpEmit 2: the tomador issued the note, so the emitente is the tomador.
  const tomador = longParty({ doc: cnpj("T0M4D0R00001"), name: "", im: "", cMun: "3106200", uf: "" }, "TOMADORA");
  const emitente = { ...tomador, uf: "MG" };
  return {
    ...n,
    versao: "1.01",
    numero: "9999999999999",
    serie: "99999",
    nDPS: "999999999999999",
    tpEmit: 2,
    emitente,
    prestador: longParty({ ...n.prestador, doc: cnpj("PR3ST4D0R001"), cMun: "3304557", uf: "" }, "PRESTADORA"),
    tomador,
    intermediario: longParty(
      { doc: { kind: "CPF", number: completeCpf("123456789") }, name: "", im: "", cMun: "4106902", uf: "" },
      "INTERMEDIÁRIA",
    ),
    xLocEmi: fill("SÃO JOÃO DO MUNICÍPIO ", 150),
    xLocPrestacao: fill("LOCAL DA PRESTAÇÃO ", 150),
    xLocIncid: fill("MUNICÍPIO DE INCIDÊNCIA ", 150),
    cLocIncid: "3550308",
    xTribNac: fill("DESCRIÇÃO DO CÓDIGO DE TRIBUTAÇÃO NACIONAL ", 600),
    cTribMun: "999",
    cNBS: "123456789",
    xDescServ: fill("Serviço de consultoria técnica especializada prestado conforme contrato anexo. ", 2000),
    xInfComp: fill("Informação complementar do contribuinte ", 2000),
    vServ: MAX_CENTS,
    vBC: MAX_CENTS,
    pAliqBps: 50000,
    vISSQN: MAX_CENTS,
    vTotalRet: MAX_CENTS,
    vLiq: MAX_CENTS,
    vDescIncond: MAX_CENTS,
    vDescCond: MAX_CENTS,
    tribISSQN: 1,
    tpRetISSQN: 3,
    tribFed: {
      piscofins: { cst: "01", vBC: MAX_CENTS, pPisBps: 165, pCofinsBps: 760, vPis: MAX_CENTS, vCofins: MAX_CENTS, tpRet: 9 },
      vRetCP: MAX_CENTS,
      vRetIRRF: MAX_CENTS,
      vRetCSLL: MAX_CENTS,
    },
    totTrib: { kind: "valor", fed: MAX_CENTS, est: MAX_CENTS, mun: MAX_CENTS },
    chSubstda: n.chave,
    cMotivoSubst: "99",
    ibsCbs: {
      cLocalidadeIncid: "3550308",
      vTotNF: MAX_CENTS,
      finNFSe: 0,
      full: {
        vBC: MAX_CENTS,
        pIBSUF: 999_999,
        pIBSMun: 999_999,
        pCBS: 999_999,
        // vIBSTot is their sum, within the same limit.
        vIBSUF: MAX_CENTS / 2n,
        vIBSMun: MAX_CENTS / 2n,
        vCBS: MAX_CENTS,
        cIndOp: "100301",
        cst: "000",
        cClassTrib: "000001",
      },
      destinatario: longParty({ doc: cnpj("D3ST1N4T4R10"), name: "", im: "", cMun: "2927408", uf: "" }, "DESTINATÁRIA"),
    },
  };
}
