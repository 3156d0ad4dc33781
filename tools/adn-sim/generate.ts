// Deterministic realistic data per (municipality, tipoNSU): notes of layouts 1.00 and 1.01 with valid
// chaves and CNPJ/CPF check digits, optional tomador and intermediário, substitutions, events of every
// code of adn.md §5.2, events before their note, late old notes, hidden NSUs and true NSU holes; and what
// the ADN distributes since 2026: alphanumeric CNPJs (in chaves, parties, event authors), IBS/CBS groups
// with a destinatário, and notes with NT 009's renamed and new elements.
import { gzipSync } from "node:zlib";
import { buildChave } from "../../libs/adn/chave.js";
import { EVENT_CODES, eventCodeInfo } from "../../libs/adn/event-codes.js";
import { completeCnpj, completeCpf } from "../../libs/tax-id/index.js";
import type { EventFacts, FeedEntry, IbsCbsFacts, NoteFacts, PartyFacts, TaxIdFacts } from "./model.js";
import { hashSeed, Rng } from "./random.js";
import { renderEvent, renderNote } from "./xml.js";

const CITIES: readonly [string, string, string][] = [
  ["3550308", "Sao Paulo", "SP"],
  ["3304557", "Rio de Janeiro", "RJ"],
  ["3106200", "Belo Horizonte", "MG"],
  ["4106902", "Curitiba", "PR"],
  ["1302603", "Manaus", "AM"],
  ["2927408", "Salvador", "BA"],
  ["4314902", "Porto Alegre", "RS"],
];
const SERVICES: readonly [string, string][] = [
  ["010701", "Suporte tecnico em informatica"],
  ["171901", "Contabilidade, inclusive servicos tecnicos e auxiliares"],
  ["070201", "Execucao de obras de construcao civil"],
  ["040301", "Servicos medicos e hospitalares"],
  ["140101", "Manutencao e conservacao de maquinas"],
];
const NAMES = [
  "ALFA SERVICOS LTDA",
  "BETA & FILHOS ME",
  "GAMA <TECNOLOGIA> SA",
  "DELTA CONSULTORIA EIRELI",
  "ÉPSILON SAÚDE LTDA",
  "ZETA OBRAS SA",
];
const PEOPLE = ["JOSE DA SILVA", "MARIA OLIVEIRA", "JOÃO PEREIRA", "ANA CONCEIÇÃO"];

export interface FeedSpec {
  seed: number;
  ibge: string;
  tipoNsu: string;
  /** 1 produção, 2 homologação: the tpAmb written in the XML. */
  tpAmb: 1 | 2;
}

const BASE_MS = Date.UTC(2026, 0, 5, 12, 0, 0);

/** "2026-03-10T14:02:10-03:00" for an instant (São Paulo has had a fixed −03:00 since 2019). */
function isoSp(ms: number): string {
  const d = new Date(ms - 3 * 3600_000);
  return d.toISOString().replace(/\.\d{3}Z$/, "-03:00");
}

/** DataHoraGeracao: local time without offset, 1–3 fraction digits. */
function localGeracao(ms: number, digits: number): string {
  const d = new Date(ms - 3 * 3600_000).toISOString();
  return `${d.slice(0, 19)}.${d.slice(20, 20 + digits)}`;
}

/**
 * What events and substitutions use of an earlier note. The generator keeps one per note of the feed
 * (bench:fleet generates hundreds of thousands), so only this, not the note's facts: their object graphs
 * made the simulator's garbage collection, charged to the benchmarks, grow with every note generated.
 */
interface NoteRef {
  chave: string;
  emitente: TaxIdFacts;
  tomador?: TaxIdFacts;
  intermediario?: TaxIdFacts;
}

const noteRef = (note: NoteFacts): NoteRef => ({
  chave: note.chave,
  emitente: note.emitente.doc,
  ...(note.tomador ? { tomador: note.tomador.doc } : {}),
  ...(note.intermediario ? { intermediario: note.intermediario.doc } : {}),
});

