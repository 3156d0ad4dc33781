// The "Sincronização" page's data and buttons, as plain async functions over the coordinator and the
// store. The HTTP layer (routes/sync.ts) decides who may call them; this file only shapes the answers.
// The list is read one page at a time, UF and state filtered in the store's SQL and QUEUED in the
// coordinator's queue (docs/decisions/0026-feed-filters-in-sql.md), so a refresh every few seconds costs
// one page, not the whole fleet, whatever the filter.
import { Code, ConnectError, type Client } from "@connectrpc/connect";
import {
  FeedState,
  SkipReason,
  type CoordinatorService,
  type FeedDecision,
  type FeedStatus,
} from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import type { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { CancelResponse, DecisionView, FeedStateName, FeedsPage, FeedView, SkipReasonName, SyncResponse } from "./api-types.js";
import { badRequest } from "./http-kit.js";
import type { CertificateExpiry } from "./certificate-expiry.js";
import { createMunicipioDirectory, fold, type MunicipioDirectory } from "./municipios.js";
import { feedKeyView, iso, opt } from "./proto-view.js";

export interface SyncViewDeps {
  coordinator: Client<typeof CoordinatorService>;
  store: Client<typeof StoreService>;
  municipios?: MunicipioDirectory;
  /** Expiry dates of the active certificates (the vault's); without it the page shows only present/absent. */
  certificates?: CertificateExpiry;
  now?: () => Date;
}

export interface FeedFilter {
  /** An ibge (7 digits) or part of a municipality's name. */
  q?: string;
  uf?: string;
  state?: FeedStateName;
  pageSize?: number;
  pageToken?: string;
}

export interface FeedKeyInput {
  ibge: string;
  ambiente: Ambiente;
  tipoNsu: TipoNsu;
}

export interface SyncView {
  listFeeds(filter?: FeedFilter): Promise<FeedsPage>;
  syncAll(actor: string): Promise<SyncResponse>;
  syncNow(actor: string, ibge: string): Promise<SyncResponse>;
  cancel(actor: string, feed: FeedKeyInput): Promise<CancelResponse>;
}

/** Every open Sincronização tab re-reads its page every 2 s: a page is what an operator scans, not the fleet. */
export const DEFAULT_PAGE_SIZE = 100;
export const MAX_PAGE_SIZE = 1000;
/** A name or UF filter matching at most this many municipalities asks for each one by ibge. */
const PER_MUNICIPIO_LIMIT = 25;
/** Coordinator calls one filtered page may make before it answers with what it has and a token. */
const MAX_SCAN_CALLS = 20;

/** Each of the operators' states as the coordinator's filter; "error" and "waiting" split WAITING by the last run. */
const STATE_FILTER: Record<FeedStateName, { state: FeedState; lastRunFailed?: boolean }> = {
  idle: { state: FeedState.IDLE },
  queued: { state: FeedState.QUEUED },
  running: { state: FeedState.RUNNING },
  waiting: { state: FeedState.WAITING, lastRunFailed: false },
  cooling_down: { state: FeedState.COOLING_DOWN },
  disabled: { state: FeedState.DISABLED },
  error: { state: FeedState.WAITING, lastRunFailed: true },
};

export function createSyncView(deps: SyncViewDeps): SyncView {
  const now = deps.now ?? (() => new Date());
  const municipios = deps.municipios ?? createMunicipioDirectory(deps.store);
  return {
    async listFeeds(filter = {}) {
      const pageSize = Math.min(Math.max(filter.pageSize ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
      const q = filter.q?.trim() ?? "";
      const state = filter.state;
      // UF and state are filters of the coordinator's (and the store's SQL): the page reads its rows only.
      const selection = { uf: filter.uf ?? "", ...(state ? STATE_FILTER[state] : { state: FeedState.UNSPECIFIED }) };
      const [list, expiry] = await Promise.all([municipios.list(), deps.certificates?.byIbge() ?? new Map<string, string>()]);
      const places = new Map(list.map((m) => [m.ibge, m]));
      // The live queue or lease may have moved a feed on since the store read it: the view's state decides.
      const keep = (v: FeedView) => !state || v.state === state;
      const view = (s: FeedStatus) => toFeedView(s, places.get(s.feed?.ibge ?? ""), expiry.get(s.feed?.ibge ?? ""));

      let ibges: string[] | undefined;
      if (/^[0-9]{7}$/.test(q)) ibges = [q];
      else if (q !== "") {
        const text = fold(q);
        ibges = [...places.values()]
          .filter((m) => (!filter.uf || m.uf === filter.uf) && (fold(m.name).includes(text) || m.ibge.startsWith(q)))
          .map((m) => m.ibge);
      }
      const token = filter.pageToken ?? "";
      if (ibges !== undefined && ibges.length <= PER_MUNICIPIO_LIMIT) {
        const statuses = await Promise.all(
          ibges.map(async (ibge) => (await deps.coordinator.listFeedStatus({ ...selection, ibge, pageSize: 100 })).statuses),
        );
        return { feeds: statuses.flat().map(view).filter(keep), at: now().toISOString() };
      }
      // Only a name matching many municipalities is still applied here, over the filtered pages.
      const wanted = ibges ? new Set(ibges) : undefined;
      if (token !== "" && !token.startsWith("c")) throw badRequest("pageToken is not one this console issued");
      let pageToken = token.slice(1);
      const feeds: FeedView[] = [];
      for (let calls = 0; calls < MAX_SCAN_CALLS && feeds.length < pageSize; calls++) {
        // Ask only for what is still missing, so the coordinator's token never skips a row we did not show.
        const page = await deps.coordinator.listFeedStatus({ ...selection, pageSize: pageSize - feeds.length, pageToken });
        for (const s of page.statuses) {
          const v = view(s);
          if ((!wanted || wanted.has(v.ibge)) && keep(v)) feeds.push(v);
        }
        pageToken = page.nextPageToken;
        if (!pageToken) break;
      }
      return { feeds, at: now().toISOString(), ...opt("nextPageToken", pageToken ? `c${pageToken}` : "") };
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
    async cancel(actor, feed) {
      try {
        const res = await deps.coordinator.cancelSync({
          target: { case: "feed", value: feed },
          requestedBy: actor,
          reason: "cancelado no painel",
        });
        return { dequeued: res.dequeued, ...opt("runId", res.run?.runId), nothingToCancel: res.nothingToCancel };
      } catch (err) {
        // Neither queued nor running: the store finds no run to flag. For the operator that is "nothing to cancel".
        const e = ConnectError.from(err);
        if (e.code === Code.NotFound && e.findDetails(ErrorInfoSchema).some((d) => d.reason === "RUN_NOT_FOUND")) {
          return { dequeued: false, nothingToCancel: true };
        }
        throw err;
      }
    },
  };
}

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

export function toFeedView(s: FeedStatus, place: { name: string; uf: string } | undefined, certificateNotAfter?: string): FeedView {
  let state = STATES[s.state] ?? "idle";
  // The coordinator reports a feed backing off after a failure as WAITING; operators call that an error.
  if (state === "waiting" && s.lastOutcome === RunOutcome.FAILED) state = "error";
  return {
    ...feedKeyView(s.feed),
    name: place?.name ?? "",
    uf: place?.uf ?? "",
    state,
    cursor: s.cursor.toString(),
    maxNsu: s.maxNsu.toString(),
    documents: Number(s.documentsCount),
    events: Number(s.eventsCount),
    faults: Number(s.faultsCount),
    hasActiveCertificate: s.hasActiveCertificate,
    ...opt("certificateNotAfter", s.hasActiveCertificate ? certificateNotAfter : undefined),
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
    ...feedKeyView(d.feed),
    accepted: d.accepted,
    ...(d.accepted ? {} : { reason: REASONS[d.reason] ?? "unknown" }),
    ...opt("notBefore", iso(d.notBefore)),
    ...opt("leaseHolder", d.leaseHolder),
  };
}
