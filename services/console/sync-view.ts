// The "Sincronização" page's data and buttons, as plain async functions over the coordinator and the
// store. The HTTP layer (http.ts) decides who may call them; this file only shapes the answers.
import type { Timestamp } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import {
  FeedState,
  SkipReason,
  type CoordinatorService,
  type FeedDecision,
  type FeedStatus,
} from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu, type FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome } from "../../libs/gen/malha/store/v1/types_pb.js";
import type {
  AmbienteName,
  DecisionView,
  FeedStateName,
  FeedsResponse,
  FeedView,
  SkipReasonName,
  SyncResponse,
  TipoNsuName,
} from "./api-types.js";

export interface SyncViewDeps {
  coordinator: Client<typeof CoordinatorService>;
  store: Client<typeof StoreService>;
  now?: () => Date;
}

export interface SyncView {
  listFeeds(): Promise<FeedsResponse>;
  syncAll(actor: string): Promise<SyncResponse>;
  syncNow(actor: string, ibge: string): Promise<SyncResponse>;
}

/** Pages of ListFeedStatus are capped at 1000 by the coordinator; this bounds one snapshot. */
const MAX_PAGES = 100;

export function createSyncView(deps: SyncViewDeps): SyncView {
  const now = deps.now ?? (() => new Date());
  return {
    async listFeeds() {
      const [statuses, names] = await Promise.all([allStatuses(deps.coordinator), municipalityNames(deps.store)]);
      return {
        feeds: statuses.map((s) => toFeedView(s, names.get(s.feed?.ibge ?? ""))),
        at: now().toISOString(),
      };
    },
    async syncAll(actor) {
      const res = await deps.coordinator.syncAll({ requestedBy: actor });
      return { accepted: res.accepted, skipped: res.skipped, decisions: res.decisions.map(toDecisionView) };
    },
    async syncNow(actor, ibge) {
      const res = await deps.coordinator.syncNow({ ibge, requestedBy: actor });
      const decisions = res.decisions.map(toDecisionView);
      const accepted = decisions.filter((d) => d.accepted).length;
      return { accepted, skipped: decisions.length - accepted, decisions };
    },
  };
}

async function allStatuses(coordinator: Client<typeof CoordinatorService>): Promise<FeedStatus[]> {
  const out: FeedStatus[] = [];
  let pageToken = "";
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await coordinator.listFeedStatus({ pageSize: 1000, pageToken });
    out.push(...page.statuses);
    if (!page.nextPageToken) break;
    pageToken = page.nextPageToken;
  }
  return out;
}

/** Names and UFs are decoration: a store that does not answer leaves them empty instead of failing the page. */
async function municipalityNames(store: Client<typeof StoreService>): Promise<Map<string, { name: string; uf: string }>> {
  const names = new Map<string, { name: string; uf: string }>();
  try {
    let pageToken = "";
    for (let i = 0; i < MAX_PAGES; i++) {
      const page = await store.listMunicipalities({ pageSize: 500, pageToken });
      for (const m of page.municipalities) names.set(m.ibge, { name: m.name, uf: m.uf });
      if (!page.nextPageToken) break;
      pageToken = page.nextPageToken;
    }
  } catch {
    // Deliberately partial: the feed list itself comes from the coordinator.
  }
  return names;
}

const iso = (t: Timestamp | undefined): string | undefined =>
  t && (t.seconds !== 0n || t.nanos !== 0) ? new Date(Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6)).toISOString() : undefined;

const AMBIENTES: Partial<Record<Ambiente, AmbienteName>> = {
  [Ambiente.PRODUCAO]: "producao",
  [Ambiente.PRODUCAO_RESTRITA]: "producao_restrita",
};
const TIPOS: Partial<Record<TipoNsu, TipoNsuName>> = {
  [TipoNsu.DISTRIBUICAO]: "distribuicao",
  [TipoNsu.RECEPCAO]: "recepcao",
  [TipoNsu.GERAL]: "geral",
  [TipoNsu.MEI]: "mei",
};
const STATES: Partial<Record<FeedState, FeedStateName>> = {
  [FeedState.IDLE]: "idle",
  [FeedState.QUEUED]: "queued",
  [FeedState.RUNNING]: "running",
  [FeedState.WAITING]: "waiting",
  [FeedState.COOLING_DOWN]: "cooling_down",
  [FeedState.DISABLED]: "disabled",
};
const REASONS: Partial<Record<SkipReason, SkipReasonName>> = {
  [SkipReason.LEASE_HELD]: "lease_held",
  [SkipReason.ALREADY_QUEUED]: "already_queued",
  [SkipReason.NOT_ELIGIBLE]: "not_eligible",
  [SkipReason.COOLING_DOWN]: "cooling_down",
  [SkipReason.FEED_DISABLED]: "feed_disabled",
  [SkipReason.MUNICIPALITY_INACTIVE]: "municipality_inactive",
  [SkipReason.NO_ACTIVE_CERTIFICATE]: "no_active_certificate",
};

function feedKey(k: FeedKey | undefined): { ibge: string; ambiente: AmbienteName; tipoNsu: TipoNsuName } {
  return {
    ibge: k?.ibge ?? "",
    ambiente: AMBIENTES[k?.ambiente ?? Ambiente.UNSPECIFIED] ?? "producao",
    tipoNsu: TIPOS[k?.tipoNsu ?? TipoNsu.UNSPECIFIED] ?? "distribuicao",
  };
}

export function toFeedView(s: FeedStatus, place: { name: string; uf: string } | undefined): FeedView {
  let state = STATES[s.state] ?? "idle";
  // The coordinator reports a feed backing off after a failure as WAITING; operators call that an error.
  if (state === "waiting" && s.lastOutcome === RunOutcome.FAILED) state = "error";
  const opt = <K extends string, V>(key: K, value: V | undefined | "") =>
    value === undefined || value === "" ? {} : ({ [key]: value } as Record<K, V>);
  return {
    ...feedKey(s.feed),
    name: place?.name ?? "",
    uf: place?.uf ?? "",
    state,
    cursor: s.cursor.toString(),
    maxNsu: s.maxNsu.toString(),
    documents: Number(s.documentsCount),
    events: Number(s.eventsCount),
    faults: Number(s.faultsCount),
    hasActiveCertificate: s.hasActiveCertificate,
    ...opt("lastSuccessAt", iso(s.lastSuccessAt)),
    ...opt("lastErrorAt", iso(s.lastErrorAt)),
    ...opt("lastError", s.lastErrorMessage),
    ...opt("nextEligibleAt", iso(s.nextEligibleAt)),
    ...opt("cooldownUntil", iso(s.cooldownUntil)),
    ...opt("leaseHolder", s.leaseHolder),
  };
}

export function toDecisionView(d: FeedDecision): DecisionView {
  return {
    ...feedKey(d.feed),
    accepted: d.accepted,
    ...(d.accepted ? {} : { reason: REASONS[d.reason] ?? "unknown" }),
    ...(iso(d.notBefore) ? { notBefore: iso(d.notBefore)! } : {}),
    ...(d.leaseHolder ? { leaseHolder: d.leaseHolder } : {}),
  };
}
