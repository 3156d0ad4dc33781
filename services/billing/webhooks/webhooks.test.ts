// Completion webhooks end to end: endpoint RPCs, Standard Webhooks signatures verified by a real local
// receiver, retries with backoff, dead-letter and redelivery, and a sender killed mid-request.
import { toJsonString } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { GetWebhookEndpointResponseSchema } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Environment, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { DeliveryState } from "../../../libs/gen/malha/billing/v1/webhook_pb.js";
import { startBillingMesh, type BillingMesh } from "../../../test/support/billing-mesh.js";
import { boletoValido } from "../testing/fixtures.js";
import { startReceiver, type Receiver } from "../testing/webhook-receiver.js";
import { verify } from "./signing.js";

const ENV = {
  BILLING_WEBHOOK_ALLOW_HTTP: "true",
  BILLING_WEBHOOK_BACKOFF_SECONDS: "0.2",
  BILLING_WEBHOOK_POLL_SECONDS: "0.1",
  BILLING_WEBHOOK_MAX_ATTEMPTS: "3",
  BILLING_WEBHOOK_TIMEOUT_SECONDS: "1",
};
let mesh: BillingMesh;
const receivers: Receiver[] = [];
beforeAll(async () => {
  mesh = await startBillingMesh({ billingEnv: ENV });
});
afterAll(async () => {
  for (const r of receivers) await r.close();
  await mesh?.stop();
});

