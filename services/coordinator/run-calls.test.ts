// The coordinator's batched BeginRun/FinishRun (decision 0036) against a real store process on a
// throwaway database and real NATS KV leases: runs begun together share one BeginRuns call, and are
// still fenced one by one — a takeover of one feed refuses that feed's writes only.
import { randomBytes } from "node:crypto";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { ConnectError, type Interceptor } from "@connectrpc/connect";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { RunOutcome, RunTrigger, StaleFenceSchema, SyncPool } from "../../libs/gen/malha/store/v1/types_pb.js";
import type { Lease } from "../../libs/leases/types.js";
import { KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { createServiceClient } from "../../libs/rpc/client.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../test/support/mysql.js";
import { startService, type ServiceProcess } from "../../test/support/service-process.js";
import { feedKey, leaseKeyOf } from "./feed-key.js";
import { batchedRunCalls } from "./run-calls.js";

const IBGES = ["3550308", "3304557", "3106200", "4106902", "4314902", "2927408", "5300108", "2304400"];
const UF: Record<string, string> = { "35": "SP", "33": "RJ", "31": "MG", "41": "PR", "43": "RS", "29": "BA", "53": "DF", "23": "CE" };
const feedOf = (ibge: string) => feedKey(ibge, Ambiente.PRODUCAO_RESTRITA, TipoNsu.DISTRIBUICAO);

let db: ThrowawayDatabase;
let store: ServiceProcess;
let nc: NatsConnection;
let replicaA: KvLeaseManager;
let replicaB: KvLeaseManager;
const bucket = `leases_runcalls_${randomBytes(4).toString("hex")}`;

beforeAll(async () => {
  db = await createThrowawayDatabase();
  store = await startService("store", { MYSQL_URL: db.url });
  nc = await connect({ servers: process.env.NATS_URL ?? "nats://127.0.0.1:14222" });
  replicaA = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "coordinator-a" });
  replicaB = await KvLeaseManager.open(nc, { bucket, ttlMs: 30_000, holder: "coordinator-b" });
  const registrar = createServiceClient(StoreService, { baseUrl: store.baseUrl });
  for (const ibge of IBGES) {
    await registrar.client.registerMunicipality({
      ibge,
      name: `Município ${ibge}`,
      uf: UF[ibge.slice(0, 2)]!,
      active: true,
      feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
    });
  }
  registrar.close();
});

afterAll(async () => {
  await replicaA?.close();
  await replicaB?.close();
  await (await new Kvm(nc).open(bucket)).destroy().catch(() => undefined);
  await nc?.close();
  store?.kill("SIGKILL");
  await db?.drop();
});

describe("batched run calls", () => {
  it("begin N runs in one BeginRuns call, and a takeover of one feed refuses only that feed's writes", async () => {
    const calls: Record<string, number[]> = {};
    const count: Interceptor = (next) => async (req) => {
      const runs = (req.message as { runs?: unknown[] }).runs;
      (calls[req.method.name] ??= []).push(runs?.length ?? 1);
      return next(req);
    };
    const client = createServiceClient(StoreService, { baseUrl: store.baseUrl, interceptors: [count] });
    // Long enough that all N entries wait for each other: the batch goes out when it is full.
    const runs = batchedRunCalls(client.client, { maxSize: IBGES.length, maxDelayMs: 60_000, maxInFlight: 1 });
    try {
      const leases = new Map<string, Lease>();
      for (const ibge of IBGES) leases.set(ibge, (await replicaA.tryAcquire(leaseKeyOf(feedOf(ibge))))!);
      const begun = await Promise.all(
        IBGES.map((ibge) =>
          runs.beginRun(
            {
              feed: feedOf(ibge),
              holder: "coordinator-a",
              fenceToken: leases.get(ibge)!.fenceToken,
              trigger: RunTrigger.SCHEDULED,
              pool: SyncPool.INCREMENTAL,
            },
            { signal: leases.get(ibge)!.signal },
          ),
        ),
      );
      expect(calls.BeginRuns).toEqual([IBGES.length]);
      expect(new Set(begun.map((b) => b.runId)).size).toBe(IBGES.length);
      // Brief answers (decision 0064): no run record, the run as the store keeps it holds each lease's fence.
      for (const [i, b] of begun.entries()) {
        expect(b.run).toBeUndefined();
        expect((await client.client.getRun({ runId: b.runId })).run?.fenceToken).toBe(leases.get(IBGES[i]!)!.fenceToken);
      }

      // Replica A is partitioned from NATS for the third feed: its key goes, B takes the feed over with a
      // newer revision and begins its own run.
      const victim = IBGES[2]!;
      await (await new Kvm(nc).open(bucket)).delete(leaseKeyOf(feedOf(victim)));
      const takeover = (await replicaB.tryAcquire(leaseKeyOf(feedOf(victim))))!;
      expect(takeover.fenceToken).toBeGreaterThan(leases.get(victim)!.fenceToken);
      const direct = createServiceClient(StoreService, { baseUrl: store.baseUrl });
      await direct.client.beginRun({
        feed: feedOf(victim),
        holder: "coordinator-b",
        fenceToken: takeover.fenceToken,
        trigger: RunTrigger.SCHEDULED,
        pool: SyncPool.INCREMENTAL,
      });

      // A's writes for the victim are refused (its ApplyBatch and its FinishRun); the others finish in one call.
      const applied = await direct.client
        .applyBatch({ feed: feedOf(victim), runId: begun[2]!.runId, fenceToken: leases.get(victim)!.fenceToken, items: [], newCursor: 0n })
        .then(
          () => undefined,
          (err: unknown) => ConnectError.from(err),
        );
      expect(applied?.findDetails(StaleFenceSchema)[0]?.currentFenceToken).toBe(takeover.fenceToken);
      const finished = await Promise.allSettled(
        IBGES.map((ibge, i) =>
          runs.finishRun({
            feed: feedOf(ibge),
            runId: begun[i]!.runId,
            fenceToken: leases.get(ibge)!.fenceToken,
            outcome: RunOutcome.CAUGHT_UP,
            nextEligibleAt: timestampFromMs(Date.now() + 3_600_000),
          }),
        ),
      );
      expect(calls.FinishRuns).toEqual([IBGES.length]);
      finished.forEach((f, i) => {
        if (i === 2) {
          expect(f.status).toBe("rejected");
          const e = ConnectError.from((f as PromiseRejectedResult).reason);
          expect(e.findDetails(StaleFenceSchema)[0]).toMatchObject({
            currentFenceToken: takeover.fenceToken,
            currentHolder: "coordinator-b",
          });
        } else {
          expect(f.status).toBe("fulfilled");
          expect((f as PromiseFulfilledResult<{ run?: unknown }>).value.run).toBeUndefined();
        }
      });
      for (const [i, b] of begun.entries()) {
        if (i !== 2) expect((await direct.client.getRun({ runId: b.runId })).run?.outcome).toBe(RunOutcome.CAUGHT_UP);
      }
      const state = await direct.client.getSyncState({ feed: feedOf(victim) });
      expect(state.state?.fenceToken).toBe(takeover.fenceToken);
      expect(state.state?.currentRunId).not.toBe(begun[2]!.runId);
      direct.close();
      for (const l of leases.values()) await l.release().catch(() => false);
      await takeover.release();
    } finally {
      await runs.close();
      client.close();
    }
  });
});
