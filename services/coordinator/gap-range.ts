// Where a feed's gap scan looks: above what an earlier scan found complete (`gaps_checked_nsu`), up to
// the cursor (docs/decisions/0046-gap-scans-start-where-the-last-one-ended.md). The scheduler's hourly
// scan and a reconciliation step ask the same range.
import type { SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";

/** The NSUs not yet found complete, or undefined when there are none (the feed costs no call). */
export function uncheckedNsus(state: Pick<SyncState, "gapsCheckedNsu" | "lastNsu">): { start: bigint; end: bigint } | undefined {
  const start = state.gapsCheckedNsu + 1n;
  return start > state.lastNsu ? undefined : { start, end: state.lastNsu };
}
