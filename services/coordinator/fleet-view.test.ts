import { create, type MessageInitShape } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { RunOutcome, SyncStateSchema, SyncStatus, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";
import { feedStateOf, FleetViewBuilder } from "./fleet-view.js";
import { runOutcomeLabel } from "./metrics.js";

const NOW = Date.UTC(2026, 10, 29, 12);
const state = (over: MessageInitShape<typeof SyncStateSchema>): SyncState =>
  create(SyncStateSchema, { enabled: true, municipalityActive: true, status: SyncStatus.IDLE, ...over });

describe("fleet view", () => {
  it("gives each feed one state: disabled, then cooling down, running, error, idle", () => {
    expect(feedStateOf(state({ enabled: false, status: SyncStatus.RUNNING }), NOW)).toBe("disabled");
    expect(feedStateOf(state({ municipalityActive: false }), NOW)).toBe("disabled");
    expect(feedStateOf(state({ status: SyncStatus.ERROR, cooldownUntil: timestampFromMs(NOW + 1000) }), NOW)).toBe("cooling_down");
    expect(feedStateOf(state({ status: SyncStatus.ERROR, cooldownUntil: timestampFromMs(NOW - 1000) }), NOW)).toBe("error");
    expect(feedStateOf(state({ status: SyncStatus.RUNNING }), NOW)).toBe("running");
    expect(feedStateOf(state({}), NOW)).toBe("idle");
  });

  it("counts states, keeps the worst lag and oldest success of enabled feeds, and sums faults and holes of all", () => {
    const b = new FleetViewBuilder(NOW);
    b.add(state({ lastNsu: 100n, maxNsu: 150n, lastSuccessAt: timestampFromMs(NOW - 60_000), faultsCount: 2n, holesCount: 1n }));
    b.add(state({ lastNsu: 10n, maxNsu: 10n, lastSuccessAt: timestampFromMs(NOW - 7_200_000), status: SyncStatus.ERROR }));
    b.add(state({ lastNsu: 0n, maxNsu: 0n, status: SyncStatus.RUNNING }));
    // A disabled feed counts for its faults and holes, not for lag or age.
    b.add(
      state({
        enabled: false,
        lastNsu: 0n,
        maxNsu: 9_999n,
        lastSuccessAt: timestampFromMs(NOW - 86_400_000),
        faultsCount: 5n,
        holesCount: 3n,
      }),
    );
    expect(b.build()).toEqual({
      feeds: { disabled: 1, cooling_down: 0, running: 1, error: 1, idle: 1 },
      lagNsuMax: 50,
      lastSuccessAgeSecondsMax: 7200,
      neverSynced: 1,
      faults: 7,
      holes: 4,
      at: NOW,
    });
  });

  it("labels a run by its outcome, or by why none took place", () => {
    const finished = (outcome: RunOutcome) => ({ kind: "finished" as const, outcome, runId: "r", items: 0, cursor: 0n });
    expect(runOutcomeLabel(finished(RunOutcome.CAUGHT_UP))).toBe("caught_up");
    expect(runOutcomeLabel(finished(RunOutcome.RATE_LIMITED))).toBe("rate_limited");
    expect(runOutcomeLabel({ kind: "lease-held" })).toBe("lease_held");
    expect(runOutcomeLabel({ kind: "lease-lost", items: 3 })).toBe("lease_lost");
    expect(runOutcomeLabel({ kind: "not-eligible" })).toBe("not_eligible");
  });
});
