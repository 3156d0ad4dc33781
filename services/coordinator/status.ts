import { create } from "@bufbuild/protobuf";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { FeedState, FeedStatusSchema, type FeedStatus } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { SyncStatus, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";
import { poolFor } from "./decide.js";

export interface LiveView {
  now: number;
  queuedHere: boolean;
  leaseHolder?: string;
  bootstrapThresholdNsu: bigint;
  /** An ACTIVE, unexpired certificate in the vault (cached view). */
  hasActiveCertificate?: boolean;
}

/**
 * A feed's status: the store's durable state joined with what is live (lease, queue). Precedence of
 * the one state shown: DISABLED, RUNNING, QUEUED, COOLING_DOWN, WAITING, IDLE.
 */
export function feedStatus(state: SyncState, live: LiveView): FeedStatus {
  const ms = (t: SyncState["nextEligibleAt"]) => (t ? timestampDate(t).getTime() : 0);
  let feedState: FeedState;
  if (!state.enabled || !state.municipalityActive) feedState = FeedState.DISABLED;
  else if (live.leaseHolder || state.status === SyncStatus.RUNNING) feedState = FeedState.RUNNING;
  else if (live.queuedHere) feedState = FeedState.QUEUED;
  else if (ms(state.cooldownUntil) > live.now) feedState = FeedState.COOLING_DOWN;
  else if (ms(state.nextEligibleAt) > live.now) feedState = FeedState.WAITING;
  else feedState = FeedState.IDLE;
  return create(FeedStatusSchema, {
    feed: state.feed,
    state: feedState,
    cursor: state.lastNsu,
    maxNsu: state.maxNsu,
    leaseHolder: live.leaseHolder ?? "",
    pool: poolFor(state, live.bootstrapThresholdNsu),
    ...(state.nextEligibleAt ? { nextEligibleAt: state.nextEligibleAt } : {}),
    ...(state.cooldownUntil ? { cooldownUntil: state.cooldownUntil } : {}),
    ...(state.lastSuccessAt ? { lastSuccessAt: state.lastSuccessAt } : {}),
    ...(state.lastErrorAt ? { lastErrorAt: state.lastErrorAt } : {}),
    lastErrorMessage: state.lastErrorMessage,
    lastOutcome: state.lastOutcome,
    documentsCount: state.documentsCount,
    eventsCount: state.eventsCount,
    faultsCount: state.faultsCount,
    hasActiveCertificate: live.hasActiveCertificate ?? false,
  });
}
