// ADN envelope → gateway responses (pure: no I/O, testable alone). Items are decoded one by one; a bad
// item becomes a fault item and never fails the call.
import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { AdnEnvelope } from "../../libs/adn/envelope.js";
import { decodeItem, type DecodeOptions } from "../../libs/adn/item.js";
import { parseAdnDateTime } from "../../libs/adn/time.js";
import { durationOfMs } from "../../libs/rpc/duration.js";
import { BatchStatus, CallInfoSchema, type CallInfo } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { DistributionItem } from "../../libs/gen/malha/nfse/v1/distribution_pb.js";
import { ConfirmedHoleSchema, type Ambiente, type ConfirmedHole } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { adnMessage, ambienteMismatch, rejection, unexpectedResponse } from "./errors.js";

const TIPO_AMBIENTE: Record<number, string> = { 1: "PRODUCAO", 2: "HOMOLOGACAO" };

export type Found = { found: true } | { found: false; codigo: string; descricao: string };

/**
 * Rejections, the ambiente fence and the status: throws the documented error, or says whether the ADN
 * found documents. A wrong ambiente is checked first: nothing from another environment is trusted.
 */
export function interpret(env: AdnEnvelope, httpStatus: number, expected: Ambiente): Found {
  if (env.tipoAmbiente !== undefined && env.tipoAmbiente !== TIPO_AMBIENTE[expected]) throw ambienteMismatch(expected, env.tipoAmbiente);
  if (env.statusProcessamento === "REJEICAO" || httpStatus === 400) throw rejection(env, httpStatus);
  if (env.tipoAmbiente === undefined) throw ambienteMismatch(expected, "");
  if (env.statusProcessamento === "NENHUM_DOCUMENTO_LOCALIZADO" && (httpStatus === 404 || httpStatus === 200)) {
    return { found: false, codigo: env.erros[0]?.codigo ?? "", descricao: env.erros[0]?.descricao ?? "" };
  }
  if (env.statusProcessamento === "DOCUMENTOS_LOCALIZADOS" && httpStatus === 200) return { found: true };
  throw unexpectedResponse(
    httpStatus,
    "application/json",
    Buffer.alloc(0),
    `StatusProcessamento ${env.statusProcessamento} with HTTP ${httpStatus}`,
  );
}

export function callInfo(env: AdnEnvelope, attempts: number, elapsedMs: number, httpStatus: number): CallInfo {
  const processed = env.dataHoraProcessamento ? parseAdnDateTime(env.dataHoraProcessamento) : undefined;
  return create(CallInfoSchema, {
    ...(processed ? { adnProcessedAt: processed } : {}),
    versaoAplicativo: env.versaoAplicativo,
    alerts: env.alertas.map(adnMessage),
    attempts,
    elapsed: durationOfMs(elapsedMs),
    httpStatus,
  });
}

export function decodeAll(env: AdnEnvelope, opts: DecodeOptions): DistributionItem[] {
  return env.lote.map((raw) => decodeItem(raw, opts));
}

export interface BatchResult<T extends { nsu: bigint } = DistributionItem> {
  status: BatchStatus;
  items: T[];
  highestNsu: bigint;
  pageSizeSeen: number;
  droppedCount: number;
  /** Same NSU sent twice in one batch: kept once. */
  duplicateCount: number;
  /** Faults without an NSU on an otherwise empty batch: they cannot move a cursor and reappear. */
  orphanFaults: number;
}

/**
 * Keeps items with NSU > afterNsu (whatever start semantics the ADN applied), once each, ascending. Items
 * without an NSU (faults) ride along in front when there is anything new. Only the NSU is looked at, so
 * the choice can be made on the envelope's entries before any of them is decoded.
 */
export function selectBatch<T extends { nsu: bigint }>(items: T[], afterNsu: bigint, pageSizeSeen: number): BatchResult<T> {
  const byNsu = new Map<bigint, T>();
  const orphans: T[] = [];
  let dropped = 0;
  let duplicates = 0;
  for (const item of items) {
    if (item.nsu === 0n) orphans.push(item);
    else if (item.nsu <= afterNsu) dropped++;
    else if (byNsu.has(item.nsu)) duplicates++;
    else byNsu.set(item.nsu, item);
  }
  const fresh = [...byNsu.values()].sort((a, b) => (a.nsu < b.nsu ? -1 : a.nsu > b.nsu ? 1 : 0));
  const status = fresh.length > 0 ? BatchStatus.DOCUMENTS_FOUND : BatchStatus.END_OF_STREAM;
  return {
    status,
    items: fresh.length > 0 ? [...orphans, ...fresh] : [],
    highestNsu: fresh.at(-1)?.nsu ?? 0n,
    pageSizeSeen,
    droppedCount: dropped,
    duplicateCount: duplicates,
    orphanFaults: fresh.length > 0 ? 0 : orphans.length,
  };
}

export function hole(nsu: bigint, codigo: string, descricao: string, env: AdnEnvelope, nowMs: number): ConfirmedHole {
  const at = (env.dataHoraProcessamento && parseAdnDateTime(env.dataHoraProcessamento)) || timestampFromMs(nowMs);
  return create(ConfirmedHoleSchema, { nsu, codigo, descricao, confirmedAt: at });
}
