// "Documentos": a municipality's notes searched through the store's ListDocuments filters, one note with
// its events, and the stored XML byte-exact.
import type { Client } from "@connectrpc/connect";
import type { Date as ProtoDate } from "../../libs/gen/malha/common/v1/common_pb.js";
import { DocumentStatus, type Party } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { TipoEvento } from "../../libs/gen/malha/nfse/v1/event_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { DocumentRecord, EventRecord } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { DocumentDetail, DocumentStatusName, DocumentSummary, DocumentsResponse, EventView, PartyView } from "./api-types.js";
import { badRequest, HttpError } from "./http-kit.js";
import { iso, opt, timestamp } from "./proto-view.js";

export interface DocumentSearch {
  ibge: string;
  chave?: string;
  /** Emission dates, YYYY-MM-DD, both inclusive, in Brasília time. */
  from?: string;
  to?: string;
  prestador?: string;
  tomador?: string;
  status?: DocumentStatusName;
  pageToken?: string;
}

export interface XmlFile {
  body: Buffer;
  filename: string;
}

export interface DocumentsView {
  search(s: DocumentSearch): Promise<DocumentsResponse>;
  get(ibge: string, chave: string): Promise<DocumentDetail>;
  /** The note's XML, or with `eventId` one of its events' XML. */
  xml(ibge: string, chave: string, eventId?: string): Promise<XmlFile>;
}

const PAGE_SIZE = 50;
const CHAVE = /^[0-9]{50}$/;
const DAY = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/;
/** Brasília has had no daylight saving time since 2019: a day there starts at 03:00 UTC. */
const BRASILIA_OFFSET_MS = 3 * 3_600_000;

export const STATUS_NAMES: Record<DocumentStatus, DocumentStatusName> = {
  [DocumentStatus.UNSPECIFIED]: "desconhecida",
  [DocumentStatus.ATIVA]: "ativa",
  [DocumentStatus.CANCELADA]: "cancelada",
  [DocumentStatus.SUBSTITUIDA]: "substituida",
  [DocumentStatus.ANALISE_PENDENTE]: "analise_pendente",
};

/** Midnight in Brasília of a YYYY-MM-DD day, as epoch ms; `field` names the parameter in the refusal. */
export function brasiliaDayStart(day: string, field: string): number {
  const m = DAY.exec(day);
  const ms = m ? Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])) : Number.NaN;
  if (!m || Number.isNaN(ms) || new Date(ms).getUTCDate() !== Number(m[3])) throw badRequest(`${field} must be a date YYYY-MM-DD`);
  return ms + BRASILIA_OFFSET_MS;
}

/** A CNPJ/CPF as operators type it (with dots, slash, dash), reduced to what the store indexes. */
export function partyDocumentInput(value: string, field: string): string {
  const clean = value.replace(/[\s./-]/g, "").toUpperCase();
  if (clean.length > 40) throw badRequest(`${field} is longer than 40 characters`);
  if (!/^[0-9A-Z]*$/.test(clean)) throw badRequest(`${field} may hold only digits and letters (CNPJ, CPF or NIF)`);
  return clean;
}

export function chaveInput(value: string): string {
  const clean = value.replace(/\s/g, "");
  if (!CHAVE.test(clean)) throw badRequest("chave must be 50 digits");
  return clean;
}

const party = (p: Party | undefined): PartyView => ({ document: p?.document?.number ?? "", name: p?.name ?? "" });
const day = (d: ProtoDate | undefined): string | undefined =>
  d && d.year > 0 ? `${String(d.year).padStart(4, "0")}-${String(d.month).padStart(2, "0")}-${String(d.day).padStart(2, "0")}` : undefined;
const cents = (v: bigint | undefined): number | undefined => (v === undefined ? undefined : Number(v));

export function toDocumentSummary(r: DocumentRecord): DocumentSummary {
  const d = r.document;
  // The prestador's name is often absent; when the emitente is the prestador, its name is the one to show.
  const prestador = party(d?.prestador);
  if (prestador.name === "" && d?.emitente?.document?.number === prestador.document) prestador.name = d.emitente.name;
  const valor = cents(d?.valores?.vLiqCents) ?? cents(d?.valores?.vServCents);
  return {
    chave: d?.chave ?? "",
    numero: d?.numero ?? "",
    nsu: r.nsu.toString(),
    ...opt("dhEmi", iso(d?.dhEmi)),
    ...opt("competencia", day(d?.competencia)),
    prestador,
    tomador: party(d?.tomador),
    ...opt("valorCents", valor),
    status: STATUS_NAMES[d?.status ?? DocumentStatus.UNSPECIFIED] ?? "desconhecida",
  };
}

