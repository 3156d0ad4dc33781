import { timestampDate, timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { Code, ConnectError } from "@connectrpc/connect";
import { RateLimitedSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import type { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { NotEligibleSchema, RunOutcome, RunTrigger, StaleFenceSchema, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { Lease } from "../../libs/leases/types.js";
import { uncheckedNsus } from "./gap-range.js";

export interface ReconcileDeps {
  store: Client<typeof StoreService>;
  gateway: Client<typeof AdnGatewayService>;
  /** Wall clock for persisted times and for the waits read from the store. */
  now: () => number;
}

export interface ReconcileOptions {
  /** After a failed run the feed waits this long before reconciliation may call the ADN for it. */
  failureBackoffMs: number;
}

export type ReconcileResult =
  /** The feed has no gap below its cursor (or never reached one): nothing to do, no slot spent. */
  | { kind: "no-gaps" }
  /** Inside a 429 cool-down or a failure wait: the ADN is not called, no slot spent. */
  | { kind: "waiting"; until: number }
  /** The store refused the run (cool-down persisted meanwhile, disabled feed). */
  | { kind: "not-eligible" }
  | {
      kind: "done";
      runId: string;
      outcome: RunOutcome;
      looked: number;
      filled: number;
      holes: number;
      /** More gaps than the one looked up: the feed stays on the reconciliation list. */
      remainingGaps: boolean;
      error?: string;
    };

/** How long FinishRun may take when the lease's own signal can no longer carry it. */
const FINISH_TIMEOUT_MS = 15_000;

/**
 * One gap back-fill step of one feed: at most ONE single-NSU look-up (`lote=false`), so that the
 * hourly budget leaves evenly spread (the scheduler takes a step per certificate once it holds the
 * certificate's slot, one per 3600/budget s across replicas), never inside a 429 cool-down (persisted
 * by the store for every feed of the certificate) nor inside the wait after a failure. The ADN's NSU series is gap-free
 * for an interested party (adn.md §2.3), so every gap below the cursor is either a document we missed
 * or a hole the ADN confirms; both end up recorded. Runs under the feed's lease as a reconciliation
 * run, which the store never lets move the cursor; once begun, the run is finished on every path.
 */
export async function reconcileFeed(deps: ReconcileDeps, lease: Lease, feed: FeedKey, opts: ReconcileOptions): Promise<ReconcileResult> {
  const call = { signal: lease.signal };
  const { state } = await deps.store.getSyncState({ feed }, call);
  // Gaps only mean something below a cursor that a finished sync has reached.
  if (!state || state.lastNsu === 0n || state.lastSuccessAt === undefined) return { kind: "no-gaps" };
  const now = deps.now();
  const cooldownUntil = state.cooldownUntil ? timestampDate(state.cooldownUntil).getTime() : 0;
  if (cooldownUntil > now) return { kind: "waiting", until: cooldownUntil };
  // After a 429 the cool-down is the wait; after any other failure, the failure backoff.
  const failed = state.lastOutcome === RunOutcome.FAILED;
  const failureWaitEnds = failed && state.lastErrorAt ? timestampDate(state.lastErrorAt).getTime() + opts.failureBackoffMs : 0;
  if (failureWaitEnds > now) return { kind: "waiting", until: failureWaitEnds };

  const range = uncheckedNsus(state);
  if (!range) return { kind: "no-gaps" };
  const found = await deps.store.findNsuGaps({ feed, range, limit: 2 }, call);
  const nsu = found.gaps[0]?.start;
  if (nsu === undefined) return { kind: "no-gaps" };
  const remainingGaps = found.missingCount > 1n || found.truncated;

  let begin;
  try {
    begin = await deps.store.beginRun(
      { feed, holder: lease.holder, fenceToken: lease.fenceToken, trigger: RunTrigger.RECONCILIATION, pool: SyncPool.RECONCILIATION },
      call,
    );
  } catch (err) {
    if (ConnectError.from(err).findDetails(NotEligibleSchema).length > 0) return { kind: "not-eligible" };
    throw err;
  }
  const { runId, cursor } = begin;
  let filled = 0;
  let holes = 0;
  let outcome = RunOutcome.CAUGHT_UP;
  let error = "";
  let cooldown: number | undefined;
  try {
    const single = await deps.gateway.fetchSingle({ feed, nsu }, call);
    if (single.result.case === "item") {
      await deps.store.applyBatch(
        { feed, runId, fenceToken: lease.fenceToken, items: [single.result.value], newCursor: cursor, progress: { maxNsuSeen: cursor } },
        call,
      );
      filled++;
    } else if (single.result.case === "hole") {
      await deps.store.recordConfirmedHoles({ feed, runId, fenceToken: lease.fenceToken, holes: [single.result.value] }, call);
      holes++;
    }
  } catch (err) {
    const e = ConnectError.from(err);
    const rateLimited = e.code === Code.ResourceExhausted ? e.findDetails(RateLimitedSchema)[0] : undefined;
    if (rateLimited) {
      // Persisted like the 429 of a batch: the store then refuses every run of the certificate's feeds,
      // whichever coordinator asks, and so no gateway replica is asked to call the ADN until it ends.
      outcome = RunOutcome.RATE_LIMITED;
      cooldown = rateLimited.cooldownUntil ? timestampDate(rateLimited.cooldownUntil).getTime() : deps.now() + opts.failureBackoffMs;
      error = e.rawMessage;
    } else {
      outcome = RunOutcome.FAILED;
      error = lease.signal.aborted
        ? `the feed's lease ended during the look-up of NSU ${nsu} (${String(lease.signal.reason?.message ?? lease.signal.reason ?? "aborted")})`
        : `${Code[e.code]}: ${e.rawMessage}`;
    }
  }
  // A reconciliation must not change when the feed may next ask for a batch: hand back the time the
  // store already has (it only moves forward), or now for a feed that never finished a run.
  const nextEligibleAt = begin.nextEligibleAt ?? timestampFromMs(deps.now());
  await finishRun(deps, {
    feed,
    runId,
    fenceToken: lease.fenceToken,
    outcome,
    errorMessage: error,
    ...(outcome === RunOutcome.CAUGHT_UP ? { nextEligibleAt } : {}),
    ...(cooldown !== undefined ? { cooldownUntil: timestampFromMs(cooldown) } : {}),
  });
  return { kind: "done", runId, outcome, looked: 1, filled, holes, remainingGaps, ...(error ? { error } : {}) };
}

/**
 * FinishRun with a signal of its own: the lease's may have aborted, which is exactly when the run most
 * needs finishing. A newer holder's BeginRun has already closed the run as ABANDONED (STALE_FENCE here):
 * nothing is left to do. A store that is briefly away gets a few more tries.
 */
async function finishRun(deps: ReconcileDeps, req: Parameters<ReconcileDeps["store"]["finishRun"]>[0]): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await deps.store.finishRun(req, { signal: AbortSignal.timeout(FINISH_TIMEOUT_MS) });
      return;
    } catch (err) {
      const e = ConnectError.from(err);
      if (e.findDetails(StaleFenceSchema).length > 0) return;
      if (attempt >= 3 || (e.code !== Code.Unavailable && e.code !== Code.DeadlineExceeded)) throw e;
      await new Promise((r) => setTimeout(r, 200 * attempt));
    }
  }
}
