import { create } from "@bufbuild/protobuf";
import { timestampDate, timestampFromMs, type Timestamp } from "@bufbuild/protobuf/wkt";
import { FeedDecisionSchema, SkipReason, type FeedDecision } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { SyncPool, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";

export interface DecideContext {
  now: number;
  /** Already queued or running in this coordinator. */
  queuedHere: boolean;
  /** Who holds the feed's lease, if anyone (possibly another replica). */
  leaseHolder?: string;
  /** The municipality has an ACTIVE certificate in the vault (undefined: not checked). */
  hasActiveCertificate?: boolean;
  bootstrapThresholdNsu: bigint;
}

/** A feed far behind (or never synced) belongs to the bootstrap pool, so it cannot starve the rest. */
export function poolFor(state: SyncState, thresholdNsu: bigint): SyncPool {
  if (state.lastNsu === 0n) return SyncPool.BOOTSTRAP;
  return state.maxNsu > state.lastNsu && state.maxNsu - state.lastNsu > thresholdNsu ? SyncPool.BOOTSTRAP : SyncPool.INCREMENTAL;
}

/**
 * Whether a feed may be synced now, and if not why and until when. The ADN's waits (one hour after
 * "no more documents", the 429 cool-down) are never overridden, not even by an operator's SyncNow.
 */
export function decide(state: SyncState, ctx: DecideContext): FeedDecision {
  const base = { feed: state.feed, pool: poolFor(state, ctx.bootstrapThresholdNsu) };
  const skip = (reason: SkipReason, extra: { notBefore?: Timestamp; leaseHolder?: string } = {}) =>
    create(FeedDecisionSchema, { ...base, accepted: false, reason, ...extra });
  if (!state.municipalityActive) return skip(SkipReason.MUNICIPALITY_INACTIVE);
  if (!state.enabled) return skip(SkipReason.FEED_DISABLED);
  if (ctx.hasActiveCertificate === false) return skip(SkipReason.NO_ACTIVE_CERTIFICATE);
  const cooldown = state.cooldownUntil ? timestampDate(state.cooldownUntil).getTime() : 0;
  if (cooldown > ctx.now) return skip(SkipReason.COOLING_DOWN, { notBefore: timestampFromMs(cooldown) });
  const eligible = state.nextEligibleAt ? timestampDate(state.nextEligibleAt).getTime() : 0;
  if (eligible > ctx.now) return skip(SkipReason.NOT_ELIGIBLE, { notBefore: timestampFromMs(eligible) });
  if (ctx.queuedHere) return skip(SkipReason.ALREADY_QUEUED);
  if (ctx.leaseHolder) return skip(SkipReason.LEASE_HELD, { leaseHolder: ctx.leaseHolder });
  return create(FeedDecisionSchema, { ...base, accepted: true });
}
