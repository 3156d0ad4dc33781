// Tenant isolation on every billing RPC: tenant "dona" owns a boleto job, a remessa job, a retorno job,
// a webhook endpoint and a delivery; tenant "intrusa" names each of them through every RPC of
// BillingService. Ids of another tenant are NOT_FOUND, lists never show them, idempotency keys and file
// hashes are per tenant, and nothing the intruder does changes the owner's state. An RPC added to the
// service without a case here fails the coverage check below.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { CNAB_FIXTURES } from "../../libs/cobranca/testing/fixtures.js";
import { create } from "@bufbuild/protobuf";
import { Code } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BillingService } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { CnabLayout, RemessaTituloSchema } from "../../libs/gen/malha/billing/v1/cnab_pb.js";
import { Environment, ItemState, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { DeliveryState } from "../../libs/gen/malha/billing/v1/webhook_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoInvalido, boletoValido } from "./testing/fixtures.js";
import { startReceiver, type Receiver } from "./testing/webhook-receiver.js";

const OWNER = "dona";
const INTRUDER = "intrusa";
const ITAU = readFileSync(join(CNAB_FIXTURES, "retorno/400/brcobranca-341-CNAB400ITAU.RET"));
const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

let mesh: BillingMesh;
let receiver: Receiver;
beforeAll(async () => {
  mesh = await startBillingMesh({
    billingEnv: { BILLING_WEBHOOK_ALLOW_HTTP: "true", BILLING_WEBHOOK_POLL_SECONDS: "0.1", BILLING_WEBHOOK_BACKOFF_SECONDS: "0.2" },
  });
  receiver = await startReceiver(() => 204);
});
afterAll(async () => {
  await receiver?.close();
  await mesh?.stop();
});

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean): Promise<T> {
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("tenant isolation", () => {
  it("answers another tenant's jobs, items, files, occurrences, endpoint and deliveries with NOT_FOUND on every RPC", async () => {
    const c = mesh.billingClient();
    await c.setWebhookEndpoint({ tenant: OWNER, url: receiver.url, enabled: true });

    // What the owner has: a boleto job with a failed item (so a retry would have something to do)…
    const items = [boletoValido(1), boletoInvalido(2, 1)];
    const boleto = (await c.createBoletoJob({ tenant: OWNER, idempotencyKey: "kb", environment: Environment.SANDBOX, items })).job!;
    const boletoDone = await until(
      () => c.getBoletoJob({ tenant: OWNER, jobId: boleto.jobId }),
      (r) => FINAL.includes(r.job!.state),
    );
    expect(boletoDone.job!.state).toBe(JobState.PARTIALLY_COMPLETED);
    const [done, failed] = (await c.listBoletoJobItems({ tenant: OWNER, jobId: boleto.jobId })).items;
    expect([done!.state, failed!.state]).toEqual([ItemState.COMPLETED, ItemState.FAILED]);
    // …a remessa job with its sub-batch…
    const titulos = [create(RemessaTituloSchema, { boleto: boletoValido(3, { externalId: "r-1" }) })];
    const remessa = (
      await c.createRemessaJob({
        tenant: OWNER,
        idempotencyKey: "kr",
        environment: Environment.SANDBOX,
        layout: CnabLayout.CNAB_LAYOUT_240,
        titulos,
      })
    ).job!;
    await until(
      () => c.getRemessaJob({ tenant: OWNER, jobId: remessa.jobId }),
      (r) => FINAL.includes(r.job!.state),
    );
    const [sublote] = (await c.listRemessaFiles({ tenant: OWNER, jobId: remessa.jobId })).files;
    expect(sublote).toBeDefined();
    // …a retorno job, and the completion webhook of the boleto job.
    const retorno = (await c.createRetornoJob({ tenant: OWNER, idempotencyKey: "kt", source: { case: "file", value: ITAU } })).job!;
    await until(
      () => c.getRetornoJob({ tenant: OWNER, jobId: retorno.jobId }),
      (r) => FINAL.includes(r.job!.state),
    );
    const delivery = (
      await until(
        () => c.listWebhookDeliveries({ tenant: OWNER, jobId: boleto.jobId }),
        (l) => l.deliveries[0]?.state === DeliveryState.SUCCEEDED,
      )
    ).deliveries[0]!;
    const ownerJobs = [boleto.jobId, remessa.jobId, retorno.jobId];
    const ownerState = async () => ({
      jobs: (await c.listJobs({ tenant: OWNER })).jobs.map((j) => [j.jobId, j.state, j.counters?.failed]),
      items: (await c.listBoletoJobItems({ tenant: OWNER, jobId: boleto.jobId })).items.map((i) => [i.itemId, i.state, i.attempts.length]),
      endpoint: (await c.getWebhookEndpoint({ tenant: OWNER })).endpoint,
      deliveries: (await c.listWebhookDeliveries({ tenant: OWNER })).deliveries.map((d) => [d.deliveryId, d.state, d.attempts]),
    });
    const before = await ownerState();

    const notFound = (call: () => Promise<unknown>) => expect(call()).rejects.toMatchObject({ code: Code.NotFound });
    const i = INTRUDER;
    const cases: Record<string, () => Promise<void>> = {
      createBoletoJob: async () => {
        const mine = await c.createBoletoJob({ tenant: i, idempotencyKey: "kb", environment: Environment.SANDBOX, items });
        expect(mine.idempotentReplay).toBe(false);
        expect(ownerJobs).not.toContain(mine.job!.jobId);
      },
      getBoletoJob: () => notFound(() => c.getBoletoJob({ tenant: i, jobId: boleto.jobId })),
      listBoletoJobItems: () => notFound(() => c.listBoletoJobItems({ tenant: i, jobId: boleto.jobId })),
      getBoletoJobItem: () => notFound(() => c.getBoletoJobItem({ tenant: i, jobId: boleto.jobId, itemId: done!.itemId })),
      getBoletoJobArtifacts: () => notFound(() => c.getBoletoJobArtifacts({ tenant: i, jobId: boleto.jobId })),
      retryFailedItems: () => notFound(() => c.retryFailedItems({ tenant: i, jobId: boleto.jobId, itemIds: [failed!.itemId] })),
      createRemessaJob: async () => {
        const mine = await c.createRemessaJob({
          tenant: i,
          idempotencyKey: "kr",
          environment: Environment.SANDBOX,
          layout: CnabLayout.CNAB_LAYOUT_240,
          titulos,
        });
        expect(mine.idempotentReplay).toBe(false);
        expect(ownerJobs).not.toContain(mine.job!.jobId);
      },
      getRemessaJob: () => notFound(() => c.getRemessaJob({ tenant: i, jobId: remessa.jobId })),
      listRemessaTitulos: () => notFound(() => c.listRemessaTitulos({ tenant: i, jobId: remessa.jobId, subloteId: sublote!.subloteId })),
      listRemessaFiles: () => notFound(() => c.listRemessaFiles({ tenant: i, jobId: remessa.jobId })),
      retryRemessaSublotes: () =>
        notFound(() => c.retryRemessaSublotes({ tenant: i, jobId: remessa.jobId, subloteIds: [sublote!.subloteId] })),
      createRetornoJob: async () => {
        const mine = await c.createRetornoJob({ tenant: i, idempotencyKey: "kt", source: { case: "file", value: ITAU } });
        expect(mine.idempotentReplay).toBe(false);
        expect(ownerJobs).not.toContain(mine.job!.jobId);
      },
      getRetornoJob: () => notFound(() => c.getRetornoJob({ tenant: i, jobId: retorno.jobId })),
      listRetornoOccurrences: () => notFound(() => c.listRetornoOccurrences({ tenant: i, jobId: retorno.jobId })),
      listJobs: async () => {
        const seen = (await c.listJobs({ tenant: i, pageSize: 500 })).jobs.map((j) => j.jobId);
        for (const id of ownerJobs) expect(seen).not.toContain(id);
        expect((await c.listJobs({ tenant: i, jobId: boleto.jobId })).jobs).toEqual([]);
        expect((await c.listJobs({ tenant: i, itemId: done!.itemId })).jobs.map((j) => j.jobId)).not.toContain(boleto.jobId);
      },
      countJobs: async () => {
        const mine = (await c.countJobs({ tenant: i })).counts.reduce((n, k) => n + k.count, 0);
        expect(mine).toBe(3);
      },
      getWebhookEndpoint: () => notFound(() => c.getWebhookEndpoint({ tenant: i })),
      deleteWebhookEndpoint: () => notFound(() => c.deleteWebhookEndpoint({ tenant: i })),
      listWebhookDeliveries: async () => {
        expect((await c.listWebhookDeliveries({ tenant: i, jobId: boleto.jobId })).deliveries).toEqual([]);
        expect((await c.listWebhookDeliveries({ tenant: i })).deliveries.map((d) => d.deliveryId)).not.toContain(delivery.deliveryId);
      },
      redeliverWebhook: () => notFound(() => c.redeliverWebhook({ tenant: i, deliveryId: delivery.deliveryId })),
      // Last: with an endpoint of its own the intruder still reaches nothing of the owner's.
      setWebhookEndpoint: async () => {
        await c.setWebhookEndpoint({ tenant: i, url: `${receiver.url}/intrusa`, enabled: true });
        await notFound(() => c.redeliverWebhook({ tenant: i, deliveryId: delivery.deliveryId }));
        expect((await c.getWebhookEndpoint({ tenant: OWNER })).endpoint?.url).toBe(receiver.url);
      },
    };
    expect(Object.keys(cases).sort()).toEqual(BillingService.methods.map((m) => m.localName).sort());
    for (const [name, run] of Object.entries(cases)) {
      await run().catch((e: unknown) => {
        throw new Error(`${name}: ${e instanceof Error ? e.message : String(e)}`);
      });
    }
    expect(await ownerState()).toEqual(before);
  });
});
