// Faults on the sync path, each with its own mesh: a coordinator killed or paused mid-sync, every
// coordinator restarted after a catch-up, a 429 from the ADN, new documents after the first sync.
import type { RowDataPacket } from "mysql2/promise";
import { afterEach, describe, expect, it } from "vitest";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { RunOutcome } from "../../libs/gen/malha/store/v1/types_pb.js";
import { SkipReason } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { sampleValue, scrape } from "../support/prom-text.js";
import { expectDistributedOnce, until } from "../support/sync-checks.js";
import type { ServiceProcess } from "../support/service-process.js";

let mesh: NfseMesh | undefined;
afterEach(async () => {
  await mesh?.stop();
  mesh = undefined;
});

const feedOf = (m: NfseMesh) => ({ ibge: m.municipalities[0]!.ibge, ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO });
const state = async (m: NfseMesh) => (await m.storeClient.getSyncState({ feed: feedOf(m) })).state!;
const holderProcess = (m: NfseMesh, holder: string): ServiceProcess | undefined =>
  m.coordinators.find((c) => holder.includes(`-${c.proc.pid}-`));

/** Everything lote=true distributed is stored exactly once. */
const expectComplete = (m: NfseMesh) => expectDistributedOnce(m, m.municipalities[0]!.ibge);

const caughtUp = (m: NfseMesh) => async () => (await state(m)).lastOutcome === RunOutcome.CAUGHT_UP;

describe("NFS-e sync on request", () => {
  it("SyncNow returns at once and the sync it started finishes in the background", async () => {
    // No periodic sweep within the test: only SyncNow can start the feed.
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 600,
      coordinators: 1,
      coordinatorEnv: { NFSE_SYNC_INTERVAL_SECONDS: "3600" },
    });
    // The coordinator's sweep at start must be over before the feed exists: under a loaded host it could
    // otherwise run after the registration and queue the feed itself, and SyncNow would find it queued.
    const coordinatorMetrics = mesh.coordinators[0]!.metricsPort;
    await until(
      async () => (sampleValue(await scrape(coordinatorMetrics), "malha_sync_fleet_view_timestamp_seconds") ?? 0) > 0,
      "the coordinator's first sweep",
    );
    await mesh.registerAll();
    const { createClient } = await import("@connectrpc/connect");
    const { createGrpcTransport } = await import("@connectrpc/connect-node");
    const { CoordinatorService } = await import("../../libs/gen/malha/coordinator/v1/coordinator_pb.js");
    const coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: mesh.coordinators[0]!.baseUrl }));
    const { decisions } = await coordinator.syncNow({ ibge: mesh.municipalities[0]!.ibge, requestedBy: "test" });
    expect(decisions.map((d) => (d.accepted ? "accepted" : SkipReason[d.reason]))).toEqual(["accepted"]);
    await until(caughtUp(mesh), "the background sync to finish");
    await expectComplete(mesh);
    // The same request now is refused by the one-hour rule, and says until when.
    const again = await coordinator.syncNow({ ibge: mesh.municipalities[0]!.ibge, requestedBy: "test" });
    expect(again.decisions[0]?.accepted).toBe(false);
    expect(again.decisions[0]?.notBefore).toBeDefined();
  });
});

describe("NFS-e sync: bootstrap slices and cancellation", () => {
  it("a bootstrap gives its lease back after its time slice and resumes from its cursor", async () => {
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 2500,
      coordinators: 1,
      switches: { latencyMs: 25 },
      coordinatorEnv: { NFSE_BOOTSTRAP_SLICE_SECONDS: "1" },
    });
    await mesh.registerAll();
    await until(caughtUp(mesh), "the sliced bootstrap to finish");
    const [runs] = await mesh.db.pool.query<RowDataPacket[]>("SELECT outcome, from_nsu FROM nfse_sync_runs ORDER BY id");
    const yielded = runs.filter((r) => r.outcome === "yielded");
    expect(yielded.length).toBeGreaterThan(0);
    // Each resumed run starts where the previous one stopped, never from the beginning.
    expect(runs.slice(1).every((r) => BigInt(r.from_nsu as string) > 0n)).toBe(true);
    await expectComplete(mesh);
  });

  it("CancelSync stops a running sync after its batch; the next sweep picks the feed up again", async () => {
    mesh = await startNfseMesh({ municipalities: 1, feedSize: 2500, coordinators: 1, switches: { latencyMs: 25 } });
    await mesh.registerAll();
    await until(async () => (await state(mesh!)).lastNsu > 200n, "the sync to be under way");
    const { createClient } = await import("@connectrpc/connect");
    const { createGrpcTransport } = await import("@connectrpc/connect-node");
    const { CoordinatorService } = await import("../../libs/gen/malha/coordinator/v1/coordinator_pb.js");
    const coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: mesh.coordinators[0]!.baseUrl }));
    const res = await coordinator.cancelSync({ target: { case: "feed", value: feedOf(mesh) }, requestedBy: "test", reason: "e2e" });
    expect(res.nothingToCancel).toBe(false);
    await until(async () => {
      const [rows] = await mesh!.db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM nfse_sync_runs WHERE outcome = 'cancelled'");
      return Number(rows[0]!.n) === 1;
    }, "the run to end as cancelled");
    // Cancelling does not push next_eligible_at: the feed resumes and finishes.
    await until(caughtUp(mesh), "the feed to finish after the cancellation");
    await expectComplete(mesh);
  });
});

