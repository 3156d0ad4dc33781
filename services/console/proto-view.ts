// Conversions from the services' protobuf messages to the console's JSON shapes (api-types.ts): enum names,
// instants as ISO strings, feed keys in both directions. Shared by every *-view.ts.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { Ambiente, TipoNsu, type FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunOutcome, RunTrigger, type Run } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { AmbienteName, RunOutcomeName, RunTriggerName, RunView, TipoNsuName } from "./api-types.js";
import { badRequest } from "./http-kit.js";

export const iso = (t: Timestamp | undefined): string | undefined =>
  t && (t.seconds !== 0n || t.nanos !== 0) ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString() : undefined;

export const timestamp = (ms: number): Timestamp => timestampFromMs(ms);

/** `{ key: value }` when the value is set, `{}` otherwise: keeps absent fields absent in the JSON. */
export const opt = <K extends string, V>(key: K, value: V | undefined | ""): Partial<Record<K, V>> =>
  value === undefined || value === "" ? {} : ({ [key]: value } as Record<K, V>);

export const AMBIENTES: Partial<Record<Ambiente, AmbienteName>> = {
  [Ambiente.PRODUCAO]: "producao",
  [Ambiente.PRODUCAO_RESTRITA]: "producao_restrita",
};
export const TIPOS: Partial<Record<TipoNsu, TipoNsuName>> = {
  [TipoNsu.DISTRIBUICAO]: "distribuicao",
  [TipoNsu.RECEPCAO]: "recepcao",
  [TipoNsu.GERAL]: "geral",
  [TipoNsu.MEI]: "mei",
};

export function feedKeyView(k: FeedKey | undefined): { ibge: string; ambiente: AmbienteName; tipoNsu: TipoNsuName } {
  return {
    ibge: k?.ibge ?? "",
    ambiente: AMBIENTES[k?.ambiente ?? Ambiente.UNSPECIFIED] ?? "producao",
    tipoNsu: TIPOS[k?.tipoNsu ?? TipoNsu.UNSPECIFIED] ?? "distribuicao",
  };
}

const IBGE = /^[0-9]{7}$/;

/** A feed named in a console URL (/feeds/<ibge>/<ambiente>/<tipo>), checked before it reaches any service. */
export function parseFeedKey(ibge: string, ambiente: string, tipoNsu: string): { ibge: string; ambiente: Ambiente; tipoNsu: TipoNsu } {
  if (!IBGE.test(ibge)) throw badRequest("ibge must be 7 digits");
  const amb = Object.entries(AMBIENTES).find(([, name]) => name === ambiente)?.[0];
  if (amb === undefined) throw badRequest(`ambiente must be one of ${Object.values(AMBIENTES).join(", ")}`);
  const tipo = Object.entries(TIPOS).find(([, name]) => name === tipoNsu)?.[0];
  if (tipo === undefined) throw badRequest(`tipoNsu must be one of ${Object.values(TIPOS).join(", ")}`);
  return { ibge, ambiente: Number(amb) as Ambiente, tipoNsu: Number(tipo) as TipoNsu };
}

const OUTCOMES: Record<RunOutcome, RunOutcomeName> = {
  [RunOutcome.UNSPECIFIED]: "running",
  [RunOutcome.CAUGHT_UP]: "caught_up",
  [RunOutcome.YIELDED]: "yielded",
  [RunOutcome.RATE_LIMITED]: "rate_limited",
  [RunOutcome.FAILED]: "failed",
  [RunOutcome.CANCELLED]: "cancelled",
  [RunOutcome.ABANDONED]: "abandoned",
};
const TRIGGERS: Partial<Record<RunTrigger, RunTriggerName>> = {
  [RunTrigger.SCHEDULED]: "scheduled",
  [RunTrigger.SYNC_NOW]: "sync_now",
  [RunTrigger.SYNC_ALL]: "sync_all",
  [RunTrigger.RESUME]: "resume",
  [RunTrigger.RECONCILIATION]: "reconciliation",
};

export function toRunView(r: Run): RunView {
  return {
    runId: r.runId,
    trigger: TRIGGERS[r.trigger] ?? "unknown",
    holder: r.holder,
    ...opt("startedAt", iso(r.startedAt)),
    ...opt("finishedAt", iso(r.finishedAt)),
    ...opt("lastProgressAt", iso(r.lastProgressAt)),
    startCursor: r.startCursor.toString(),
    endCursor: r.endCursor.toString(),
    maxNsuSeen: r.maxNsuSeen.toString(),
    batches: r.batches,
    documents: Number(r.documentsInserted + r.documentsUpdated),
    events: Number(r.eventsInserted + r.eventsUpdated),
    faults: Number(r.faults),
    holesRecorded: Number(r.holesRecorded),
    outcome: OUTCOMES[r.outcome] ?? "running",
    ...opt("error", r.errorMessage),
    ...opt("cancelRequestedBy", r.cancelRequested ? r.cancelRequestedBy || "?" : undefined),
  };
}