export class FeedGenerator {
  private readonly rng: Rng;
  /**
   * Decides the 2026 traits (alphanumeric CNPJs, IBS/CBS, NT 009) on a sequence of its own, so that adding
   * them left every other generated value as it was.
   */
  private readonly rng2026: Rng;
  /** Every note of the feed so far, as later events and substitutions name it (NoteRef). */
  private readonly notes: NoteRef[] = [];
  /** Notes whose event was emitted first; the note itself comes a little later. */
  private readonly pendingNotes: NoteFacts[] = [];
  /** e105102 owed to a replaced note once its substitute exists. */
  private readonly substitutions: { replaced: NoteRef; substitute: NoteRef }[] = [];
  private readonly seqByChaveCode = new Map<string, number>();
  private codeCursor = 0;
  private nextNumero = 1;
  private nsu = 0n;
  readonly holes = new Set<bigint>();

  constructor(private readonly spec: FeedSpec) {
    this.rng = new Rng(hashSeed(spec.seed, spec.ibge, spec.tipoNsu));
    this.rng2026 = new Rng(hashSeed(spec.seed, spec.ibge, spec.tipoNsu, "2026"));
  }

  /** Generates the next `count` entries (NSUs that are true holes are skipped and recorded). */
  next(count: number): FeedEntry[] {
    const out: FeedEntry[] = [];
    while (out.length < count) {
      this.nsu++;
      if (this.nsu > 3n && this.rng.chance(0.01)) {
        this.holes.add(this.nsu);
        continue;
      }
      out.push(this.entry(this.nsu));
    }
    return out;
  }

  private entry(nsu: bigint): FeedEntry {
    const r = this.rng;
    const receivedMs = BASE_MS + Number(nsu) * 7 * 60_000 + r.int(0, 59_999);
    const hidden = nsu > 3n && r.chance(0.01);
    const owed = this.substitutions.length > 0 && r.chance(0.5) ? this.substitutions.shift() : undefined;
    if (owed) return this.eventEntry(nsu, owed.replaced, "105102", receivedMs, hidden, owed.substitute.chave);
    if (this.pendingNotes.length > 0 && r.chance(0.4)) return this.noteEntry(nsu, this.pendingNotes.shift()!, receivedMs, hidden);
    if (this.notes.length < 3 || r.chance(0.55)) {
      const note = this.makeNote(receivedMs);
      if (this.notes.length > 5 && r.chance(0.04)) {
        // An event reaches the feed before its note.
        this.pendingNotes.push(note);
        return this.eventEntry(nsu, noteRef(note), "203202", receivedMs, hidden);
      }
      return this.noteEntry(nsu, note, receivedMs, hidden);
    }
    const target = r.pick(this.notes);
    // Cycle through every code first so that any feed of ≥ 40 entries holds all of them.
    const codes = EVENT_CODES.filter((c) => c.codigo !== "105102");
    const code = this.codeCursor < codes.length ? codes[this.codeCursor++]!.codigo : r.pick(codes).codigo;
    return this.eventEntry(nsu, target, code, receivedMs, hidden);
  }

  private noteEntry(nsu: bigint, note: NoteFacts, receivedMs: number, hidden: boolean): FeedEntry {
    this.notes.push(noteRef(note));
    const xml = renderNote(note);
    return this.wrap(nsu, { kind: "NFSE", note }, note.chave, xml, receivedMs, hidden);
  }

  private eventEntry(nsu: bigint, note: NoteRef, codigo: string, receivedMs: number, hidden: boolean, chSubstituta = ""): FeedEntry {
    const event = this.makeEvent(note, codigo, receivedMs, chSubstituta);
    const xml = renderEvent(event);
    const tipoEvento = eventCodeInfo(codigo)?.adnName ?? "";
    return this.wrap(nsu, { kind: "EVENTO", event, tipoEvento }, note.chave, xml, receivedMs, hidden);
  }

  private wrap(nsu: bigint, facts: FeedEntry["facts"], chave: string, xml: string, receivedMs: number, hidden: boolean): FeedEntry {
    return {
      nsu,
      facts,
      chave,
      xml,
      arquivoXml: gzipSync(Buffer.from(xml, "utf8")).toString("base64"),
      dataHoraGeracao: localGeracao(receivedMs, this.rng.int(1, 3)),
      hidden,
    };
  }

