// Transient faults and RetryFailedItems: with the artifacts service unreachable, items exhaust their
// deliveries and end FAILED (retryable) in the dead-letter path; after the fault is gone, a retry round
// re-renders only them, keeping earlier attempts as history, and publishes a new set of artifacts.
// Also: artifacts past their expiry are refused with ARTIFACTS_EXPIRED + ArtifactExpired.
import { randomBytes } from "node:crypto";
import { Code, ConnectError } from "@connectrpc/connect";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ArtifactExpiredSchema } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoInvalido, boletoValido } from "./testing/fixtures.js";

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh({ processes: 0 });
});
afterAll(async () => {
  await mesh?.stop();
});

const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];
async function waitJob(jobId: string, until: (j: { state: JobState; counters?: { failed: number } }) => boolean) {
  for (;;) {
    const job = (await mesh.billingClient().getBoletoJob({ tenant: "rt", jobId })).job!;
    if (until(job)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("RetryFailedItems after a transient fault", () => {
  it("dead-letters items while artifacts is down, then a retry round completes them with history kept", async () => {
    const prefix = `${mesh.prefix}r`;
    const broken = await mesh.startBilling({ BILLING_NATS_PREFIX: prefix, ARTIFACTS_URL: "http://127.0.0.1:1", BILLING_MAX_DELIVER: "2" });
    const c = mesh.billingClient(broken);
    const items = [boletoValido(1), boletoInvalido(2, 1), boletoValido(3)];
    const { job } = await c.createBoletoJob({ tenant: "rt", environment: Environment.SANDBOX, items });
    const jobId = job!.jobId;
    const stuck = await waitJob(jobId, (j) => j.counters?.failed === 3);
    expect(stuck.state).toBe(JobState.PROCESSING); // finalize cannot store artifacts either
    await expect(c.retryFailedItems({ tenant: "rt", jobId })).rejects.toMatchObject({ code: Code.FailedPrecondition });
    const failed = (await c.getBoletoJobItem({ tenant: "rt", jobId, itemId: "t-0001" })).item!;
    expect(failed.errors[0]).toMatchObject({ code: "TENTATIVAS_ESGOTADAS", retryable: true });

    // The dead-letter stream holds copies of the tasks that gave up.
    const nc = await connect({ servers: process.env.NATS_URL! });
    try {
      const info = await (await jetstreamManager(nc)).streams.info(`${prefix}_dlq`);
      expect(info.state.messages).toBeGreaterThanOrEqual(2);
    } finally {
      await nc.close();
    }

    broken.kill("SIGKILL");
    await broken.exited;
    const healthy = await mesh.startBilling({ BILLING_NATS_PREFIX: prefix });
    const h = mesh.billingClient(healthy);
    // The reconciler notices the stalled job and finishes it: nothing could be produced.
    const finished = await waitJob(jobId, (j) => FINAL.includes(j.state));
    expect(finished.state).toBe(JobState.FAILED);

    const onlyBad = await h.retryFailedItems({ tenant: "rt", jobId, itemIds: ["t-0002"] });
    expect(onlyBad).toMatchObject({ requeued: 0, skippedItemIds: ["t-0002"], job: { state: JobState.FAILED } });
    await expect(h.retryFailedItems({ tenant: "rt", jobId, itemIds: ["nope"] })).rejects.toMatchObject({ code: Code.NotFound });

    const retry = await h.retryFailedItems({ tenant: "rt", jobId, requestedBy: "ops" });
    expect(retry.requeued).toBe(2);
    expect(retry.job).toMatchObject({ state: JobState.PROCESSING, retryRounds: 1 });
    const done = await waitJob(jobId, (j) => FINAL.includes(j.state));
    expect(done.state).toBe(JobState.PARTIALLY_COMPLETED);
    expect(done.counters).toMatchObject({ completed: 2, failed: 1 });

    const item = (await h.getBoletoJobItem({ tenant: "rt", jobId, itemId: "t-0001" })).item!;
    expect(item.attemptCount).toBe(2);
    expect(item.attempts.map((a) => [a.number, a.state, a.errors[0]?.code ?? ""])).toEqual([
      [1, ItemState.FAILED, "TENTATIVAS_ESGOTADAS"],
      [2, ItemState.COMPLETED, ""],
    ]);
    const bad = (await h.getBoletoJobItem({ tenant: "rt", jobId, itemId: "t-0002" })).item!;
    expect(bad.attemptCount).toBe(1);

    const art = await h.getBoletoJobArtifacts({ tenant: "rt", jobId });
    expect(art.zip?.name).toBe(`rounds/1/boletos-${jobId}.zip`);
    expect(art.items.filter((i) => i.state === ItemState.COMPLETED)).toHaveLength(2);

    // A deterministic failure comes back only when asked for, and fails the same way again.
    const forced = await h.retryFailedItems({ tenant: "rt", jobId, itemIds: ["t-0002"], includeNonRetryable: true });
    expect(forced.requeued).toBe(1);
    await waitJob(jobId, (j) => FINAL.includes(j.state));
    const again = (await h.getBoletoJobItem({ tenant: "rt", jobId, itemId: "t-0002" })).item!;
    expect(again.attempts.map((a) => a.errors[0]?.code)).toEqual(["BANCO_DESCONHECIDO", "BANCO_DESCONHECIDO"]);
  });
});

describe("artifact expiry", () => {
  it("answers FAILED_PRECONDITION ARTIFACTS_EXPIRED with ArtifactExpired once the job's artifacts expired", async () => {
    const p = await mesh.startBilling({ BILLING_NATS_PREFIX: `bx${randomBytes(4).toString("hex")}`, BILLING_ARTIFACT_TTL_SECONDS: "3" });
    const c = mesh.billingClient(p);
    const { job } = await c.createBoletoJob({ tenant: "rt", environment: Environment.SANDBOX, items: [boletoValido(1)] });
    const done = await waitJob(job!.jobId, (j) => FINAL.includes(j.state));
    expect(done.state).toBe(JobState.COMPLETED);
    const expiresAt = Number((await c.getBoletoJob({ tenant: "rt", jobId: job!.jobId })).job!.artifactsExpiresAt!.seconds) * 1000;
    await new Promise((r) => setTimeout(r, Math.max(0, expiresAt - Date.now()) + 1100));
    const err = await c.getBoletoJobArtifacts({ tenant: "rt", jobId: job!.jobId }).catch((e: unknown) => ConnectError.from(e));
    expect(err).toBeInstanceOf(ConnectError);
    expect((err as ConnectError).code).toBe(Code.FailedPrecondition);
    expect((err as ConnectError).findDetails(ErrorInfoSchema)[0]?.reason).toBe("ARTIFACTS_EXPIRED");
    expect((err as ConnectError).findDetails(ArtifactExpiredSchema)).toHaveLength(1);
  });
});
