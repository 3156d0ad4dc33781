// Boleto jobs end to end: real MariaDB, NATS JetStream, artifacts and billing processes over gRPC.
import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Code, ConnectError } from "@connectrpc/connect";
import { Environment, ItemState, JobKind, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { boletoInvalido, boletoValido } from "./testing/fixtures.js";

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh();
});
afterAll(async () => {
  await mesh?.stop();
});

async function waitFinished(tenant: string, jobId: string) {
  for (;;) {
    const { job } = await mesh.billingClient().getBoletoJob({ tenant, jobId });
    if (job && [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("boleto job", () => {
  it("renders valid items, fails invalid ones with codes, and reaches PARTIALLY_COMPLETED", async () => {
    const c = mesh.billingClient();
    const items = [boletoValido(1), boletoInvalido(2, 1), boletoValido(3), boletoValido(4, { externalId: "t-0001" })];
    const res = await c.createBoletoJob({
      tenant: "acme",
      idempotencyKey: "k1",
      requestedBy: "ana",
      environment: Environment.SANDBOX,
      items,
    });
    expect(res.idempotentReplay).toBe(false);
    expect(res.job?.state).toBe(JobState.RECEIVED);
    expect(res.job?.counters?.total).toBe(4);
    const job = await waitFinished("acme", res.job!.jobId);
    expect(job.state).toBe(JobState.PARTIALLY_COMPLETED);
    expect(job.counters).toMatchObject({ total: 4, completed: 2, failed: 1, skipped: 1, pending: 0, inProgress: 0 });
    // item 2 has another bank: a field that differs between items is left empty
    expect(job.metadata).toMatchObject({ banco: "", carteira: "09", tenant: "acme", requestedBy: "ana", environment: Environment.SANDBOX });
    expect(job.metrics?.duracaoMs).toBeGreaterThanOrEqual(0n);

    const { item } = await c.getBoletoJobItem({ tenant: "acme", jobId: job.jobId, itemId: "t-0002" });
    expect(item?.state).toBe(ItemState.FAILED);
    expect(item?.errors[0]).toMatchObject({ code: "BANCO_DESCONHECIDO", field: "conta.banco", retryable: false });
    expect(item?.attempts).toHaveLength(1);
    const ok = (await c.getBoletoJobItem({ tenant: "acme", jobId: job.jobId, itemId: "t-0001" })).item!;
    expect(ok.result?.linhaDigitavel).toHaveLength(47);
    expect(ok.input?.numeroDocumento).toBe("DOC1");
    const pdf = await (await fetch(ok.result!.pdf!.downloadUrl)).arrayBuffer();
    expect(createHash("sha256").update(Buffer.from(pdf)).digest("hex")).toBe(ok.result!.pdf!.sha256);

    const page1 = await c.listBoletoJobItems({ tenant: "acme", jobId: job.jobId, pageSize: 3 });
    expect(page1.items.map((i) => i.itemId)).toEqual(["t-0001", "t-0002", "t-0003"]);
    const page2 = await c.listBoletoJobItems({ tenant: "acme", jobId: job.jobId, pageSize: 3, pageToken: page1.nextPageToken });
    expect(page2.items.map((i) => [i.position, i.state])).toEqual([[4, ItemState.SKIPPED]]);
    expect(page2.nextPageToken).toBe("");
    const failed = await c.listBoletoJobItems({ tenant: "acme", jobId: job.jobId, state: ItemState.FAILED });
    expect(failed.items.map((i) => i.itemId)).toEqual(["t-0002"]);
    await expect(
      c.listBoletoJobItems({ tenant: "acme", jobId: job.jobId, state: ItemState.FAILED, pageToken: page1.nextPageToken }),
    ).rejects.toMatchObject({ code: Code.InvalidArgument, rawMessage: expect.stringContaining("page_token") });
    // A token is signed: moving its position breaks the signature; another method refuses it too.
    const [body, sig] = page1.nextPageToken.split(".") as [string, string];
    const moved = JSON.parse(Buffer.from(body, "base64url").toString()) as { k: number[] };
    moved.k[0] = 1;
    const tampered = `${Buffer.from(JSON.stringify(moved)).toString("base64url")}.${sig}`;
    await expect(c.listBoletoJobItems({ tenant: "acme", jobId: job.jobId, pageSize: 3, pageToken: tampered })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("signature mismatch"),
    });
    await expect(c.listJobs({ tenant: "acme", pageToken: page1.nextPageToken })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("issued for ListBoletoJobItems"),
    });
    await expect(c.listBoletoJobItems({ tenant: "acme", jobId: job.jobId, pageSize: -1 })).rejects.toMatchObject({
      code: Code.InvalidArgument,
      rawMessage: expect.stringContaining("page_size"),
    });
    // Link lifetimes follow one rule: absent = default, present = used as given or refused, never clamped.
    for (const [linkTtl, why] of [
      [{ seconds: 8n * 86_400n, nanos: 0 }, "link_ttl must be at most 7 days"],
      [{ seconds: 0n, nanos: 0 }, "link_ttl must be positive"],
      [{ seconds: -1n, nanos: 0 }, "link_ttl must not be negative"],
    ] as const) {
      await expect(c.getBoletoJobItem({ tenant: "acme", jobId: job.jobId, itemId: "t-0001", linkTtl })).rejects.toMatchObject({
        code: Code.InvalidArgument,
        rawMessage: expect.stringContaining(why),
      });
    }

    // Same key + same request (another requested_by) → the same job; a changed body → refused.
    const again = await c.createBoletoJob({
      tenant: "acme",
      idempotencyKey: "k1",
      requestedBy: "bia",
      environment: Environment.SANDBOX,
      items,
    });
    expect(again).toMatchObject({ idempotentReplay: true, job: { jobId: job.jobId, state: JobState.PARTIALLY_COMPLETED } });
    const changed = await c
      .createBoletoJob({ tenant: "acme", idempotencyKey: "k1", environment: Environment.SANDBOX, items: items.slice(1) })
      .catch((e: unknown) => ConnectError.from(e));
    expect(changed).toMatchObject({ code: Code.FailedPrecondition });
    // Keys are per tenant: another tenant's identical key is a new job.
    const other = await c.createBoletoJob({ tenant: "other", idempotencyKey: "k1", environment: Environment.SANDBOX, items });
    expect(other.idempotentReplay).toBe(false);
    expect(other.job?.jobId).not.toBe(job.jobId);

    // Tenant isolation: another tenant's job and item are NOT_FOUND.
    for (const call of [
      () => c.getBoletoJob({ tenant: "other", jobId: job.jobId }),
      () => c.getBoletoJobItem({ tenant: "other", jobId: job.jobId, itemId: "t-0001" }),
      () => c.listBoletoJobItems({ tenant: "other", jobId: job.jobId }),
      () => c.getBoletoJobArtifacts({ tenant: "other", jobId: job.jobId }),
      () => c.retryFailedItems({ tenant: "other", jobId: job.jobId }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: Code.NotFound });
    }
  });

  it("exposes job, item and render series on the metrics port", async () => {
    const text = await (await fetch(`http://127.0.0.1:${mesh.billing[0]!.metricsPort}/metrics`)).text();
    expect(text).toMatch(/malha_billing_jobs_finished_total\{[^}]*kind="boleto"[^}]*state="PARTIALLY_COMPLETED"[^}]*\} 1/);
    expect(text).toMatch(/malha_billing_items_finished_total\{[^}]*state="COMPLETED"[^}]*\} [1-9]/);
    expect(text).toMatch(/malha_billing_render_seconds_count\{[^}]*\} [1-9]/);
  });

  it("refuses bad envelopes", async () => {
    const c = mesh.billingClient();
    const base = { tenant: "acme", environment: Environment.PRODUCTION, items: [boletoValido(1)] };
    await expect(c.createBoletoJob({ ...base, tenant: "" })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(c.createBoletoJob({ ...base, tenant: "../x" })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(c.createBoletoJob({ ...base, items: [] })).rejects.toMatchObject({ code: Code.InvalidArgument });
    await expect(c.createBoletoJob({ ...base, environment: Environment.UNSPECIFIED })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });
    const many = Array.from({ length: 201 }, (_, i) => boletoValido(i));
    await expect(c.createBoletoJob({ ...base, items: many })).rejects.toMatchObject({ code: Code.ResourceExhausted });
    await expect(c.getBoletoJob({ tenant: "acme", jobId: "nope" })).rejects.toMatchObject({ code: Code.NotFound });
  });

  it("allocates missing nossos números from the per-convênio sequence, once, never reused", async () => {
    const c = mesh.billingClient();
    const noNn = (n: number) => boletoValido(n, { nossoNumero: "" });
    const nns = async (jobId: string) => {
      await waitFinished("seq", jobId);
      const items = (await c.listBoletoJobItems({ tenant: "seq", jobId })).items;
      expect(items.every((i) => i.state === ItemState.COMPLETED)).toBe(true);
      return items.map((i) => Number(i.result!.nossoNumero)).sort((x, y) => x - y);
    };
    const a = await c.createBoletoJob({ tenant: "seq", environment: Environment.PRODUCTION, items: [noNn(1), noNn(2), noNn(3)] });
    const b = await c.createBoletoJob({ tenant: "seq", environment: Environment.PRODUCTION, items: [noNn(1), noNn(2)] });
    const sandbox = await c.createBoletoJob({ tenant: "seq", environment: Environment.SANDBOX, items: [noNn(1)] });
    expect([...(await nns(a.job!.jobId)), ...(await nns(b.job!.jobId))].sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5]);
    expect(await nns(sandbox.job!.jobId)).toEqual([1]);
  });

  it("two concurrent identical creates make one job", async () => {
    const c = mesh.billingClient();
    const req = { tenant: "race", idempotencyKey: "same", environment: Environment.SANDBOX, items: [boletoValido(7), boletoValido(8)] };
    const results = await Promise.all(Array.from({ length: 6 }, () => c.createBoletoJob(req)));
    expect(new Set(results.map((r) => r.job!.jobId)).size).toBe(1);
    expect(results.filter((r) => !r.idempotentReplay)).toHaveLength(1);
    const list = await c.listJobs({ tenant: "race" });
    expect(list.jobs).toHaveLength(1);
  });
});

