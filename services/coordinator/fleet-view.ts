// The fleet as the sync sweep sees it: how many feeds are in which state, how far behind the worst one
// is, and what has piled up. Every replica's sweep reads every feed, so each computes the same view;
// alerts take the max over replicas.
import { timestampMs } from "@bufbuild/protobuf/wkt";
import { SyncStatus, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";

export const FEED_STATES = ["disabled", "cooling_down", "running", "error", "idle"] as const;
export type FeedState = (typeof FEED_STATES)[number];

export interface FleetView {
  feeds: Record<FeedState, number>;
  /** Largest max_nsu − last_nsu of an enabled feed (what the ADN announced and we have not stored). */
  lagNsuMax: number;
  /** Oldest last success among enabled feeds that have had one, in seconds before `at`. */
  lastSuccessAgeSecondsMax: number;
  /** Enabled feeds without any successful run yet (new, or never got through). */
  neverSynced: number;
  /** Quarantined items and confirmed holes over every feed. */
  faults: number;
  holes: number;
  at: number;
}

/** One state per feed; the first that applies wins, so the counts add up to the number of feeds. */
export function feedStateOf(s: SyncState, nowMs: number): FeedState {
  if (!s.enabled || !s.municipalityActive) return "disabled";
  if (s.cooldownUntil && timestampMs(s.cooldownUntil) > nowMs) return "cooling_down";
  if (s.status === SyncStatus.RUNNING) return "running";
  if (s.status === SyncStatus.ERROR) return "error";
  return "idle";
}

export class FleetViewBuilder {
  private readonly view: FleetView;
  constructor(private readonly nowMs: number) {
    this.view = {
      feeds: { disabled: 0, cooling_down: 0, running: 0, error: 0, idle: 0 },
      lagNsuMax: 0,
      lastSuccessAgeSecondsMax: 0,
      neverSynced: 0,
      faults: 0,
      holes: 0,
      at: nowMs,
    };
  }

  add(s: SyncState): void {
    const v = this.view;
    const state = feedStateOf(s, this.nowMs);
    v.feeds[state]++;
    v.faults += Number(s.faultsCount);
    v.holes += Number(s.holesCount);
    if (state === "disabled") return;
    if (s.maxNsu > s.lastNsu) v.lagNsuMax = Math.max(v.lagNsuMax, Number(s.maxNsu - s.lastNsu));
    if (s.lastSuccessAt)
      v.lastSuccessAgeSecondsMax = Math.max(v.lastSuccessAgeSecondsMax, Math.max(0, (this.nowMs - timestampMs(s.lastSuccessAt)) / 1000));
    else v.neverSynced++;
  }

  build(): FleetView {
    return { ...this.view, feeds: { ...this.view.feeds } };
  }
}