  /** A company's CNPJ; about one in four is of the alphanumeric form given to companies since July 2026. */
  private cnpj(): string {
    const root = this.rng.digits(8);
    if (!this.rng2026.chance(0.25)) return completeCnpj(`${root}0001`);
    const letters = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    let alpha = "";
    for (const d of root) alpha += this.rng2026.chance(0.5) ? letters[this.rng2026.int(0, 25)] : d;
    return completeCnpj(`${alpha}${this.rng2026.chance(0.5) ? "0001" : `000${letters[this.rng2026.int(0, 25)]}`}`);
  }
  private cpf(): string {
    return completeCpf(this.rng.digits(9));
  }
  private party(opts: { cpf?: boolean; name?: boolean; city?: [string, string, string] } = {}): PartyFacts {
    const r = this.rng;
    const doc: TaxIdFacts = opts.cpf ? { kind: "CPF", number: this.cpf() } : { kind: "CNPJ", number: this.cnpj() };
    const city = opts.city ?? r.pick(CITIES);
    return {
      doc,
      name: opts.name === false ? "" : opts.cpf ? r.pick(PEOPLE) : r.pick(NAMES),
      im: r.chance(0.7) ? String(r.int(1000, 99_999_999)) : "",
      cMun: city[0],
      uf: "",
    };
  }

  private makeNote(receivedMs: number): NoteFacts {
    const r = this.rng;
    const versao = r.chance(0.5) ? "1.01" : "1.00";
    const ambGer = r.chance(0.7) ? 2 : 1;
    // Most notes are recent; some are late shares of notes months old.
    const late = r.chance(0.05);
    const emiMs = receivedMs - (late ? r.int(60, 240) * 86_400_000 : r.int(60_000, 3_600_000));
    const emitCity = r.chance(0.5) ? (CITIES.find((c) => c[0] === this.spec.ibge) ?? r.pick(CITIES)) : r.pick(CITIES);
    const emitCpf = r.chance(0.1);
    const emitParty = this.party({ cpf: emitCpf, city: emitCity });
    const emitente: PartyFacts = { ...emitParty, uf: emitCity[2], im: emitParty.im || "12345" };
    const tpEmit = r.chance(0.9) ? 1 : 2;
    const prestador: PartyFacts = tpEmit === 1 ? { doc: emitente.doc, name: "", im: "", cMun: "", uf: "" } : this.party({ name: true });
    const tomador = tpEmit === 2 ? { ...emitente, uf: "", im: "" } : r.chance(0.75) ? this.party({ cpf: r.chance(0.3) }) : undefined;
    const intermediario = r.chance(0.1) ? this.party() : undefined;
    const numero = this.nextNumero++;
    const d = new Date(emiMs - 3 * 3600_000);
    const chave = buildChave({
      cMun: emitCity[0],
      ambGer: ambGer as 1 | 2,
      tpInsc: emitCpf ? 1 : 2,
      inscricao: emitente.doc.number,
      nNFSe: numero,
      year: d.getUTCFullYear(),
      month: d.getUTCMonth() + 1,
      codigo: r.int(0, 999_999_999),
    });
    const incidence = r.chance(0.9);
    const incidCity = incidence ? (r.chance(0.6) ? (CITIES.find((c) => c[0] === this.spec.ibge) ?? emitCity) : r.pick(CITIES)) : undefined;
    const prestCity = r.pick(CITIES);
    const [cTribNac, xTribNac] = r.pick(SERVICES);
    const vServ = BigInt(r.int(5_000, 5_000_000));
    const simples = r.chance(0.25);
    const pAliqBps = simples ? undefined : r.pick([200, 250, 300, 500]);
    const vTotalRet = r.chance(0.2) ? (vServ * BigInt(r.int(1, 15))) / 100n : undefined;
    const substituted = this.notes.length > 4 && r.chance(0.05) ? r.pick(this.notes) : undefined;
    const note: NoteFacts = {
      chave,
      numero: String(numero),
      versao,
      cStat: versao === "1.01" && r.chance(0.05) ? 107 : r.chance(0.05) ? 102 : 100,
      dhProc: isoSp(emiMs + 2_000),
      dhEmi: isoSp(emiMs),
      dCompet: isoSp(emiMs).slice(0, 10),
      emitente,
      prestador,
      ...(tomador ? { tomador } : {}),
      ...(intermediario ? { intermediario } : {}),
      cLocEmi: emitCity[0],
      xLocEmi: emitCity[1],
      cLocPrestacao: prestCity[0],
      xLocPrestacao: prestCity[1],
      cLocIncid: incidCity?.[0] ?? "",
      xLocIncid: incidCity?.[1] ?? "",
      cTribNac,
      cTribMun: r.chance(0.3) ? r.digits(3) : "",
      cNBS: r.chance(0.3) ? r.digits(9) : "",
      xDescServ: `Servico prestado conforme contrato ${r.int(1, 999)}/2026`,
      xTribNac,
      vServ,
      ...(simples ? {} : { vBC: vServ, pAliqBps, vISSQN: (vServ * BigInt(pAliqBps!)) / 10_000n }),
      ...(vTotalRet !== undefined ? { vTotalRet } : {}),
      vLiq: vServ - (vTotalRet ?? 0n),
      tribISSQN: incidence ? 1 : r.pick([2, 3, 4]),
      tpRetISSQN: r.pick([1, 1, 1, 2, 3]),
      tpAmb: this.spec.tpAmb,
      ambGer,
      tpEmis: ambGer === 1 && r.chance(0.5) ? 2 : 1,
      tpEmit,
      serie: String(r.int(1, 900)),
      nDPS: String(numero + 1000),
      nDFSe: ambGer === 1 ? String(r.int(1, 9_999_999)) : String(900_000 + numero),
      opSimpNac: simples ? r.pick([2, 3]) : 1,
      chSubstda: substituted?.chave ?? "",
      cMotivoSubst: substituted ? r.pick(["01", "02", "03", "04", "05", "99"]) : "",
      nt009: versao === "1.01" && this.rng2026.chance(0.15),
      pretty: r.chance(0.5),
      imPadded: r.chance(0.2),
    };
    if (versao === "1.01") note.ibsCbs = this.ibsCbs(note);
    if (substituted) this.substitutions.push({ replaced: substituted, substitute: noteRef(note) });
    return note;
  }

