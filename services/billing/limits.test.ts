// Per-tenant concurrent-job limit and timeouts, each on a billing process of its own (own queues).
import { randomBytes } from "node:crypto";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Environment, ItemState, JobKind, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../test/support/billing-mesh.js";
import { sampleValue, scrape } from "../../test/support/prom-text.js";
import { boletoValido } from "./testing/fixtures.js";

let mesh: BillingMesh;
beforeAll(async () => {
  mesh = await startBillingMesh({ processes: 0 });
});
afterAll(async () => {
  await mesh?.stop();
});

const FINAL = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];
const prefix = () => `bl${randomBytes(4).toString("hex")}`;

async function waitFinal(c: ReturnType<BillingMesh["billingClient"]>, tenant: string, jobId: string) {
  for (;;) {
    const { job } = await c.getBoletoJob({ tenant, jobId });
    if (job && FINAL.includes(job.state)) return job;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("limits", () => {
  it("runs one job at a time for a tenant limited to 1; the next waits in RECEIVED; other tenants are not held", async () => {
    const p = await mesh.startBilling({
      BILLING_NATS_PREFIX: prefix(),
      BILLING_TENANT_MAX_RUNNING_JOBS: "1",
      BILLING_RENDER_CONCURRENCY: "2",
    });
    const c = mesh.billingClient(p);
    const items = Array.from({ length: 12 }, (_, i) => boletoValido(i + 1));
    const a = (await c.createBoletoJob({ tenant: "lim", environment: Environment.SANDBOX, items })).job!;
    const b = (await c.createBoletoJob({ tenant: "lim", environment: Environment.SANDBOX, items })).job!;
    const other = (await c.createBoletoJob({ tenant: "free", environment: Environment.SANDBOX, items: items.slice(0, 2) })).job!;
    let sawWaiting = false;
    for (;;) {
      const [ja, jb] = await Promise.all([
        c.getBoletoJob({ tenant: "lim", jobId: a.jobId }),
        c.getBoletoJob({ tenant: "lim", jobId: b.jobId }),
      ]);
      const running = [ja.job!, jb.job!].filter((j) => j.state === JobState.VALIDATING || j.state === JobState.PROCESSING);
      expect(running.length).toBeLessThanOrEqual(1);
      if (running.length === 1 && [ja.job!, jb.job!].some((j) => j.state === JobState.RECEIVED)) sawWaiting = true;
      if (FINAL.includes(ja.job!.state) && FINAL.includes(jb.job!.state)) break;
      await new Promise((r) => setTimeout(r, 25));
    }
    expect(sawWaiting).toBe(true);
    const [rows] = await mesh.db.pool.query<RowDataPacket[]>(
      "SELECT id, started_at, finished_at FROM billing_jobs WHERE id IN (?, ?) ORDER BY started_at",
      [a.jobId, b.jobId],
    );
    // The second one started only after the first one finished.
    expect((rows[1]!["started_at"] as Date).getTime()).toBeGreaterThanOrEqual((rows[0]!["finished_at"] as Date).getTime());
    expect((await waitFinal(c, "free", other.jobId)).state).toBe(JobState.COMPLETED);
  });

  it("fails an item whose render exceeds the per-item timeout with RENDER_TIMEOUT (retryable)", async () => {
    const p = await mesh.startBilling({ BILLING_NATS_PREFIX: prefix(), BILLING_ITEM_TIMEOUT_SECONDS: "0.001" });
    const c = mesh.billingClient(p);
    const { job } = await c.createBoletoJob({
      tenant: "slow",
      environment: Environment.SANDBOX,
      items: [boletoValido(1), boletoValido(2)],
    });
    const done = await waitFinal(c, "slow", job!.jobId);
    expect(done.state).toBe(JobState.FAILED);
    const item = (await c.getBoletoJobItem({ tenant: "slow", jobId: job!.jobId, itemId: "t-0001" })).item!;
    expect(item.errors[0]).toMatchObject({ code: "RENDER_TIMEOUT", retryable: true });
  });

  it("fails the items still unprocessed when the job exceeds its time limit with JOB_TIMEOUT", async () => {
    const p = await mesh.startBilling({
      BILLING_NATS_PREFIX: prefix(),
      BILLING_JOB_TIMEOUT_SECONDS: "1",
      BILLING_RENDER_CONCURRENCY: "1",
      BILLING_RENDER_THREADS: "1",
      JOB_MAX_ITENS: "1000",
    });
    const c = mesh.billingClient(p);
    const items = Array.from({ length: 300 }, (_, i) => boletoValido(i + 1));
    const { job } = await c.createBoletoJob({ tenant: "late", environment: Environment.SANDBOX, items });
    const done = await waitFinal(c, "late", job!.jobId);
    expect(done.counters!.failed).toBeGreaterThan(0);
    expect(done.counters!.completed + done.counters!.failed).toBe(300);
    const failed = await c.listBoletoJobItems({ tenant: "late", jobId: job!.jobId, state: ItemState.FAILED, pageSize: 500 });
    expect(new Set(failed.items.map((i) => i.errors[0]?.code))).toEqual(new Set(["JOB_TIMEOUT"]));
  });

  it("reports unfinished jobs by kind and state, and the age of the oldest round, from MySQL on the metrics port", async () => {
    const p = await mesh.startBilling({ BILLING_NATS_PREFIX: prefix() });
    const now = Date.now();
    const ago = (ms: number) => new Date(now - ms);
    // Rows as the create RPC leaves them; updated now, so no reconciler takes them for stalled.
    const insert = (id: string, kind: JobKind, state: JobState, created: Date, round: Date | null) =>
      mesh.db.pool.query(
        "INSERT INTO billing_jobs (id, tenant, kind, state, environment, metadata, total_items, created_at, round_started_at, updated_at) VALUES (?, 'gauges', ?, ?, 1, '{}', 1, ?, ?, ?)",
        [id, kind, state, created, round, new Date(now)],
      );
    await insert("g-run", JobKind.BOLETO, JobState.PROCESSING, ago(5 * 3600_000), ago(3 * 3600_000));
    await insert("g-wait", JobKind.BOLETO, JobState.RECEIVED, ago(10 * 60_000), null);
    await insert("g-rem", JobKind.REMESSA, JobState.RECEIVED, ago(20 * 60_000), null);
    await insert("g-done", JobKind.BOLETO, JobState.COMPLETED, ago(9 * 3600_000), ago(9 * 3600_000));
    const m = await scrape(p.metricsPort);
    expect(
      [
        ["boleto", "PROCESSING"],
        ["boleto", "RECEIVED"],
        ["remessa", "RECEIVED"],
        ["boleto", "COMPLETED"],
      ].map(([kind, state]) => sampleValue(m, "malha_billing_open_jobs", { kind: kind!, state: state! })),
    ).toEqual([1, 1, 1, undefined]);
    // The running job's round began 3 h ago (its creation 5 h ago does not count); the remessa waits for 20 min.
    expect(sampleValue(m, "malha_billing_oldest_open_job_age_seconds", { kind: "boleto" })).toBeCloseTo(
      3 * 3600 + (Date.now() - now) / 1000,
      -2,
    );
    expect(sampleValue(m, "malha_billing_oldest_open_job_age_seconds", { kind: "remessa" })).toBeCloseTo(
      20 * 60 + (Date.now() - now) / 1000,
      -2,
    );
    await mesh.db.pool.query("DELETE FROM billing_jobs WHERE tenant = 'gauges'");
    expect(sampleValue(await scrape(p.metricsPort), "malha_billing_open_jobs")).toBeUndefined();
  });
});
