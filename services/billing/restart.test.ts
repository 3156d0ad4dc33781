// Restart safety: kill -9 the only billing process after k of N items, start another: the job completes,
// items completed before the kill are not rendered again (attempt counters in MySQL), and its manifest
// equals a clean run's of the same items.
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFailed } from "vitest";
import type { RowDataPacket } from "mysql2/promise";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { KILL_AT_HOOK } from "../../test/support/kill-at.js";
import { DeliveryState } from "../../libs/gen/malha/billing/v1/webhook_pb.js";
import { boletoInvalido, boletoValido } from "./testing/fixtures.js";
import { startReceiver, type Receiver } from "./testing/webhook-receiver.js";

let mesh: BillingMesh;
let hooks: Receiver;
const ENV = {
  BILLING_RENDER_CONCURRENCY: "1",
  BILLING_RENDER_THREADS: "1",
  BILLING_ACK_WAIT_SECONDS: "2",
  BILLING_WEBHOOK_ALLOW_HTTP: "true",
  BILLING_WEBHOOK_POLL_SECONDS: "0.1",
};
beforeAll(async () => {
  mesh = await startBillingMesh({ billingEnv: ENV });
  hooks = await startReceiver(() => 200);
});
afterAll(async () => {
  await hooks?.close();
  await mesh?.stop();
});
// A hang here (a timeout) says nothing by itself: print what the processes logged.
beforeEach(() => onTestFailed(() => console.error(mesh.logTail(60))));

const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];
const N = 60;
const items = Array.from({ length: N }, (_, i) => (i % 20 === 5 ? boletoInvalido(i + 1, i) : boletoValido(i + 1)));