  /** IBS/CBS of a 1.01 note: the full group in most, the minimal one (locality and vTotNF) in the rest. */
  private ibsCbs(note: NoteFacts): IbsCbsFacts {
    const r = this.rng2026;
    const base: IbsCbsFacts = { cLocalidadeIncid: note.cLocIncid || note.cLocEmi, vTotNF: note.vLiq, finNFSe: 0 };
    if (!r.chance(0.7)) return base;
    const vBC = note.vServ;
    // The rates of the 2026 test year (0.1 % state IBS, 0.9 % CBS), and later years' for variety.
    const [pIBSUF, pIBSMun, pCBS] = r.pick([
      [1000, 0, 9000],
      [1000, 0, 9000],
      [90_000, 10_000, 88_000],
      [177_000, 0, 88_000],
    ] as const);
    const share = (ppm: number) => (vBC * BigInt(ppm)) / 1_000_000n;
    const [vIBSUF, vIBSMun, vCBS] = [share(pIBSUF), share(pIBSMun), share(pCBS)];
    // The destinatário is drawn from this sequence too (party() would move the main one).
    const destinatario: PartyFacts | undefined = r.chance(0.3)
      ? {
          doc: r.chance(0.2)
            ? { kind: "CPF", number: completeCpf(r.digits(9)) }
            : { kind: "CNPJ", number: completeCnpj(`${r.pick(["DEST", "9Z8Y", r.digits(4)])}${r.digits(4)}0001`) },
          name: r.pick(NAMES),
          im: "",
          cMun: r.pick(CITIES)[0],
          uf: "",
        }
      : undefined;
    return {
      ...base,
      vTotNF: note.vLiq + vIBSUF + vIBSMun + vCBS,
      full: {
        vBC,
        pIBSUF,
        pIBSMun,
        pCBS,
        vIBSUF,
        vIBSMun,
        vCBS,
        cIndOp: r.pick(["100301", "020101", "030102"]),
        cst: r.pick(["000", "200", "410"]),
        cClassTrib: r.pick(["000001", "200032", "410004"]),
      },
      ...(destinatario ? { destinatario } : {}),
    };
  }

