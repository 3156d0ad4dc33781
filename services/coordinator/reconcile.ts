import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import type { Client } from "@connectrpc/connect";
import { ConnectError } from "@connectrpc/connect";
import type { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import type { FeedKey } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { NotEligibleSchema, RunOutcome, RunTrigger, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { Lease } from "../../libs/leases/types.js";

export interface ReconcileDeps {
  store: Client<typeof StoreService>;
  gateway: Client<typeof AdnGatewayService>;
}

export type ReconcileResult =
  | { kind: "not-eligible" }
  | { kind: "done"; looked: number; filled: number; holes: number; remainingGaps: boolean };

/**
 * Back-fills NSU gaps of one feed with single-NSU look-ups (`lote=false`), at most `budget` calls.
 * The ADN's NSU series is gap-free for an interested party (adn.md §2.3), so every gap below the
 * cursor is either a document we missed or a hole the ADN confirms; both end up recorded. Runs under
 * the feed's lease like any sync, as a reconciliation run: the store never moves the cursor for it.
 */
export async function reconcileFeed(deps: ReconcileDeps, lease: Lease, feed: FeedKey, budget: number): Promise<ReconcileResult> {
  if (budget <= 0) return { kind: "done", looked: 0, filled: 0, holes: 0, remainingGaps: false };
  const call = { signal: lease.signal };
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
  let looked = 0;
  let filled = 0;
  let holes = 0;
  let remainingGaps = false;
  let outcome = RunOutcome.CAUGHT_UP;
  let error = "";
  try {
    const found = await deps.store.findNsuGaps({ feed, range: { start: 1n, end: cursor }, limit: budget }, call);
    const missing: bigint[] = [];
    for (const gap of found.gaps) {
      for (let nsu = gap.start; nsu <= gap.end && missing.length < budget; nsu++) missing.push(nsu);
    }
    remainingGaps = found.truncated || BigInt(missing.length) < found.missingCount;
    for (const nsu of missing) {
      if (lease.signal.aborted) break;
      looked++;
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
    }
  } catch (err) {
    if (lease.signal.aborted) throw err;
    outcome = RunOutcome.FAILED;
    error = ConnectError.from(err).message;
  }
  // A reconciliation must not change when the feed may next ask for a batch: hand back the time the
  // store already has (it only moves forward), or now for a feed that never finished a run.
  const nextEligibleAt = begin.nextEligibleAt ?? timestampFromMs(Date.now());
  await deps.store.finishRun(
    { feed, runId, fenceToken: lease.fenceToken, outcome, errorMessage: error, ...(outcome === RunOutcome.CAUGHT_UP ? { nextEligibleAt } : {}) },
    call,
  );
  return { kind: "done", looked, filled, holes, remainingGaps };
}
