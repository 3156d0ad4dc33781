// What the simulator knows about each generated document, independent of its XML rendering: tests compare
// the gateway's typed output against these facts.

export type TaxIdFacts = { kind: "CNPJ" | "CPF"; number: string };

export interface PartyFacts {
  doc: TaxIdFacts;
  /** Empty when the XML carries no xNome. */
  name: string;
  im: string;
  cMun: string;
  uf: string;
  /** Optional extras (the DANFSe prints them); the generator leaves them out, tests set them. */
  fone?: string;
  email?: string;
  endereco?: { xLgr: string; nro: string; xCpl?: string; xBairro: string; cep: string };
}

/** `DPS/infDPS/valores/trib/tribFed` (federal taxes other than CBS). */
export interface TribFedFacts {
  piscofins?: { cst: string; vBC: bigint; pPisBps: number; pCofinsBps: number; vPis: bigint; vCofins: bigint; tpRet: number };
  vRetCP?: bigint;
  vRetIRRF?: bigint;
  vRetCSLL?: bigint;
}

/** `DPS/infDPS/valores/trib/totTrib`: the Lei 12.741/2012 approximate taxes, as amounts or as rates. */
export type TotTribFacts =
  | { kind: "valor"; fed: bigint; est: bigint; mun: bigint }
  | { kind: "percent"; fedBps: number; estBps: number; munBps: number };

/** IBS/CBS of a 1.01 note (NT 004 v2.0): the note's computed group and the DPS's classification. */
export interface IbsCbsFacts {
  cLocalidadeIncid: string;
  vTotNF: bigint;
  finNFSe: number;
  /** The full group; absent in notes that carry only the locality and vTotNF (before it became mandatory). */
  full?: {
    vBC: bigint;
    /** Rates in parts per million of the base (percent with 4 decimals). */
    pIBSUF: number;
    pIBSMun: number;
    pCBS: number;
    vIBSUF: bigint;
    vIBSMun: bigint;
    vCBS: bigint;
    cIndOp: string;
    cst: string;
    cClassTrib: string;
  };
  destinatario?: PartyFacts;
}

export interface NoteFacts {
  chave: string;
  numero: string;
  versao: "1.00" | "1.01";
  cStat: number;
  /** ISO date-times with offset, as in the XML. */
  dhProc: string;
  dhEmi: string;
  dCompet: string;
  emitente: PartyFacts;
  prestador: PartyFacts;
  tomador?: PartyFacts;
  intermediario?: PartyFacts;
  cLocEmi: string;
  xLocEmi: string;
  cLocPrestacao: string;
  xLocPrestacao: string;
  cLocIncid: string;
  xLocIncid: string;
  cTribNac: string;
  cTribMun: string;
  cNBS: string;
  xDescServ: string;
  xTribNac: string;
  vServ: bigint;
  vBC?: bigint;
  pAliqBps?: number;
  vISSQN?: bigint;
  vTotalRet?: bigint;
  vLiq: bigint;
  tribISSQN: number;
  tpRetISSQN: number;
  tpAmb: number;
  ambGer: number;
  tpEmis: number;
  tpEmit: number;
  serie: string;
  nDPS: string;
  nDFSe: string;
  opSimpNac: number;
  chSubstda: string;
  cMotivoSubst: string;
  /** Layout 1.01 only. */
  ibsCbs?: IbsCbsFacts;
  /** Optional extras (the DANFSe prints them); the generator leaves them out, tests set them. */
  tribFed?: TribFedFacts;
  totTrib?: TotTribFacts;
  xInfComp?: string;
  vDescIncond?: bigint;
  vDescCond?: bigint;
  /** Carries the elements NT 009 renames and adds (vCalcAjusteBCISSQN, vAjusteBC, gTribSN, gLocacao). */
  nt009: boolean;
  /** Rendering choices that the parser must see through. */
  pretty: boolean;
  imPadded: boolean;
}

export interface EventFacts {
  id: string;
  chave: string;
  codigo: string;
  nSeqEvento: number;
  dhEvento: string;
  dhProc: string;
  versao: "1.00" | "1.01";
  ambGer: number;
  tpAmb: number;
  nDFSe: string;
  autor: TaxIdFacts;
  xDesc: string;
  cMotivo: string;
  xMotivo: string;
  chSubstituta: string;
  codEvento: string;
  cpfAgTrib: string;
  nProcAdm: string;
  xProcAdm: string;
  idEvManifRej: string;
  idBloqOfic: string;
  pretty: boolean;
}

export type Facts = { kind: "NFSE"; note: NoteFacts } | { kind: "EVENTO"; event: EventFacts; tipoEvento: string };

/** One NSU of a feed. */
export interface FeedEntry {
  nsu: bigint;
  facts: Facts;
  /** The chave the batch item carries (the note's chave, also for events). */
  chave: string;
  xml: string;
  /** `ArquivoXml`: Base64 of the gzip of `xml`. */
  arquivoXml: string;
  /** Local São Paulo time without offset, 1–3 fraction digits. */
  dataHoraGeracao: string;
  /** Left out of `lote=true` batches (a hole the client must back-fill with `lote=false`). */
  hidden: boolean;
}
