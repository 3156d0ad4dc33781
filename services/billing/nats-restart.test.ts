// JetStream restarted under a running boleto job: billing's consumers and publishes ride out the outage
// (the client reconnects, the reconciler re-publishes what a failed publish left behind), the job completes,
// items completed before the restart are not rendered again, and exactly one completion webhook goes out.
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from "vitest";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { DeliveryState } from "../../libs/gen/malha/billing/v1/webhook_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { startPrivateNats, type PrivateNats } from "../../test/support/nats-server.js";
import { boletoValido } from "./fixtures.js";
import { startReceiver, type Receiver } from "./webhook-receiver.js";

let nats: PrivateNats;
let mesh: BillingMesh;
let hooks: Receiver;
beforeAll(async () => {
  nats = await startPrivateNats();
  mesh = await startBillingMesh({
    natsUrl: nats.url,
    billingEnv: { BILLING_RENDER_CONCURRENCY: "1", BILLING_RENDER_THREADS: "1", BILLING_ACK_WAIT_SECONDS: "2", BILLING_WEBHOOK_ALLOW_HTTP: "true", BILLING_WEBHOOK_POLL_SECONDS: "0.1" },
  });
  hooks = await startReceiver(() => 200);
});
afterAll(async () => {
  await hooks?.close();
  await mesh?.stop().catch(() => undefined);
  await nats?.destroy();
});

const N = 60;
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

describe("a NATS restart in the middle of a boleto job", () => {
  it("the job completes once the server is back, without re-rendering completed items, with one webhook", async () => {
    onTestFailed(() => console.error(mesh.logTail(60)));
    const c = mesh.billingClient();
    await c.setWebhookEndpoint({ tenant: "nr", url: hooks.url, enabled: true });
    const { job } = await c.createBoletoJob({ tenant: "nr", environment: Environment.SANDBOX, items: Array.from({ length: N }, (_, i) => boletoValido(i + 1)) });
    const jobId = job!.jobId;
    let before = new Set<number>();
    for (;;) {
      const done = (await c.listBoletoJobItems({ tenant: "nr", jobId, state: ItemState.COMPLETED, pageSize: 500 })).items;
      if (done.length >= 10) {
        await nats.stop("SIGKILL");
        before = new Set(done.map((i) => i.position));
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await new Promise((r) => setTimeout(r, 2000));
    // Nothing moves without the queues: the job is still mid-way when the server comes back.
    const [doneDuringOutage] = await mesh.db.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM billing_boleto_items WHERE job_id = ? AND state = ?", [jobId, ItemState.COMPLETED]);
    expect(Number(doneDuringOutage[0]!["n"])).toBeLessThan(N);
    await nats.start();

    let state = JobState.UNSPECIFIED;
    for (let i = 0; i < 600 && !FINAL.includes(state); i++) {
      await new Promise((r) => setTimeout(r, 100));
      state = (await c.getBoletoJob({ tenant: "nr", jobId })).job!.state;
    }
    expect(state).toBe(JobState.COMPLETED);
    const [attempts] = await mesh.db.pool.query<RowDataPacket[]>("SELECT position, number, renders FROM billing_item_attempts WHERE job_id = ? ORDER BY position", [jobId]);
    expect(attempts).toHaveLength(N);
    for (const a of attempts) {
      expect(a["number"]).toBe(1);
      if (before.has(a["position"] as number)) expect(a["renders"], `item ${a["position"]} completed before the restart`).toBe(1);
    }
    for (let i = 0; i < 100; i++) {
      const log = await c.listWebhookDeliveries({ tenant: "nr", jobId });
      expect(log.deliveries).toHaveLength(1);
      if (log.deliveries[0]!.state === DeliveryState.SUCCEEDED) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(hooks.received.filter((h) => JSON.parse(h.body).jobId === jobId)).toHaveLength(1);
  }, 120_000);
});
