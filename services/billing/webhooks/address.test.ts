// Webhook deliveries go to public addresses only (unless BILLING_WEBHOOK_ALLOW_PRIVATE): the address
// table, IP-literal URLs refused when the endpoint is set, and names refused after DNS when a real billing
// process delivers — the receiver on loopback never sees the request.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { Environment, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { DeliveryState } from "../../../libs/gen/malha/billing/v1/webhook_pb.js";
import { startBillingMesh, type BillingMesh } from "../../../test/support/billing-mesh.js";
import { boletoValido } from "../testing/fixtures.js";
import { isPublicAddress, literalAddressProblem, publicOnlyLookup } from "./address.js";
import { startReceiver, type Receiver } from "../testing/webhook-receiver.js";

describe("public addresses", () => {
  it.each(["8.8.8.8", "200.160.2.3", "1.1.1.1", "2001:4860:4860::8888", "::ffff:8.8.8.8"])("%s is public", (a) =>
    expect(isPublicAddress(a)).toBe(true),
  );
  it.each([
    "127.0.0.1",
    "10.1.2.3",
    "172.16.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "169.254.169.254",
    "100.64.0.1",
    "0.0.0.0",
    "224.0.0.1",
    "255.255.255.255",
    "::1",
    "::",
    "fd00::1",
    "fe80::1",
    "ff02::1",
    "::ffff:127.0.0.1",
    "::ffff:7f00:1",
    "64:ff9b::a9fe:a9fe",
    "not-an-ip",
  ])("%s is not", (a) => expect(isPublicAddress(a)).toBe(false));

  it("refuses IP-literal URLs of private addresses, and leaves names to the connection", () => {
    expect(literalAddressProblem("https://169.254.169.254/latest/meta-data")).toMatch(/^169\.254\.169\.254 is not a public address/);
    expect(literalAddressProblem("https://[::1]:8443/hook")).toMatch(/^::1 is not a public address/);
    expect(literalAddressProblem("https://8.8.8.8/hook")).toBeUndefined();
    expect(literalAddressProblem("https://hooks.example.com/x")).toBeUndefined();
  });

  it("a name that resolves to loopback fails its lookup", async () => {
    const err = await new Promise<Error | null>((resolve) => publicOnlyLookup("localhost", {}, (e) => resolve(e)));
    expect(err?.message).toMatch(/^localhost resolves to (127\.0\.0\.1|::1), which is not a public address/);
  });
});

describe("a billing process delivering to public addresses only", () => {
  let mesh: BillingMesh;
  let receiver: Receiver;
  beforeAll(async () => {
    mesh = await startBillingMesh({
      billingEnv: {
        BILLING_WEBHOOK_ALLOW_HTTP: "true",
        BILLING_WEBHOOK_ALLOW_PRIVATE: "false",
        BILLING_WEBHOOK_POLL_SECONDS: "0.1",
        BILLING_WEBHOOK_BACKOFF_SECONDS: "0.1",
        BILLING_WEBHOOK_MAX_ATTEMPTS: "2",
      },
    });
    receiver = await startReceiver(() => 204);
  });
  afterAll(async () => {
    await receiver?.close();
    await mesh?.stop();
  });

  it("refuses a loopback address when the endpoint is set, and a name resolving to one at delivery, without calling it", async () => {
    const c = mesh.billingClient();
    await expect(c.setWebhookEndpoint({ tenant: "ssrf", url: receiver.url, enabled: true })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    await c.setWebhookEndpoint({ tenant: "ssrf", url: receiver.url.replace("127.0.0.1", "localhost"), enabled: true });
    const { job } = await c.createBoletoJob({ tenant: "ssrf", environment: Environment.SANDBOX, items: [boletoValido(1)] });
    let state = DeliveryState.UNSPECIFIED;
    let lastError = "";
    for (let i = 0; i < 100 && state !== DeliveryState.DEAD_LETTERED; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const d = (await c.listWebhookDeliveries({ tenant: "ssrf", jobId: job!.jobId })).deliveries[0];
      if (d) [state, lastError] = [d.state, d.lastError];
    }
    expect(state).toBe(DeliveryState.DEAD_LETTERED);
    expect(lastError).toMatch(/localhost resolves to \S+, which is not a public address/);
    expect(receiver.received).toHaveLength(0);
    // The job itself is untouched by its webhook's fate.
    expect((await c.getBoletoJob({ tenant: "ssrf", jobId: job!.jobId })).job?.state).toBe(JobState.COMPLETED);
  });
});