describe("ListJobs look-ups and CountJobs", () => {
  it("finds a job by id, idempotency key or an item's external id, and counts jobs by kind and state", async () => {
    const c = mesh.billingClient();
    const tenant = "lookup";
    const first = (
      await c.createBoletoJob({
        tenant,
        idempotencyKey: "pedido-1",
        environment: Environment.SANDBOX,
        items: [boletoValido(1, { externalId: "fatura-77" })],
      })
    ).job!;
    const second = (
      await c.createBoletoJob({
        tenant,
        idempotencyKey: "pedido-2",
        environment: Environment.SANDBOX,
        items: [boletoValido(2), boletoInvalido(3, 1)],
      })
    ).job!;
    await waitFinished(tenant, first.jobId);
    await waitFinished(tenant, second.jobId);
    const ids = async (req: { jobId?: string; idempotencyKey?: string; itemId?: string }) =>
      (await c.listJobs({ tenant, ...req })).jobs.map((j) => j.jobId);
    expect(await ids({ jobId: second.jobId })).toEqual([second.jobId]);
    expect(await ids({ idempotencyKey: "pedido-1" })).toEqual([first.jobId]);
    expect(await ids({ itemId: "fatura-77" })).toEqual([first.jobId]);
    expect(await ids({ itemId: "t-0002" })).toEqual([second.jobId]);
    expect(await ids({ itemId: "fatura-77", idempotencyKey: "pedido-2" })).toEqual([]);
    // Another tenant's job is not found by its id under this tenant.
    expect((await c.listJobs({ tenant: "acme", jobId: second.jobId })).jobs).toEqual([]);
    // A page token is bound to the look-up it was issued for.
    const page = await c.listJobs({ tenant, pageSize: 1 });
    expect(page.nextPageToken).not.toBe("");
    await expect(c.listJobs({ tenant, pageSize: 1, pageToken: page.nextPageToken, idempotencyKey: "pedido-1" })).rejects.toMatchObject({
      code: Code.InvalidArgument,
    });

    const { counts } = await c.countJobs({ tenant });
    expect(counts.map((n) => [n.kind, n.state, n.count])).toEqual([
      [JobKind.BOLETO, JobState.COMPLETED, 1],
      [JobKind.BOLETO, JobState.PARTIALLY_COMPLETED, 1],
    ]);
    const future = { seconds: BigInt(Math.floor(Date.now() / 1000) + 3600), nanos: 0 };
    expect((await c.countJobs({ tenant, created: { start: future } })).counts).toEqual([]);
    await expect(c.countJobs({ tenant: "" })).rejects.toMatchObject({ code: Code.InvalidArgument });
  });
});
