// The infrastructure restarted under a running boleto job — JetStream, then MariaDB, each killed (-9) and
// started again 2 s later: billing's consumers, publishes and pool ride out the outage (clients reconnect,
// the reconciler re-publishes what a failed step left behind), the job completes, items completed before the
// kill are not rendered again, and exactly one completion webhook goes out.
import type { RowDataPacket } from "mysql2/promise";
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { DeliveryState } from "../../libs/gen/malha/billing/v1/webhook_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { startPrivateNats } from "../../test/support/nats-server.js";
import { startPrivateMariaDb } from "../../test/support/private-mariadb.js";
import { boletoValido } from "./testing/fixtures.js";
import { startReceiver, type Receiver } from "./testing/webhook-receiver.js";

const N = 60;
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];
const ENV = {
  BILLING_RENDER_CONCURRENCY: "1",
  BILLING_RENDER_THREADS: "1",
  BILLING_ACK_WAIT_SECONDS: "2",
  BILLING_WEBHOOK_ALLOW_HTTP: "true",
  BILLING_WEBHOOK_POLL_SECONDS: "0.1",
};
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

/** A 60-boleto job; `outage` kills a server once 10 items are done and starts it again 2 s later. */
async function survives(mesh: BillingMesh, hooks: Receiver, outage: { kill: () => Promise<void>; start: () => Promise<void> }) {
  onTestFailed(() => console.error(mesh.logTail(60)));
  const c = mesh.billingClient();
  await c.setWebhookEndpoint({ tenant: "ir", url: hooks.url, enabled: true });
  const { job } = await c.createBoletoJob({
    tenant: "ir",
    environment: Environment.SANDBOX,
    items: Array.from({ length: N }, (_, i) => boletoValido(i + 1)),
  });
  const jobId = job!.jobId;
  let before = new Set<number>();
  for (;;) {
    const done = (await c.listBoletoJobItems({ tenant: "ir", jobId, state: ItemState.COMPLETED, pageSize: 500 })).items;
    if (done.length >= 10) {
      await outage.kill();
      before = new Set(done.map((i) => i.position));
      break;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  expect(before.size, "the kill must land mid-job for this test to mean anything").toBeLessThan(N);
  await new Promise((r) => setTimeout(r, 2000));
  await outage.start();

  let state = JobState.UNSPECIFIED;
  for (let i = 0; i < 900 && !FINAL.includes(state); i++) {
    await new Promise((r) => setTimeout(r, 100));
    state = await c.getBoletoJob({ tenant: "ir", jobId }).then(
      (r) => r.job!.state,
      () => JobState.UNSPECIFIED,
    );
  }
  expect(state).toBe(JobState.COMPLETED);
  const [attempts] = await mesh.db.pool.query<RowDataPacket[]>(
    "SELECT position, number, renders FROM billing_item_attempts WHERE job_id = ? ORDER BY position",
    [jobId],
  );
  expect(attempts).toHaveLength(N);
  for (const a of attempts) {
    expect(a["number"]).toBe(1);
    if (before.has(a["position"] as number)) expect(a["renders"], `item ${a["position"]} completed before the kill`).toBe(1);
  }
  for (let i = 0; i < 100; i++) {
    const log = await c.listWebhookDeliveries({ tenant: "ir", jobId });
    expect(log.deliveries).toHaveLength(1);
    if (log.deliveries[0]!.state === DeliveryState.SUCCEEDED) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === jobId)).toHaveLength(1);
}

describe("a boleto job under infrastructure restarts", () => {
  it("JetStream killed and restarted: the job completes without re-rendering, with one webhook", async () => {
    const nats = await startPrivateNats();
    cleanups.push(() => nats.destroy());
    const mesh = await startBillingMesh({ natsUrl: nats.url, billingEnv: ENV });
    cleanups.push(() => mesh.stop());
    const hooks = await startReceiver(() => 200);
    cleanups.push(() => hooks.close());
    await survives(mesh, hooks, { kill: () => nats.stop("SIGKILL"), start: () => nats.start() });
  }, 150_000);

  it("MariaDB killed and restarted (InnoDB crash recovery): the job completes without re-rendering, with one webhook", async () => {
    const maria = await startPrivateMariaDb();
    cleanups.push(() => maria.destroy());
    const mesh = await startBillingMesh({ mysqlUrl: maria.url, billingEnv: ENV });
    cleanups.push(() => mesh.stop());
    const hooks = await startReceiver(() => 200);
    cleanups.push(() => hooks.close());
    await survives(mesh, hooks, { kill: () => maria.stop("SIGKILL"), start: () => maria.start() });
  }, 150_000);
});
