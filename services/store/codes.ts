// Enum ↔ column-value maps. The columns hold stable words (ascii), never proto numbers, so the tables
// stay readable by SQL users and independent of enum renumbering.
import { Ambiente, TipoNsu, type FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { FaultReason } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { DocumentStatus } from "../../libs/gen/malha/nfse/v1/document_pb.js";
import { TipoEvento } from "../../libs/gen/malha/nfse/v1/event_pb.js";
import { RunOutcome, RunTrigger, SyncPool, SyncStatus } from "../../libs/gen/malha/store/v1/types_pb.js";
import { badRequest } from "./errors.js";
import { parseIbge, type Ibge } from "./ibge.js";

function bimap<E extends number>(pairs: [E, string][]) {
  const toDb = new Map<E, string>(pairs);
  const fromDb = new Map<string, E>(pairs.map(([e, s]) => [s, e]));
  return {
    toDb: (e: E): string | undefined => toDb.get(e),
    fromDb: (s: string | null | undefined): E | undefined => (s == null ? undefined : fromDb.get(s)),
  };
}

export const tipoNsuCodes = bimap<TipoNsu>([
  [TipoNsu.DISTRIBUICAO, "DISTRIBUICAO"],
  [TipoNsu.RECEPCAO, "RECEPCAO"],
  [TipoNsu.GERAL, "GERAL"],
  [TipoNsu.MEI, "MEI"],
]);

export const syncStatusCodes = bimap<SyncStatus>([
  [SyncStatus.IDLE, "idle"],
  [SyncStatus.RUNNING, "running"],
  [SyncStatus.ERROR, "error"],
]);

export const triggerCodes = bimap<RunTrigger>([
  [RunTrigger.SCHEDULED, "scheduled"],
  [RunTrigger.SYNC_NOW, "sync_now"],
  [RunTrigger.SYNC_ALL, "sync_all"],
  [RunTrigger.RESUME, "resume"],
  [RunTrigger.RECONCILIATION, "reconciliation"],
]);

export const poolCodes = bimap<SyncPool>([
  [SyncPool.INCREMENTAL, "incremental"],
  [SyncPool.BOOTSTRAP, "bootstrap"],
  [SyncPool.RECONCILIATION, "reconciliation"],
]);

/** `running` marks a run in progress (RUN_OUTCOME_UNSPECIFIED on the wire). */
export const outcomeCodes = bimap<RunOutcome>([
  [RunOutcome.CAUGHT_UP, "caught_up"],
  [RunOutcome.YIELDED, "yielded"],
  [RunOutcome.RATE_LIMITED, "rate_limited"],
  [RunOutcome.FAILED, "failed"],
  [RunOutcome.CANCELLED, "cancelled"],
  [RunOutcome.ABANDONED, "abandoned"],
]);
export const RUNNING = "running";
/** Outcomes whose run logs are kept longer (PurgeRunLogs.failed_finished_before). */
export const FAILED_OUTCOMES = ["failed", "rate_limited", "abandoned"] as const;
export const OK_OUTCOMES = ["caught_up", "yielded", "cancelled"] as const;

export const documentStatusCodes = bimap<DocumentStatus>([
  [DocumentStatus.ATIVA, "ATIVA"],
  [DocumentStatus.CANCELADA, "CANCELADA"],
  [DocumentStatus.SUBSTITUIDA, "SUBSTITUIDA"],
  [DocumentStatus.ANALISE_PENDENTE, "ANALISE_PENDENTE"],
]);

export const faultReasonCodes = bimap<FaultReason>([
  [FaultReason.BAD_BASE64, "BAD_BASE64"],
  [FaultReason.BAD_GZIP, "BAD_GZIP"],
  [FaultReason.TOO_LARGE, "TOO_LARGE"],
  [FaultReason.BAD_XML, "BAD_XML"],
  [FaultReason.MISSING_FIELD, "MISSING_FIELD"],
  [FaultReason.UNKNOWN_DOCUMENT_TYPE, "UNKNOWN_DOCUMENT_TYPE"],
  [FaultReason.INVALID_VALUE, "INVALID_VALUE"],
]);

/** The 6-digit code of each known event type (adn.md §5.2); the DAN/MAN types have no published code. */
export const CODIGO_BY_TIPO_EVENTO: ReadonlyMap<TipoEvento, string> = new Map([
  [TipoEvento.CANCELAMENTO, "101101"],
  [TipoEvento.CANCELAMENTO_POR_SUBSTITUICAO, "105102"],
  [TipoEvento.SOLICITACAO_CANCELAMENTO_ANALISE_FISCAL, "101103"],
  [TipoEvento.CANCELAMENTO_DEFERIDO_ANALISE_FISCAL, "105104"],
  [TipoEvento.CANCELAMENTO_INDEFERIDO_ANALISE_FISCAL, "105105"],
  [TipoEvento.CONFIRMACAO_PRESTADOR, "202201"],
  [TipoEvento.CONFIRMACAO_TOMADOR, "203202"],
  [TipoEvento.CONFIRMACAO_INTERMEDIARIO, "204203"],
  [TipoEvento.CONFIRMACAO_TACITA, "205204"],
  [TipoEvento.REJEICAO_PRESTADOR, "202205"],
  [TipoEvento.REJEICAO_TOMADOR, "203206"],
  [TipoEvento.REJEICAO_INTERMEDIARIO, "204207"],
  [TipoEvento.ANULACAO_REJEICAO, "205208"],
  [TipoEvento.CANCELAMENTO_POR_OFICIO, "305101"],
  [TipoEvento.BLOQUEIO_POR_OFICIO, "305102"],
  [TipoEvento.DESBLOQUEIO_POR_OFICIO, "305103"],
]);

/** A validated feed: the three columns that key `nfse_sync_state` and the per-municipality rows. */
export interface Feed {
  ibge: Ibge;
  ambiente: number;
  tipoNsu: string;
}

export function parseFeed(feed: FeedKey | undefined, field = "feed"): Feed {
  if (!feed) throw badRequest(`${field} is required`);
  const ibge = parseIbge(feed.ibge);
  if (feed.ambiente !== Ambiente.PRODUCAO && feed.ambiente !== Ambiente.PRODUCAO_RESTRITA) {
    throw badRequest(`${field}.ambiente must be PRODUCAO or PRODUCAO_RESTRITA`);
  }
  const tipoNsu = tipoNsuCodes.toDb(feed.tipoNsu);
  if (tipoNsu === undefined) throw badRequest(`${field}.tipo_nsu must be set`);
  return { ibge, ambiente: feed.ambiente, tipoNsu };
}

/** Optional ambiente/tipo_nsu filters (UNSPECIFIED = any). */
export function optionalAmbiente(value: Ambiente, field = "ambiente"): number | undefined {
  if (value === Ambiente.UNSPECIFIED) return undefined;
  if (value !== Ambiente.PRODUCAO && value !== Ambiente.PRODUCAO_RESTRITA) throw badRequest(`unknown ${field} ${value}`);
  return value;
}

export function optionalTipoNsu(value: TipoNsu, field = "tipo_nsu"): string | undefined {
  if (value === TipoNsu.UNSPECIFIED) return undefined;
  const code = tipoNsuCodes.toDb(value);
  if (code === undefined) throw badRequest(`unknown ${field} ${value}`);
  return code;
}

export function feedKeyOf(ibge: string, ambiente: number, tipoNsu: string): FeedKey {
  return {
    $typeName: "malha.nfse.v1.FeedKey",
    ibge,
    ambiente: ambiente as Ambiente,
    tipoNsu: tipoNsuCodes.fromDb(tipoNsu) ?? TipoNsu.UNSPECIFIED,
  };
}

export function feedLabel(feed: Feed): string {
  return `${feed.ibge}/${feed.ambiente}/${feed.tipoNsu}`;
}