export function toEventView(r: EventRecord): EventView {
  const e = r.event;
  return {
    id: e?.id ?? "",
    codigo: e?.codigo ?? "",
    tipo: TipoEvento[e?.tipo ?? TipoEvento.UNSPECIFIED] ?? "UNKNOWN",
    nSeq: e?.nSeqEvento ?? 0,
    ...opt("dhEvento", iso(e?.dhEvento)),
    ...opt("dhProc", iso(e?.dhProc)),
    autor: e?.autor?.number ?? "",
    motivo: e?.xMotivo || e?.xDesc || "",
    ...opt("chaveSubstituta", e?.chaveSubstituta),
    nsu: r.nsu.toString(),
  };
}

const STATUS_FILTER = Object.fromEntries(Object.entries(STATUS_NAMES).map(([k, v]) => [v, Number(k) as DocumentStatus])) as Record<
  DocumentStatusName,
  DocumentStatus
>;

export function createDocumentsView(store: Client<typeof StoreService>): DocumentsView {
  const fetchOne = async (ibge: string, chave: string, includeXml: boolean) => {
    const res = await store.getDocument({ ibge, chave: chaveInput(chave), includeXml });
    if (!res.document) throw new HttpError(404, "NOT_FOUND", `chave ${chave} not stored in ${ibge}`);
    return res;
  };
  return {
    async search(s) {
      const start = s.from ? brasiliaDayStart(s.from, "from") : undefined;
      const end = s.to ? brasiliaDayStart(s.to, "to") + 24 * 3_600_000 : undefined;
      if (start !== undefined && end !== undefined && end <= start) throw badRequest("to must not be before from");
      if (s.status && !(s.status in STATUS_FILTER)) throw badRequest(`status must be one of ${Object.keys(STATUS_FILTER).join(", ")}`);
      const res = await store.listDocuments({
        ibge: s.ibge,
        ...(s.chave ? { chave: chaveInput(s.chave) } : {}),
        ...(start !== undefined || end !== undefined
          ? {
              emissionRange: {
                ...(start !== undefined ? { start: timestamp(start) } : {}),
                ...(end !== undefined ? { end: timestamp(end) } : {}),
              },
            }
          : {}),
        prestadorDocument: s.prestador ? partyDocumentInput(s.prestador, "prestador") : "",
        tomadorDocument: s.tomador ? partyDocumentInput(s.tomador, "tomador") : "",
        status: s.status ? STATUS_FILTER[s.status] : DocumentStatus.UNSPECIFIED,
        pageSize: PAGE_SIZE,
        pageToken: s.pageToken ?? "",
      });
      return { documents: res.documents.map(toDocumentSummary), ...opt("nextPageToken", res.nextPageToken) };
    },
    async get(ibge, chave) {
      const { document: r, events } = await fetchOne(ibge, chave, false);
      const d = r!.document;
      return {
        ...toDocumentSummary(r!),
        versao: d?.versao ?? "",
        cStat: d?.cStat ?? 0,
        ...opt("dhProc", iso(d?.dhProc)),
        emitente: party(d?.emitente),
        servico: { codigo: d?.servico?.cTribNac ?? "", descricao: d?.servico?.descricao || d?.servico?.xTribNac || "" },
        localPrestacao: d?.nomeLocalPrestacao || d?.codigoLocalPrestacao || "",
        municipioIncidencia: d?.nomeMunicipioIncidencia || d?.codigoMunicipioIncidencia || "",
        ...opt("issqnCents", cents(d?.valores?.vIssqnCents)),
        ...opt("chaveSubstituta", d?.chaveSubstituta),
        ...opt("chaveSubstituida", d?.chaveSubstituida),
        xmlSha256: r!.xmlSha256,
        events: events.map(toEventView),
      };
    },
    async xml(ibge, chave, eventId) {
      const { document: r, events } = await fetchOne(ibge, chave, true);
      if (eventId === undefined) return { body: Buffer.from(r!.xml), filename: `NFS${r!.document?.chave ?? chave}.xml` };
      const e = events.find((ev) => ev.event?.id === eventId);
      if (!e) throw new HttpError(404, "NOT_FOUND", `event ${eventId} of chave ${chave} not stored in ${ibge}`);
      return { body: Buffer.from(e.xml), filename: `${eventId}.xml` };
    },
  };
}
