// Retention against MariaDB: a finished job past the period goes with every row that names it; recent
// or unfinished jobs and the number sequences stay; one replica purges at a time; and through a real
// billing process, a purged job's idempotency key makes a new job.
import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { Code } from "@connectrpc/connect";
import type { RowDataPacket } from "mysql2/promise";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../../libs/db/migrate.js";
import { Environment, JobKind, JobState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { startBillingMesh, type BillingMesh } from "../../../test/support/billing-mesh.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../../../test/support/mysql.js";
import { sampleValue, scrape } from "../../../test/support/prom-text.js";
import { boletoValido } from "../testing/fixtures.js";
import { JOB_TABLES, purgeFinishedJobs, RETENTION_LOCK } from "./retention.js";

const DAY = 86_400_000;
/** Every billing table with a job_id column, read from the schema at the start of the test. */
let TABLES: string[] = [];
const sha = (s: string) => createHash("sha256").update(s).digest("hex");

describe("purgeFinishedJobs", () => {
  let db: ThrowawayDatabase;
  beforeAll(async () => {
    db = await createThrowawayDatabase();
    await migrate(db.pool, fileURLToPath(new URL("../../../migrations", import.meta.url)));
    const [cols] = await db.pool.query<RowDataPacket[]>(
      "SELECT table_name AS t FROM information_schema.columns WHERE table_schema = DATABASE() AND column_name = 'job_id' AND table_name LIKE 'billing\\_%' ORDER BY table_name",
    );
    TABLES = cols.map((c) => c["t"] as string);
  });

  it("purges every billing table that names a job (a new one must be added to the purge)", () => {
    expect(TABLES.length).toBeGreaterThanOrEqual(8);
    expect([...JOB_TABLES].sort()).toEqual(TABLES);
  });
  afterAll(async () => {
    await db?.drop();
  });

  /** A job with one row in every table that names it. */
  async function job(id: string, state: JobState, updatedAgoMs: number) {
    const q = (sql: string, args: unknown[]) => db.pool.query(sql, args);
    const at = new Date(Date.now() - updatedAgoMs);
    await q(
      "INSERT INTO billing_jobs (id, tenant, kind, state, environment, metadata, total_items, created_at, updated_at) VALUES (?, 't', ?, ?, 1, '{}', 1, ?, ?)",
      [id, JobKind.BOLETO, state, at, at],
    );
    await q(
      "INSERT INTO billing_boleto_items (job_id, position, item_id, state, input, created_at, updated_at) VALUES (?, 1, 'i', 4, '{\"pagador\":\"Maria\"}', ?, ?)",
      [id, at, at],
    );
    await q("INSERT INTO billing_item_attempts (job_id, position, number, state) VALUES (?, 1, 1, 4)", [id]);
    await q(
      "INSERT INTO billing_remessa_sublotes (job_id, idx, sublote_id, sublote_key, state, titulos, valor_total_cents, updated_at) VALUES (?, 0, 's', '{}', 3, 1, 100, ?)",
      [id, at],
    );
    await q(
      "INSERT INTO billing_retorno_occurrences (job_id, line_number, state, fingerprint_sha256, duplicate, body) VALUES (?, 2, 3, ?, 0, '{}')",
      [id, sha(`f${id}`)],
    );
    await q("INSERT INTO billing_retorno_fingerprints (tenant, fingerprint_sha256, job_id) VALUES ('t', ?, ?)", [sha(`f${id}`), id]);
    await q("INSERT INTO billing_retorno_files (tenant, file_sha256, job_id) VALUES ('t', ?, ?)", [sha(`file${id}`), id]);
    await q(
      "INSERT INTO billing_webhook_deliveries (id, tenant, job_id, job_round, event_type, state, attempt_limit, created_at, body) VALUES (?, 't', ?, 0, 'job.boletos.completed', 3, 8, ?, '{}')",
      [`msg_${id}`, id, at],
    );
    await q(
      "INSERT INTO billing_idempotency_keys (tenant, key_sha256, idempotency_key, request_sha256, job_id, created_at) VALUES ('t', ?, ?, ?, ?, ?)",
      [sha(`k${id}`), `k${id}`, sha("r"), id, at],
    );
  }
  const rowsOf = async (id: string) => {
    const out: Record<string, number> = {};
    for (const t of [...TABLES, "billing_jobs"]) {
      const [r] = await db.pool.query<RowDataPacket[]>(
        `SELECT COUNT(*) AS n FROM ${t} WHERE ${t === "billing_jobs" ? "id" : "job_id"} = ?`,
        [id],
      );
      out[t] = Number(r[0]!["n"]);
    }
    return out;
  };
  const none = () => Object.fromEntries([...TABLES, "billing_jobs"].map((t) => [t, 0]));
  const one = () => Object.fromEntries([...TABLES, "billing_jobs"].map((t) => [t, 1]));

  it("deletes finished jobs past the cutoff with every row naming them; keeps recent and unfinished jobs and the sequences", async () => {
    await job("old-done", JobState.COMPLETED, 200 * DAY);
    await job("old-failed", JobState.FAILED, 190 * DAY);
    await job("recent", JobState.PARTIALLY_COMPLETED, 10 * DAY);
    await job("old-running", JobState.PROCESSING, 300 * DAY);
    await db.pool.query(
      "INSERT INTO billing_nsa_seq (tenant, environment, banco, convenio, last_nsa) VALUES ('t', 1, '001', '1234567', 41)",
    );
    const result = await purgeFinishedJobs(db.pool, new Date(Date.now() - 180 * DAY));
    expect(result).toEqual({ jobs: 2, rows: 2 * (TABLES.length + 1) });
    expect(await rowsOf("old-done")).toEqual(none());
    expect(await rowsOf("old-failed")).toEqual(none());
    expect(await rowsOf("recent")).toEqual(one());
    expect(await rowsOf("old-running")).toEqual(one());
    const [seq] = await db.pool.query<RowDataPacket[]>("SELECT last_nsa FROM billing_nsa_seq WHERE tenant = 't'");
    expect(seq[0]!["last_nsa"]).toBe(41);
    expect(await purgeFinishedJobs(db.pool, new Date(Date.now() - 180 * DAY))).toEqual({ jobs: 0, rows: 0 });
  });

  it("works through many jobs in batches, and leaves the work to whoever holds the purge", async () => {
    for (let i = 0; i < 25; i++) await job(`bulk-${i}`, JobState.COMPLETED, 400 * DAY);
    const holder = await db.pool.getConnection();
    try {
      await holder.query("SELECT GET_LOCK(?, 0)", [RETENTION_LOCK]);
      expect(await purgeFinishedJobs(db.pool, new Date(Date.now() - 180 * DAY))).toBeUndefined();
      expect((await rowsOf("bulk-0")).billing_jobs).toBe(1);
    } finally {
      await holder.query("SELECT RELEASE_LOCK(?)", [RETENTION_LOCK]);
      holder.release();
    }
    expect(await purgeFinishedJobs(db.pool, new Date(Date.now() - 180 * DAY), { batch: 10, maxJobs: 20 })).toEqual({
      jobs: 20,
      rows: 20 * (TABLES.length + 1),
    });
    expect((await purgeFinishedJobs(db.pool, new Date(Date.now() - 180 * DAY), { batch: 10 }))?.jobs).toBe(5);
  });
});

describe("retention in a billing process", () => {
  let mesh: BillingMesh;
  beforeAll(async () => {
    mesh = await startBillingMesh({ billingEnv: { BILLING_RETENTION_DAYS: "7", BILLING_RETENTION_SWEEP_SECONDS: "0.2" } });
  });
  afterAll(async () => {
    await mesh?.stop();
  });

  it("deletes a job once it is past retention, and its idempotency key then makes a new job", async () => {
    const c = mesh.billingClient();
    const req = { tenant: "ret", idempotencyKey: "lote-1", environment: Environment.SANDBOX, items: [boletoValido(1)] };
    const { job } = await c.createBoletoJob(req);
    for (
      let s = (await c.getBoletoJob({ tenant: "ret", jobId: job!.jobId })).job!.state;
      s !== JobState.COMPLETED;
      s = (await c.getBoletoJob({ tenant: "ret", jobId: job!.jobId })).job!.state
    ) {
      await new Promise((r) => setTimeout(r, 100));
    }
    expect((await c.createBoletoJob(req)).idempotentReplay).toBe(true);
    // Eight days later, as far as the rows can tell.
    await mesh.db.pool.query("UPDATE billing_jobs SET updated_at = ? WHERE id = ?", [new Date(Date.now() - 8 * DAY), job!.jobId]);
    let code: Code | undefined;
    for (let i = 0; i < 50 && code !== Code.NotFound; i++) {
      await new Promise((r) => setTimeout(r, 100));
      code = await c.getBoletoJob({ tenant: "ret", jobId: job!.jobId }).then(
        () => undefined,
        (e: { code: Code }) => e.code,
      );
    }
    expect(code).toBe(Code.NotFound);
    const again = await c.createBoletoJob(req);
    expect(again.idempotentReplay).toBe(false);
    expect(again.job!.jobId).not.toBe(job!.jobId);
    expect(sampleValue(await scrape(mesh.billing[0]!.metricsPort), "malha_billing_jobs_purged_total")).toBe(1);
  });
});