describe("NFS-e sync under faults", () => {
  it("kill -9 of the holder mid-sync: another replica takes the feed after the lease TTL and finishes it", async () => {
    mesh = await startNfseMesh({ municipalities: 1, feedSize: 2500, coordinators: 2, switches: { latencyMs: 25 } });
    await mesh.registerAll();
    await until(async () => (await state(mesh!)).lastNsu > 300n, "the sync to be under way");
    const victim = holderProcess(mesh, (await state(mesh)).lockedBy);
    expect(victim).toBeDefined();
    victim!.kill("SIGKILL");
    await until(caughtUp(mesh), "the survivor to finish the feed");
    const finalHolder = (await state(mesh)).lockedBy;
    expect(holderProcess(mesh, finalHolder)).not.toBe(victim);
    await expectComplete(mesh);
  });

  it("a paused holder is fenced out when it resumes, and stops by itself", async () => {
    mesh = await startNfseMesh({ municipalities: 1, feedSize: 2500, coordinators: 2, switches: { latencyMs: 25 } });
    await mesh.registerAll();
    await until(async () => (await state(mesh!)).lastNsu > 300n, "the sync to be under way");
    const sleeper = holderProcess(mesh, (await state(mesh)).lockedBy)!;
    sleeper.kill("SIGSTOP");
    // Lease TTL is 3 s: the other replica takes over once it expires.
    await until(async () => holderProcess(mesh!, (await state(mesh!)).lockedBy) !== sleeper, "another replica to take over");
    sleeper.kill("SIGCONT");
    await until(async () => sleeper.lines.some((l) => l.includes('"kind":"lease-lost"')), "the resumed holder to notice");
    await until(caughtUp(mesh), "the feed to finish");
    await expectComplete(mesh);
  });

  it("keeps the one-hour rule after every coordinator restarts", async () => {
    mesh = await startNfseMesh({ municipalities: 2, feedSize: 200, coordinators: 2 });
    await mesh.registerAll();
    await until(async () => {
      const { states } = await mesh!.storeClient.listSyncStates({});
      return states.length === 2 && states.every((s) => s.lastOutcome === RunOutcome.CAUGHT_UP);
    }, "both feeds to catch up");
    for (const c of mesh.coordinators.splice(0)) {
      c.kill("SIGKILL");
      await c.exited;
    }
    const batches = () => Object.fromEntries(Object.entries(mesh!.sim.counters().byFeed).map(([k, v]) => [k, v.batch]));
    const before = batches();
    const fresh = [await mesh.startCoordinator(), await mesh.startCoordinator()];
    // Let the new replicas run several sweeps (interval 1 s).
    await until(async () => fresh.every((c) => c.lines.filter((l) => l.includes("serving")).length > 0), "the new replicas");
    await new Promise((r) => setTimeout(r, 4000));
    expect(batches()).toEqual(before);
  });

  it("after a 429 the feed cools down and the ADN is not called again inside the cool-down", async () => {
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 400,
      coordinators: 1,
      switches: { rateLimit: { maxCalls: 3, windowMs: 60_000 } },
    });
    await mesh.registerAll();
    await until(async () => (await state(mesh!)).lastOutcome === RunOutcome.RATE_LIMITED, "the 429 to be recorded");
    const s = await state(mesh);
    expect(s.cooldownUntil).toBeDefined();
    const calls = mesh.sim.counters().total;
    expect(mesh.sim.counters().byStatus["429"]).toBe(1);
    await new Promise((r) => setTimeout(r, 4000));
    expect(mesh.sim.counters().total).toBe(calls);
  });

  it("documents that reach the ADN after a catch-up arrive on a later sweep", async () => {
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 150,
      coordinators: 1,
      coordinatorEnv: { NFSE_EMPTY_RESULT_BACKOFF_SECONDS: "2" },
    });
    await mesh.registerAll();
    await until(caughtUp(mesh), "the first catch-up");
    const feed = mesh.sim.feed(mesh.municipalities[0]!.ibge, "DISTRIBUICAO");
    const added = feed.append(120).filter((e) => !e.hidden);
    const last = added.at(-1)!.nsu;
    await until(async () => (await state(mesh!)).lastNsu >= last, "the new documents");
    await expectComplete(mesh);
  });
});
