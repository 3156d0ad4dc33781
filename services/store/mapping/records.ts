// Rows → wire messages. mysql2 returns BIGINT UNSIGNED as strings (bigNumberStrings) and DATETIME as
// UTC Dates (timezone 'Z'), so NSUs and tokens become bigint without ever passing through a double.
import { create, fromBinary } from "@bufbuild/protobuf";
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { TaxIdKind } from "../../../libs/gen/malha/common/v1/common_pb.js";
import { FaultReason } from "../../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentSchema, DocumentStatus } from "../../../libs/gen/malha/nfse/v1/document_pb.js";
import { EventSchema } from "../../../libs/gen/malha/nfse/v1/event_pb.js";
import {
  CursorResetSchema,
  DocumentRecordSchema,
  EventRecordSchema,
  MunicipalitySchema,
  QuarantineEntrySchema,
  RunOutcome,
  RunSchema,
  SyncStateSchema,
  SyncStatus,
  type CursorReset,
  type DocumentRecord,
  type EventRecord,
  type Municipality,
  type QuarantineEntry,
  type Run,
  type SyncState,
} from "../../../libs/gen/malha/store/v1/types_pb.js";
import {
  documentStatusCodes,
  faultReasonCodes,
  feedKeyOf,
  outcomeCodes,
  poolCodes,
  syncStatusCodes,
  tipoNsuCodes,
  triggerCodes,
} from "../codes.js";

type Row = Record<string, unknown>;

export const big = (v: unknown): bigint => (v === null || v === undefined ? 0n : BigInt(v as string | number));
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const str = (v: unknown): string => (v === null || v === undefined ? "" : String(v));
const ts = (v: unknown): Timestamp | undefined => (v instanceof Date ? timestampFromDate(v) : undefined);
const bytes = (v: unknown): Uint8Array => (Buffer.isBuffer(v) ? new Uint8Array(v) : new Uint8Array(0));

export function syncStateFromRow(r: Row): SyncState {
  return create(SyncStateSchema, {
    feed: feedKeyOf(str(r.ibge), num(r.ambiente), str(r.tipo_nsu)),
    enabled: num(r.enabled) === 1,
    municipalityActive: num(r.municipality_active) === 1,
    lastNsu: big(r.last_nsu),
    maxNsu: big(r.max_nsu),
    // 'pending' (seed 000) is not used by the store; a queued feed is idle as far as runs are concerned.
    status: syncStatusCodes.fromDb(str(r.status)) ?? SyncStatus.IDLE,
    lockedAt: ts(r.locked_at),
    lockedBy: str(r.locked_by),
    fenceToken: big(r.fence_token),
    lastSuccessAt: ts(r.last_success_at),
    lastErrorAt: ts(r.last_error_at),
    lastErrorMessage: str(r.last_error_message),
    nextEligibleAt: ts(r.next_eligible_at),
    cooldownUntil: ts(r.cooldown_until),
    currentRunId: str(r.current_run_id),
    lastOutcome: outcomeCodes.fromDb(str(r.last_outcome)) ?? RunOutcome.UNSPECIFIED,
    documentsCount: big(r.documents_total),
    eventsCount: big(r.events_total),
    faultsCount: big(r.faults_total),
    holesCount: big(r.holes_total),
    updatedAt: ts(r.updated_at),
    gapsCheckedNsu: big(r.gaps_checked_nsu),
    shortPageEnds: Number(r.short_page_ends),
  });
}

export function runFromRow(r: Row): Run {
  return create(RunSchema, {
    runId: str(r.id),
    feed: feedKeyOf(str(r.ibge), num(r.ambiente), str(r.tipo_nsu)),
    holder: str(r.holder),
    fenceToken: big(r.fence_token),
    trigger: triggerCodes.fromDb(str(r.trigger_kind)) ?? 0,
    pool: poolCodes.fromDb(str(r.pool)) ?? 0,
    startedAt: ts(r.started_at),
    finishedAt: ts(r.finished_at),
    lastProgressAt: ts(r.last_progress_at),
    startCursor: big(r.from_nsu),
    endCursor: r.to_nsu === null || r.to_nsu === undefined ? big(r.from_nsu) : big(r.to_nsu),
    maxNsuSeen: big(r.max_nsu_seen),
    batches: num(r.batches),
    documentsInserted: big(r.documents),
    documentsUpdated: big(r.documents_updated),
    eventsInserted: big(r.events),
    eventsUpdated: big(r.events_updated),
    faults: big(r.faults),
    holesRecorded: big(r.holes_recorded),
    outcome: outcomeCodes.fromDb(str(r.outcome)) ?? RunOutcome.UNSPECIFIED,
    errorMessage: str(r.error_message),
    nextEligibleAt: ts(r.next_eligible_at),
    cooldownUntil: ts(r.cooldown_until),
    cancelRequested: r.cancel_requested_at instanceof Date,
    cancelRequestedBy: str(r.cancel_requested_by),
  });
}