async function waitFinal(jobId: string) {
  for (;;) {
    const job = (await mesh.billingClient().getBoletoJob({ tenant: "rs", jobId })).job!;
    if (FINAL.includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function manifestItems(jobId: string): Promise<unknown> {
  const art = await mesh.billingClient().getBoletoJobArtifacts({ tenant: "rs", jobId });
  const doc = (await (await fetch(art.manifestJson!.downloadUrl)).json()) as { items: unknown[] };
  return doc.items;
}

describe("kill -9 of the billing process mid-job", () => {
  it("resumes after a restart without re-rendering completed items; the manifest equals a clean run's", async () => {
    const first = mesh.billing[0]!;
    await mesh.billingClient(first).setWebhookEndpoint({ tenant: "rs", url: hooks.url, enabled: true });
    const created = await mesh
      .billingClient(first)
      .createBoletoJob({ tenant: "rs", idempotencyKey: "crash", environment: Environment.PRODUCTION, items });
    const jobId = created.job!.jobId;
    let before: Set<string> = new Set();
    for (;;) {
      const list = await mesh.billingClient(first).listBoletoJobItems({ tenant: "rs", jobId, state: ItemState.COMPLETED, pageSize: 500 });
      if (list.items.length >= 10) {
        first.kill("SIGKILL");
        before = new Set(list.items.map((i) => String(i.position)));
        break;
      }
      await new Promise((r) => setTimeout(r, 20));
    }
    await first.exited;
    const [doneAtKill] = await mesh.db.pool.query<RowDataPacket[]>(
      "SELECT COUNT(*) AS n FROM billing_boleto_items WHERE job_id = ? AND state IN (?, ?)",
      [jobId, ItemState.COMPLETED, ItemState.FAILED],
    );
    expect(Number(doneAtKill[0]!["n"]), "the kill must land mid-job for this test to mean anything").toBeLessThan(N);

    await mesh.startBilling();
    const job = await waitFinal(jobId);
    expect(job.state).toBe(JobState.PARTIALLY_COMPLETED);
    expect(job.counters).toMatchObject({ total: N, completed: N - 3, failed: 3 });

    const [attempts] = await mesh.db.pool.query<RowDataPacket[]>(
      "SELECT position, number, deliveries, renders FROM billing_item_attempts WHERE job_id = ? ORDER BY position",
      [jobId],
    );
    expect(attempts).toHaveLength(N);
    for (const a of attempts) {
      expect(a["number"]).toBe(1);
      // Completed before the kill: picked once, rendered once, never touched again.
      if (before.has(String(a["position"]))) expect([a["deliveries"], a["renders"]]).toEqual([1, 1]);
      expect(a["renders"]).toBeLessThanOrEqual(2);
    }
    // Only what was in flight at the kill (concurrency 1) may have been drawn a second time.
    expect(attempts.filter((a) => a["renders"] === 2).length).toBeLessThanOrEqual(1);

    // Exactly one completion webhook for the job that went through the crash.
    for (;;) {
      const log = await mesh.billingClient().listWebhookDeliveries({ tenant: "rs", jobId });
      expect(log.deliveries).toHaveLength(1);
      if (log.deliveries[0]!.state === DeliveryState.SUCCEEDED) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const ids = hooks.received.filter((h) => JSON.parse(h.body).jobId === jobId).map((h) => h.headers["webhook-id"]);
    expect(ids).toHaveLength(1);

    const clean = await mesh
      .billingClient()
      .createBoletoJob({ tenant: "rs", idempotencyKey: "clean", environment: Environment.PRODUCTION, items });
    await waitFinal(clean.job!.jobId);
    expect(await manifestItems(jobId)).toEqual(await manifestItems(clean.job!.jobId));
  });

  it.each(["after-item-artifact", "after-zip"] as const)(
    "a process killed %s: the job completes with one webhook and a clean run's manifest",
    async (point) => {
      const prefix = `${mesh.prefix}${point === "after-zip" ? "z" : "a"}`;
      const few = items.slice(0, 8).filter((_, i) => i % 20 !== 5);
      const faulty = await mesh.startBilling(
        { BILLING_NATS_PREFIX: prefix, MALHA_TEST_KILL_AT: `billing.${point}` },
        { preload: [KILL_AT_HOOK] },
      );
      const c = mesh.billingClient(faulty);
      await c.setWebhookEndpoint({ tenant: "rs", url: hooks.url, enabled: true });
      const jobId = (await c.createBoletoJob({ tenant: "rs", environment: Environment.PRODUCTION, items: few })).job!.jobId;
      expect((await faulty.exited).signal).toBe("SIGKILL");
      const healthy = await mesh.startBilling({ BILLING_NATS_PREFIX: prefix });
      const h = mesh.billingClient(healthy);
      let job;
      for (;;) {
        job = (await h.getBoletoJob({ tenant: "rs", jobId })).job!;
        if (FINAL.includes(job.state)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(job.state).toBe(JobState.COMPLETED);
      const [attempts] = await mesh.db.pool.query<RowDataPacket[]>("SELECT number, renders FROM billing_item_attempts WHERE job_id = ?", [
        jobId,
      ]);
      expect(attempts.map((a) => a["number"])).toEqual(few.map(() => 1));
      // Only the item whose PDF was stored just before the kill is drawn again (same bytes, same artifact).
      expect(attempts.filter((a) => a["renders"] > 1).length).toBe(point === "after-item-artifact" ? 1 : 0);
      for (;;) {
        const log = await h.listWebhookDeliveries({ tenant: "rs", jobId });
        expect(log.deliveries).toHaveLength(1);
        if (log.deliveries[0]!.state === DeliveryState.SUCCEEDED) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(hooks.received.filter((r) => JSON.parse(r.body).jobId === jobId)).toHaveLength(1);
      const clean = (
        await h.createBoletoJob({ tenant: "rs", idempotencyKey: `clean-${point}`, environment: Environment.PRODUCTION, items: few })
      ).job!.jobId;
      for (;;) {
        if (FINAL.includes((await h.getBoletoJob({ tenant: "rs", jobId: clean })).job!.state)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const art = async (id: string) =>
        (await (await fetch((await h.getBoletoJobArtifacts({ tenant: "rs", jobId: id })).manifestJson!.downloadUrl)).json()) as {
          items: unknown[];
        };
      expect((await art(jobId)).items).toEqual((await art(clean)).items);
    },
  );
});