  private makeEvent(note: NoteRef, codigo: string, receivedMs: number, chSubstituta: string): EventFacts {
    const r = this.rng;
    const key = `${note.chave}${codigo}`;
    const nSeqEvento = (this.seqByChaveCode.get(key) ?? 0) + 1;
    this.seqByChaveCode.set(key, nSeqEvento);
    const author = codigo.slice(1, 3);
    const autor: TaxIdFacts =
      author === "01" || author === "02"
        ? note.emitente
        : author === "03" && note.tomador && (note.tomador.kind === "CNPJ" || note.tomador.kind === "CPF")
          ? note.tomador
          : author === "04" && note.intermediario
            ? note.intermediario
            : { kind: "CNPJ", number: this.cnpj() };
    const agent = ["105104", "105105", "205208", "305101", "305102", "305103"].includes(codigo) ? this.cpf() : "";
    const motivo: Record<string, () => [string, string]> = {
      "101101": () => [r.pick(["1", "2", "9"]), "Valor do servico informado errado"],
      "105102": () => [r.pick(["01", "02", "03", "04", "05", "99"]), r.chance(0.5) ? "Substituicao de NFS-e" : ""],
      "101103": () => [r.pick(["1", "2", "9"]), "Solicito analise fiscal do cancelamento"],
      "105104": () => ["1", "Cancelamento deferido apos analise"],
      "105105": () => [r.pick(["1", "2"]), "Cancelamento indeferido: servico prestado"],
      "202205": () => [r.pick(["1", "2", "3", "4", "5", "9"]), r.chance(0.5) ? "Nao reconheco a prestacao" : ""],
      "203206": () => [r.pick(["1", "2", "3", "4", "5", "9"]), "Valores divergentes do contratado"],
      "204207": () => [r.pick(["1", "9"]), ""],
      "205208": () => ["", "Rejeicao anulada pelo municipio"],
      "305102": () => ["", "Bloqueio por processo administrativo"],
    };
    const [cMotivo, xMotivo] = motivo[codigo]?.() ?? ["", ""];
    const dhEventoMs = receivedMs - r.int(1_000, 60_000);
    const versao = r.chance(0.5) ? "1.01" : "1.00";
    return {
      id: `EVT${note.chave}${codigo}${String(nSeqEvento).padStart(3, "0")}`,
      chave: note.chave,
      codigo,
      nSeqEvento,
      dhEvento: isoSp(dhEventoMs),
      dhProc: isoSp(dhEventoMs + 3_000),
      versao,
      ambGer: codigo.startsWith("9") ? 3 : r.pick([1, 2]),
      tpAmb: this.spec.tpAmb,
      nDFSe: "0",
      autor,
      xDesc: eventCodeInfo(codigo)?.adnName.replace(/_/g, " ").toLowerCase() ?? "evento",
      cMotivo,
      xMotivo,
      chSubstituta,
      codEvento: codigo === "305102" ? r.pick(["101101", "105102", "105104", "105105", "305101"]) : "",
      cpfAgTrib: agent,
      nProcAdm: ["105104", "305101"].includes(codigo) || (codigo === "105105" && r.chance(0.5)) ? `PA-${r.int(1000, 9999)}/2026` : "",
      xProcAdm: codigo === "305101" ? "Processo administrativo de cancelamento de oficio" : "",
      idEvManifRej: codigo === "205208" ? `EVT${note.chave}203206001` : "",
      idBloqOfic: codigo === "305103" ? `EVT${note.chave}305102001` : "",
      pretty: r.chance(0.5),
    };
  }
}