export function municipalityFromRows(m: Row, feeds: Row[]): Municipality {
  return create(MunicipalitySchema, {
    ibge: str(m.ibge),
    name: str(m.name),
    uf: str(m.uf),
    active: num(m.active) === 1,
    feeds: feeds.map((f) => ({
      ambiente: num(f.ambiente),
      tipoNsu: tipoNsuCodes.fromDb(str(f.tipo_nsu)) ?? 0,
      enabled: num(f.enabled) === 1,
    })),
    createdAt: ts(m.created_at),
    updatedAt: ts(m.updated_at),
  });
}

export function documentFromRow(ibge: string, r: Row, includeXml: boolean): DocumentRecord {
  const pb = bytes(r.documento_pb);
  const document = pb.byteLength
    ? fromBinary(DocumentSchema, pb)
    : create(DocumentSchema, {
        // Rows written by SQL directly (not through ApplyBatch) carry only the index columns.
        chave: str(r.chave),
        numero: str(r.numero),
        versao: str(r.versao),
        prestador: r.prestador_documento
          ? {
              document: {
                kind: str(r.prestador_documento).length === 14 ? TaxIdKind.CNPJ : TaxIdKind.CPF,
                number: str(r.prestador_documento),
              },
            }
          : undefined,
        tomador: r.tomador_documento
          ? {
              document: { kind: str(r.tomador_documento).length === 14 ? TaxIdKind.CNPJ : TaxIdKind.CPF, number: str(r.tomador_documento) },
            }
          : undefined,
        dhEmi: ts(r.data_emissao),
        dhProc: ts(r.data_processamento),
      });
  document.status = documentStatusCodes.fromDb(str(r.situacao)) ?? DocumentStatus.ATIVA;
  document.chaveSubstituta = str(r.chave_substituta);
  return create(DocumentRecordSchema, {
    document,
    feed: feedKeyOf(ibge, num(r.ambiente), str(r.tipo_nsu)),
    nsu: big(r.nsu),
    dataHoraGeracao: ts(r.data_geracao_adn),
    xmlSha256: str(r.xml_sha256),
    xml: includeXml ? bytes(r.xml) : new Uint8Array(0),
    createdAt: ts(r.created_at),
    updatedAt: ts(r.updated_at),
  });
}

export function eventFromRow(ibge: string, r: Row, includeXml: boolean, documentPresent: boolean): EventRecord {
  const pb = bytes(r.evento_pb);
  const event = pb.byteLength
    ? fromBinary(EventSchema, pb)
    : create(EventSchema, { id: str(r.id_evento), chave: str(r.chave), codigo: str(r.codigo), dhProc: ts(r.data_processamento) });
  return create(EventRecordSchema, {
    event,
    feed: feedKeyOf(ibge, num(r.ambiente), str(r.tipo_nsu)),
    nsu: big(r.nsu),
    dataHoraGeracao: ts(r.data_geracao_adn),
    xmlSha256: str(r.xml_sha256),
    xml: includeXml ? bytes(r.xml) : new Uint8Array(0),
    createdAt: ts(r.created_at),
    documentPresent,
  });
}

export function quarantineFromRow(r: Row, includePayload: boolean): QuarantineEntry {
  return create(QuarantineEntrySchema, {
    id: str(r.id),
    feed: feedKeyOf(str(r.ibge), num(r.ambiente), str(r.tipo_nsu)),
    nsu: big(r.nsu),
    chave: str(r.chave),
    reason: faultReasonCodes.fromDb(str(r.reason)) ?? FaultReason.UNSPECIFIED,
    message: str(r.message),
    dataHoraGeracao: ts(r.data_geracao_adn),
    rawPayload: includePayload ? bytes(r.payload) : new Uint8Array(0),
    xml: includePayload ? bytes(r.xml) : new Uint8Array(0),
    runId: str(r.run_id),
    quarantinedAt: ts(r.created_at),
  });
}

export function cursorResetFromRow(r: Row): CursorReset {
  return create(CursorResetSchema, {
    id: str(r.id),
    feed: feedKeyOf(str(r.ibge), num(r.ambiente), str(r.tipo_nsu)),
    previousCursor: big(r.old_nsu),
    newCursor: big(r.new_nsu),
    operator: str(r.operator),
    reason: str(r.reason),
    resetAt: ts(r.created_at),
  });
}
