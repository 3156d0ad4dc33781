import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { SkipReason } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { SyncPool, SyncStateSchema, type SyncState } from "../../libs/gen/malha/store/v1/types_pb.js";
import { decide, poolFor } from "./decide.js";
import { feedKey } from "./feed-key.js";

const NOW = Date.UTC(2026, 10, 29, 12, 0, 0);
const state = (over: Omit<Partial<SyncState>, "$typeName" | "$unknown"> = {}): SyncState =>
  create(SyncStateSchema, {
    feed: feedKey("3550308", Ambiente.PRODUCAO, TipoNsu.DISTRIBUICAO),
    enabled: true,
    municipalityActive: true,
    lastNsu: 500n,
    maxNsu: 500n,
    ...over,
  });
const ctx = { now: NOW, queuedHere: false, bootstrapThresholdNsu: 10_000n };

describe("decide", () => {
  it("accepts an eligible, idle feed into the incremental pool", () => {
    const d = decide(state(), ctx);
    expect(d.accepted).toBe(true);
    expect(d.pool).toBe(SyncPool.INCREMENTAL);
  });

  it("never lets anything run inside the one-hour wait or a cool-down, and says until when", () => {
    const later = NOW + 30 * 60_000;
    const waiting = decide(state({ nextEligibleAt: timestampFromMs(later) }), ctx);
    expect(waiting).toMatchObject({ accepted: false, reason: SkipReason.NOT_ELIGIBLE });
    expect(Number(waiting.notBefore?.seconds) * 1000).toBe(later);
    const cooling = decide(state({ cooldownUntil: timestampFromMs(later), nextEligibleAt: timestampFromMs(NOW - 1) }), ctx);
    expect(cooling).toMatchObject({ accepted: false, reason: SkipReason.COOLING_DOWN });
    expect(decide(state({ nextEligibleAt: timestampFromMs(NOW) }), ctx).accepted).toBe(true);
  });

  it("skips inactive municipalities, disabled feeds, missing certificates, queued and leased feeds", () => {
    expect(decide(state({ municipalityActive: false }), ctx).reason).toBe(SkipReason.MUNICIPALITY_INACTIVE);
    expect(decide(state({ enabled: false }), ctx).reason).toBe(SkipReason.FEED_DISABLED);
    expect(decide(state(), { ...ctx, hasActiveCertificate: false }).reason).toBe(SkipReason.NO_ACTIVE_CERTIFICATE);
    expect(decide(state(), { ...ctx, queuedHere: true }).reason).toBe(SkipReason.ALREADY_QUEUED);
    const held = decide(state(), { ...ctx, leaseHolder: "replica-2" });
    expect(held).toMatchObject({ reason: SkipReason.LEASE_HELD, leaseHolder: "replica-2" });
  });

  it("sends never-synced and far-behind feeds to the bootstrap pool", () => {
    expect(poolFor(state({ lastNsu: 0n, maxNsu: 0n }), 10_000n)).toBe(SyncPool.BOOTSTRAP);
    expect(poolFor(state({ lastNsu: 100n, maxNsu: 20_000n }), 10_000n)).toBe(SyncPool.BOOTSTRAP);
    expect(poolFor(state({ lastNsu: 15_000n, maxNsu: 20_000n }), 10_000n)).toBe(SyncPool.INCREMENTAL);
  });
});
