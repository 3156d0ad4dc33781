import type { ServiceImpl } from "@connectrpc/connect";
import type { StoreService } from "../../../libs/gen/malha/store/v1/store_pb.js";
import { DocumentStatus } from "../../../libs/gen/malha/nfse/v1/document_pb.js";
import { FaultReason } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { TipoEvento } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import { RunOutcome } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { CODIGO_BY_TIPO_EVENTO, documentStatusCodes, faultReasonCodes, optionalAmbiente, optionalTipoNsu, outcomeCodes } from "../codes.js";
import { badRequest, documentNotFound } from "../errors.js";
import { parseIbge } from "../ibge.js";
import type { StoreDb } from "../repo/context.js";
import { batchGetDocuments, getDocument, listDocuments, listEvents, listQuarantine, listRuns } from "../repo/queries.js";
import { chave, nsuRange, optionalChave, optionalIbge, optionalTime, partyDocument, protoDate } from "./validate.js";

type Impl = Partial<ServiceImpl<typeof StoreService>>;

export function queryHandlers(db: StoreDb): Impl {
  return {
    async getDocument(req) {
      const ibge = parseIbge(req.ibge);
      const key = chave(req.chave);
      const { document, events } = await getDocument(db, ibge, key, req.includeXml);
      if (!document) throw documentNotFound(ibge, key);
      return { document, events };
    },

    async batchGetDocuments(req) {
      const ibge = parseIbge(req.ibge);
      if (req.chaves.length === 0) throw badRequest("chaves is required");
      const seen = new Set<string>();
      const keys = req.chaves.map((c, i) => {
        const key = chave(c, `chaves[${i}]`);
        if (seen.has(key)) throw badRequest(`chaves[${i}] repeats ${key}`);
        seen.add(key);
        return key;
      });
      return { results: await batchGetDocuments(db, ibge, keys, req.includeXml) };
    },

    async listDocuments(req) {
      const ibge = parseIbge(req.ibge);
      const ambiente = optionalAmbiente(req.ambiente);
      const tipoNsu = optionalTipoNsu(req.tipoNsu);
      const nsu = nsuRange(req.nsuRange, "nsu_range");
      const emissionStart = optionalTime(req.emissionRange?.start);
      const emissionEnd = optionalTime(req.emissionRange?.end);
      const competenciaStart = protoDate(req.competenciaRange?.start, "competencia_range.start");
      const competenciaEnd = protoDate(req.competenciaRange?.end, "competencia_range.end");
      const prestador = partyDocument(req.prestadorDocument, "prestador");
      const tomador = partyDocument(req.tomadorDocument, "tomador");
      const destinatario = partyDocument(req.destinatarioDocument, "destinatario");
      const key = optionalChave(req.chave);
      let situacao: string | undefined;
      if (req.status !== DocumentStatus.UNSPECIFIED) {
        situacao = documentStatusCodes.toDb(req.status);
        if (situacao === undefined) throw badRequest(`unknown status ${req.status}`);
      }
      const page = await listDocuments(
        db,
        {
          ibge,
          ...(ambiente !== undefined ? { ambiente } : {}),
          ...(tipoNsu !== undefined ? { tipoNsu } : {}),
          ...(nsu.start !== undefined ? { nsuStart: nsu.start } : {}),
          ...(nsu.end !== undefined ? { nsuEnd: nsu.end } : {}),
          ...(emissionStart ? { emissionStart } : {}),
          ...(emissionEnd ? { emissionEnd } : {}),
          ...(competenciaStart ? { competenciaStart } : {}),
          ...(competenciaEnd ? { competenciaEnd } : {}),
          ...(prestador ? { prestador } : {}),
          ...(tomador ? { tomador } : {}),
          ...(destinatario ? { destinatario } : {}),
          ...(key ? { chave: key } : {}),
          ...(situacao ? { situacao } : {}),
        },
        req.includeXml,
        req.pageSize,
        req.pageToken,
      );
      return { documents: page.items, nextPageToken: page.next };
    },

    async listEvents(req) {
      const ibge = parseIbge(req.ibge);
      const key = optionalChave(req.chave);
      if (req.codigo !== "" && !/^[0-9]{6}$/.test(req.codigo)) throw badRequest("codigo must be 6 digits");
      let tipo: string | undefined;
      let codigo = req.codigo || undefined;
      if (req.tipo !== TipoEvento.UNSPECIFIED) {
        tipo = TipoEvento[req.tipo];
        if (tipo === undefined) throw badRequest(`unknown tipo ${req.tipo}`);
        // A known type has one code: filtering on it lets the code index serve the query.
        const known = CODIGO_BY_TIPO_EVENTO.get(req.tipo);
        if (known && codigo && codigo !== known) return { events: [], nextPageToken: "" };
        codigo = known ?? codigo;
      }
      const nsu = nsuRange(req.nsuRange, "nsu_range");
      const timeStart = optionalTime(req.eventTimeRange?.start);
      const timeEnd = optionalTime(req.eventTimeRange?.end);
      const page = await listEvents(
        db,
        {
          ibge,
          ...(key ? { chave: key } : {}),
          ...(codigo ? { codigo } : {}),
          ...(tipo ? { tipo } : {}),
          ...(nsu.start !== undefined ? { nsuStart: nsu.start } : {}),
          ...(nsu.end !== undefined ? { nsuEnd: nsu.end } : {}),
          ...(timeStart ? { timeStart } : {}),
          ...(timeEnd ? { timeEnd } : {}),
        },
        req.includeXml,
        req.pageSize,
        req.pageToken,
      );
      return { events: page.items, nextPageToken: page.next };
    },

    async listQuarantine(req) {
      const ibge = parseIbge(req.ibge);
      const ambiente = optionalAmbiente(req.ambiente);
      const tipoNsu = optionalTipoNsu(req.tipoNsu);
      let reason: string | undefined;
      if (req.reason !== FaultReason.UNSPECIFIED) {
        reason = faultReasonCodes.toDb(req.reason);
        if (reason === undefined) throw badRequest(`unknown reason ${req.reason}`);
      }
      const nsu = nsuRange(req.nsuRange, "nsu_range");
      const page = await listQuarantine(
        db,
        {
          ibge,
          ...(ambiente !== undefined ? { ambiente } : {}),
          ...(tipoNsu !== undefined ? { tipoNsu } : {}),
          ...(reason ? { reason } : {}),
          ...(nsu.start !== undefined ? { nsuStart: nsu.start } : {}),
          ...(nsu.end !== undefined ? { nsuEnd: nsu.end } : {}),
        },
        req.includePayload,
        req.pageSize,
        req.pageToken,
      );
      return { entries: page.items, nextPageToken: page.next };
    },

    async listRuns(req) {
      const ibge = optionalIbge(req.ibge);
      const ambiente = optionalAmbiente(req.ambiente);
      const tipoNsu = optionalTipoNsu(req.tipoNsu);
      let outcome: string | undefined;
      if (req.outcome !== RunOutcome.UNSPECIFIED) {
        outcome = outcomeCodes.toDb(req.outcome);
        if (outcome === undefined) throw badRequest(`unknown outcome ${req.outcome}`);
      }
      const since = optionalTime(req.since);
      const page = await listRuns(
        db,
        {
          ...(ibge ? { ibge } : {}),
          ...(ambiente !== undefined ? { ambiente } : {}),
          ...(tipoNsu !== undefined ? { tipoNsu } : {}),
          ...(outcome ? { outcome } : {}),
          ...(since ? { since } : {}),
          runningOnly: req.runningOnly,
        },
        req.pageSize,
        req.pageToken,
      );
      return { runs: page.items, nextPageToken: page.next };
    },
  };
}
