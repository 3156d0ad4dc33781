// The job and item state machines (seeds 002/003). Every transition is a conditional UPDATE naming the
// states it may leave, so a redelivered message or a second process can never move a row backwards.
import { ItemState, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";

export const FINAL_JOB_STATES = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED] as const;
export const RUNNING_JOB_STATES = [JobState.VALIDATING, JobState.PROCESSING] as const;
export const FINAL_ITEM_STATES = [ItemState.COMPLETED, ItemState.FAILED, ItemState.SKIPPED] as const;
export const ACTIVE_ITEM_STATES = [ItemState.VALIDATING, ItemState.RENDERING] as const;

export const isFinalJob = (s: JobState) => (FINAL_JOB_STATES as readonly JobState[]).includes(s);
export const isFinalItem = (s: ItemState) => (FINAL_ITEM_STATES as readonly ItemState[]).includes(s);

/**
 * The job's final state, the same rule for every kind: one bad unit never fails the job, FAILED means a
 * failure left nothing produced (no PDF, no file, no occurrence), and a round without failures completes.
 */
export function finalJobState(round: { produced: number; failed: boolean }): JobState {
  if (!round.failed) return JobState.COMPLETED;
  return round.produced > 0 ? JobState.PARTIALLY_COMPLETED : JobState.FAILED;
}

export const jobStateName = (s: JobState) => JobState[s] ?? String(s);