async function receiver(respond: Receiver["respond"]) {
  const r = await startReceiver(respond);
  receivers.push(r);
  return r;
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function runJob(tenant: string) {
  const c = mesh.billingClient();
  const { job } = await c.createBoletoJob({ tenant, environment: Environment.SANDBOX, items: [boletoValido(1)] });
  await until(
    () => c.getBoletoJob({ tenant, jobId: job!.jobId }),
    (r) => r.job!.state === JobState.COMPLETED,
  );
  return job!.jobId;
}

const deliveries = (tenant: string, jobId: string) => mesh.billingClient().listWebhookDeliveries({ tenant, jobId });
const headersOf = (r: Receiver, i: number) => ({
  id: String(r.received[i]!.headers["webhook-id"]),
  timestamp: String(r.received[i]!.headers["webhook-timestamp"]),
  signature: String(r.received[i]!.headers["webhook-signature"]),
});

describe("completion webhooks", () => {
  it("a receiver that fails twice then succeeds gets one valid, verifiable delivery", async () => {
    const r = await receiver((n) => (n < 2 ? 503 : 204));
    const c = mesh.billingClient();
    const set = await c.setWebhookEndpoint({ tenant: "wh1", url: r.url, enabled: true });
    expect(set.secret).toMatch(/^whsec_/);
    expect(set.endpoint?.secretHint).toBe(set.secret.slice(-4));
    const jobId = await runJob("wh1");
    const log = await until(
      () => deliveries("wh1", jobId),
      (l) => l.deliveries[0]?.state === DeliveryState.SUCCEEDED,
    );
    expect(log.deliveries).toHaveLength(1);
    expect(log.deliveries[0]).toMatchObject({ attempts: 3, lastHttpStatus: 204, eventType: "job.boletos.completed" });
    expect(r.received).toHaveLength(3);
    const id = log.deliveries[0]!.deliveryId;
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 3; i++) {
      expect(headersOf(r, i).id).toBe(id);
      expect(r.received[i]!.body).toBe(r.received[0]!.body);
      expect(verify(set.secret, headersOf(r, i), r.received[i]!.body, now)).toBe(true);
    }
    const event = JSON.parse(r.received[2]!.body);
    expect(event).toMatchObject({
      id,
      type: "job.boletos.completed",
      tenant: "wh1",
      jobId,
      state: "JOB_STATE_COMPLETED",
      counters: { total: 1, completed: 1 },
    });
    expect(event.zipArtifactId).toMatch(/.+/);
    // A body changed in transit does not verify.
    expect(verify(set.secret, headersOf(r, 2), r.received[2]!.body.replace("wh1", "wh2"), now)).toBe(false);
  });

  it("dead-letters after the attempt limit; RedeliverWebhook sends the same id and body again", async () => {
    let healthy = false;
    const r = await receiver(() => (healthy ? 200 : 500));
    const c = mesh.billingClient();
    const { secret } = await c.setWebhookEndpoint({ tenant: "wh2", url: r.url, enabled: true });
    const jobId = await runJob("wh2");
    const dead = await until(
      () => deliveries("wh2", jobId),
      (l) => l.deliveries[0]?.state === DeliveryState.DEAD_LETTERED,
    );
    expect(dead.deliveries[0]).toMatchObject({ attempts: 3, lastHttpStatus: 500, lastError: "HTTP 500" });
    expect(r.received).toHaveLength(3);
    // The job is untouched by its consumer's failures.
    expect((await c.getBoletoJob({ tenant: "wh2", jobId })).job?.state).toBe(JobState.COMPLETED);

    healthy = true;
    const id = dead.deliveries[0]!.deliveryId;
    await expect(c.redeliverWebhook({ tenant: "other", deliveryId: id })).rejects.toMatchObject({ code: Code.NotFound });
    const again = await c.redeliverWebhook({ tenant: "wh2", deliveryId: id });
    expect(again.delivery?.deliveryId).toBe(id);
    const ok = await until(
      () => deliveries("wh2", jobId),
      (l) => l.deliveries[0]?.state === DeliveryState.SUCCEEDED,
    );
    expect(ok.deliveries[0]?.attempts).toBe(4);
    expect(r.received).toHaveLength(4);
    expect(headersOf(r, 3).id).toBe(id);
    expect(r.received[3]!.body).toBe(r.received[0]!.body);
    expect(verify(secret, headersOf(r, 3), r.received[3]!.body, Math.floor(Date.now() / 1000))).toBe(true);
  });

  it("manages the endpoint: no secret on reads, rotation, validation, deletion → SKIPPED deliveries", async () => {
    const c = mesh.billingClient();
    await expect(c.getWebhookEndpoint({ tenant: "wh3" })).rejects.toMatchObject({ code: Code.NotFound });
    await expect(c.setWebhookEndpoint({ tenant: "wh3", url: "ftp://x.example/", enabled: true })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    await expect(c.setWebhookEndpoint({ tenant: "wh3", url: "not a url", enabled: true })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    await expect(
      c.setWebhookEndpoint({ tenant: "wh3", url: "https://x.example/h", eventTypes: ["everything"], enabled: true }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument });
    const first = await c.setWebhookEndpoint({ tenant: "wh3", url: "https://x.example/h", enabled: true });
    const update = await c.setWebhookEndpoint({
      tenant: "wh3",
      url: "https://x.example/h2",
      eventTypes: ["job.boletos.failed"],
      enabled: true,
    });
    expect(update.secret).toBe(""); // unchanged secret is not shown again
    expect(update.endpoint).toMatchObject({
      url: "https://x.example/h2",
      eventTypes: ["job.boletos.failed"],
      secretHint: first.secret.slice(-4),
    });
    const rotated = await c.setWebhookEndpoint({ tenant: "wh3", url: "https://x.example/h2", enabled: false, rotateSecret: true });
    expect(rotated.secret).toMatch(/^whsec_/);
    expect(rotated.secret).not.toBe(first.secret);
    const got = await c.getWebhookEndpoint({ tenant: "wh3" });
    expect(toJsonString(GetWebhookEndpointResponseSchema, got)).not.toContain(rotated.secret.slice(6, 20));
    expect(got.endpoint).toMatchObject({ enabled: false, secretHint: rotated.secret.slice(-4) });
    await c.deleteWebhookEndpoint({ tenant: "wh3" });
    await expect(c.deleteWebhookEndpoint({ tenant: "wh3" })).rejects.toMatchObject({ code: Code.NotFound });
    const jobId = await runJob("wh3");
    const log = await until(
      () => deliveries("wh3", jobId),
      (l) => l.deliveries[0]?.state === DeliveryState.SKIPPED,
    );
    expect(log.deliveries[0]).toMatchObject({ attempts: 0, lastError: "no endpoint configured" });
  });

  it("a rotated-out secret keeps signing beside the new one for its grace period; zero grace drops it at once", async () => {
    const r = await receiver(() => 204);
    const c = mesh.billingClient();
    const signed = async (tenant: string) => {
      const jobId = await runJob(tenant);
      await until(
        () => deliveries(tenant, jobId),
        (l) => l.deliveries[0]?.state === DeliveryState.SUCCEEDED,
      );
      const i = r.received.findIndex((x) => JSON.parse(x.body).jobId === jobId);
      return { h: headersOf(r, i), body: r.received[i]!.body, now: Math.floor(Date.now() / 1000) };
    };
    const s1 = (await c.setWebhookEndpoint({ tenant: "wh5", url: r.url, enabled: true })).secret;
    await expect(
      c.setWebhookEndpoint({ tenant: "wh5", url: r.url, enabled: true, previousSecretGrace: { seconds: 60n } }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(
      c.setWebhookEndpoint({ tenant: "wh5", url: r.url, enabled: true, rotateSecret: true, previousSecretGrace: { seconds: 8n * 86400n } }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument });

    // Default grace (24 h): both secrets sign, so a receiver still holding s1 verifies, and one holding s2 too.
    const before = Date.now();
    const s2 = (await c.setWebhookEndpoint({ tenant: "wh5", url: r.url, enabled: true, rotateSecret: true })).secret;
    const ep = (await c.getWebhookEndpoint({ tenant: "wh5" })).endpoint!;
    expect(ep).toMatchObject({ secretHint: s2.slice(-4), previousSecretHint: s1.slice(-4) });
    const expires = Number(ep.previousSecretExpiresAt!.seconds) * 1000;
    expect(expires).toBeGreaterThanOrEqual(before + 24 * 3600_000 - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * 3600_000 + 1000);
    const both = await signed("wh5");
    expect(both.h.signature.split(" ")).toHaveLength(2);
    expect([verify(s1, both.h, both.body, both.now), verify(s2, both.h, both.body, both.now)]).toEqual([true, true]);

    // Zero grace (a leaked secret): only the new one signs from now on, and reads show no previous secret.
    const s3 = (
      await c.setWebhookEndpoint({ tenant: "wh5", url: r.url, enabled: true, rotateSecret: true, previousSecretGrace: { seconds: 0n } })
    ).secret;
    const afterLeak = (await c.getWebhookEndpoint({ tenant: "wh5" })).endpoint!;
    expect([afterLeak.secretHint, afterLeak.previousSecretHint, afterLeak.previousSecretExpiresAt]).toEqual([s3.slice(-4), "", undefined]);
    const only = await signed("wh5");
    expect(only.h.signature.split(" ")).toHaveLength(1);
    expect([verify(s2, only.h, only.body, only.now), verify(s3, only.h, only.body, only.now)]).toEqual([false, true]);

    // A grace period that has run out signs no more.
    await c.setWebhookEndpoint({ tenant: "wh5", url: r.url, enabled: true, rotateSecret: true, previousSecretGrace: { seconds: 1n } });
    await new Promise((res) => setTimeout(res, 1200));
    expect((await c.getWebhookEndpoint({ tenant: "wh5" })).endpoint?.previousSecretHint).toBe("");
    expect((await signed("wh5")).h.signature.split(" ")).toHaveLength(1);
  });

  it("a sender killed mid-request: after a restart the same webhook-id is sent again, one delivery", async () => {
    const r = await receiver((n) => (n === 0 ? "hang" : 200));
    const c = mesh.billingClient();
    const { secret } = await c.setWebhookEndpoint({ tenant: "wh4", url: r.url, enabled: true });
    const victim = mesh.billing.at(-1)!;
    const { job } = await c.createBoletoJob({ tenant: "wh4", environment: Environment.SANDBOX, items: [boletoValido(1)] });
    await until(
      async () => r.received.length,
      (n) => n >= 1,
    );
    victim.kill("SIGKILL");
    await victim.exited;
    await mesh.startBilling();
    const log = await until(
      () => deliveries("wh4", job!.jobId),
      (l) => l.deliveries[0]?.state === DeliveryState.SUCCEEDED,
    );
    expect(log.deliveries).toHaveLength(1);
    expect(r.received).toHaveLength(2);
    expect(headersOf(r, 0).id).toBe(headersOf(r, 1).id);
    expect(r.received[0]!.body).toBe(r.received[1]!.body);
    expect(verify(secret, headersOf(r, 1), r.received[1]!.body, Math.floor(Date.now() / 1000))).toBe(true);
  });
});
