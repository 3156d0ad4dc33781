// Jobs and idempotency keys in MySQL. Creation writes the key, the job and its items in one transaction:
// the key's primary key makes two concurrent identical creates collide, and the loser reads the winner.
import { createHash, randomBytes } from "node:crypto";
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { type ItemState, type JobKind, JobState, type Environment } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { inTransaction, isDuplicateKey } from "../../../libs/db/tx.js";
import { keyReused } from "../errors.js";
import type { OpenJobs } from "../metrics.js";
import { RUNNING_JOB_STATES } from "./states.js";
import { manifestOf, metadataOf, type StoredJobMetadata, type StoredManifest } from "./stored.js";

export interface JobRow {
  id: string;
  tenant: string;
  kind: JobKind;
  state: JobState;
  environment: Environment;
  idempotencyKey: string;
  requestedBy: string;
  metadata: StoredJobMetadata;
  totalItems: number;
  retryRounds: number;
  manifest: StoredManifest | null;
  /** Kind-specific document (remessa layout, retorno file and outcome), read by its kind's decoder. */
  detailsJson: string | null;
  duracaoMs: number | null;
  processedItems: number | null;
  createdAt: Date;
  startedAt: Date | null;
  roundStartedAt: Date | null;
  finishedAt: Date | null;
  updatedAt: Date;
  artifactsExpiresAt: Date | null;
}

interface JobDbRow extends RowDataPacket {
  id: string;
  tenant: string;
  kind: JobKind;
  state: JobState;
  environment: Environment;
  idempotency_key: string;
  requested_by: string;
  metadata: string;
  total_items: number;
  retry_rounds: number;
  manifest: string | null;
  details: string | null;
  duracao_ms: string | null;
  processed_items: number | null;
  created_at: Date;
  started_at: Date | null;
  round_started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
  artifacts_expires_at: Date | null;
}

interface KeyDbRow extends RowDataPacket {
  request_sha256: string;
  job_id: string;
}

interface StateDbRow extends RowDataPacket {
  state: JobState;
}

interface OpenDbRow extends RowDataPacket {
  kind: JobKind;
  state: JobState;
  n: number | string;
  oldest: Date;
}

const toJob = (r: JobDbRow): JobRow => ({
  id: r.id,
  tenant: r.tenant,
  kind: r.kind,
  state: r.state,
  environment: r.environment,
  idempotencyKey: r.idempotency_key,
  requestedBy: r.requested_by,
  metadata: metadataOf(r.metadata),
  totalItems: r.total_items,
  retryRounds: r.retry_rounds,
  manifest: manifestOf(r.manifest),
  detailsJson: r.details,
  duracaoMs: r.duracao_ms === null ? null : Number(r.duracao_ms),
  processedItems: r.processed_items,
  createdAt: r.created_at,
  startedAt: r.started_at,
  roundStartedAt: r.round_started_at,
  finishedAt: r.finished_at,
  updatedAt: r.updated_at,
  artifactsExpiresAt: r.artifacts_expires_at,
});

/** Time-ordered ids (newest-first listings sort by id too) with 80 random bits. */
export function newJobId(now: Date): string {
  return `bj${now.getTime().toString(36).padStart(9, "0")}${randomBytes(10).toString("hex")}`;
}

export interface NewItem {
  position: number;
  itemId: string;
  state: ItemState;
  inputJson: string;
  errorsJson: string | null;
  /** Remessa títulos: their sub-batch. */
  subloteIndex?: number | null;
}

export interface NewJob {
  tenant: string;
  kind: JobKind;
  environment: Environment;
  idempotencyKey: string;
  requestSha256: string;
  requestedBy: string;
  metadata: StoredJobMetadata;
  /** Kind-specific document (remessa layout, retorno file header), serialised by its kind. */
  detailsJson?: string;
  items: NewItem[];
  /** Runs inside the creating transaction (remessa sub-batches, retorno file sha). */
  also?: (c: PoolConnection, jobId: string) => Promise<void>;
}

/** What finishing a job writes besides its state. */
export interface FinishColumns {
  finishedAt: Date;
  duracaoMs: number;
  processedItems: number;
  manifest?: StoredManifest;
  artifactsExpiresAt?: Date;
  /** Retorno jobs: the details document with the file's outcome, and the occurrences as their items. */
  detailsJson?: string;
  totalItems?: number;
}

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");
const keySha = (key: string) => createHash("sha256").update(key, "utf8").digest("hex");

export class JobRepo {
  constructor(
    private readonly pool: Pool,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  /** Creates the job or finds the one its idempotency key already names. */
  async create(job: NewJob): Promise<{ jobId: string; replay: boolean }> {
    const now = this.clock();
    const jobId = newJobId(now);
    try {
      await inTransaction(this.pool, async (c) => {
        if (job.idempotencyKey !== "") {
          // A concurrent twin blocks here on the key's row lock until the winner commits, then fails.
          await c.execute(
            "INSERT INTO billing_idempotency_keys (tenant, key_sha256, idempotency_key, request_sha256, job_id, created_at) VALUES (?, ?, ?, ?, ?, ?)",
            [job.tenant, keySha(job.idempotencyKey), job.idempotencyKey, job.requestSha256, jobId, now],
          );
        }
        await c.execute(
          `INSERT INTO billing_jobs (id, tenant, kind, state, environment, idempotency_key, requested_by, metadata, details, total_items, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
          [
            jobId,
            job.tenant,
            job.kind,
            JobState.RECEIVED,
            job.environment,
            job.idempotencyKey,
            job.requestedBy,
            JSON.stringify(job.metadata),
            job.detailsJson ?? null,
            job.items.length,
            now,
            now,
          ],
        );
        for (let i = 0; i < job.items.length; i += 100) {
          const chunk = job.items.slice(i, i + 100);
          await c.query(
            "INSERT INTO billing_boleto_items (job_id, position, item_id, state, input, errors, sublote_index, created_at, updated_at) VALUES ?",
            [chunk.map((it) => [jobId, it.position, it.itemId, it.state, it.inputJson, it.errorsJson, it.subloteIndex ?? null, now, now])],
          );
        }
        await job.also?.(c, jobId);
      });
      return { jobId, replay: false };
    } catch (err) {
      if (!isDuplicateKey(err) || job.idempotencyKey === "") throw err;
    }
    const [rows] = await this.pool.execute<KeyDbRow[]>(
      "SELECT request_sha256, job_id FROM billing_idempotency_keys WHERE tenant = ? AND key_sha256 = ?",
      [job.tenant, keySha(job.idempotencyKey)],
    );
    const row = rows[0];
    if (!row) throw new Error("idempotency key vanished after a duplicate-key error");
    if (row.request_sha256 !== job.requestSha256) throw keyReused(job.idempotencyKey);
    return { jobId: row.job_id, replay: true };
  }

  async get(tenant: string, id: string): Promise<JobRow | undefined> {
    const [rows] = await this.pool.execute<JobDbRow[]>("SELECT * FROM billing_jobs WHERE tenant = ? AND id = ?", [tenant, id]);
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /** For workers, which learn the id from the queue (the tenant comes with the row). */
  async byId(id: string): Promise<JobRow | undefined> {
    const [rows] = await this.pool.execute<JobDbRow[]>("SELECT * FROM billing_jobs WHERE id = ?", [id]);
    return rows[0] ? toJob(rows[0]) : undefined;
  }

  /**
   * RECEIVED → VALIDATING unless the tenant already runs `maxRunning` jobs. The count and the update share
   * a transaction whose locking read serialises concurrent starters of one tenant.
   */
  async start(id: string, tenant: string, maxRunning: number): Promise<"started" | "busy" | "not-received"> {
    return inTransaction(this.pool, async (c) => {
      const [running] = await c.execute<RowDataPacket[]>("SELECT id FROM billing_jobs WHERE tenant = ? AND state IN (?, ?) FOR UPDATE", [
        tenant,
        JobState.VALIDATING,
        JobState.PROCESSING,
      ]);
      const [self] = await c.execute<StateDbRow[]>("SELECT state FROM billing_jobs WHERE id = ? FOR UPDATE", [id]);
      if (self[0]?.state !== JobState.RECEIVED) return "not-received";
      if (running.length >= maxRunning) return "busy";
      const now = this.clock();
      await c.execute(
        "UPDATE billing_jobs SET state = ?, started_at = COALESCE(started_at, ?), round_started_at = ?, updated_at = ? WHERE id = ?",
        [JobState.VALIDATING, now, now, now, id],
      );
      return "started";
    });
  }

  async transition(id: string, from: readonly JobState[], to: JobState): Promise<boolean> {
    const [res] = await this.pool.execute<ResultSetHeader>(
      `UPDATE billing_jobs SET state = ?, updated_at = ? WHERE id = ? AND state IN (${placeholders(from.length)})`,
      [to, this.clock(), id, ...from],
    );
    return res.affectedRows === 1;
  }

  /** RetryFailedItems: a finished job (still in `from`) opens round `retryRounds + 1`, starting now. */
  async startRetryRound(id: string, from: JobState, retryRounds: number): Promise<boolean> {
    const now = this.clock();
    const [res] = await this.pool.execute<ResultSetHeader>(
      "UPDATE billing_jobs SET state = ?, updated_at = ?, retry_rounds = ?, round_started_at = ? WHERE id = ? AND state = ?",
      [JobState.PROCESSING, now, retryRounds + 1, now, id, from],
    );
    return res.affectedRows === 1;
  }

  /**
   * Moves a running job to its final state and, in the same transaction, runs `also` (the webhook
   * outbox insert): either both happen or neither, so a crash never loses or doubles the event. Only
   * while the job is still in `round`: a finalize that concluded an earlier round (a late duplicate
   * racing a RetryFailedItems) must not end the round that replaced it.
   */
  async finish(id: string, round: number, to: JobState, f: FinishColumns, also: (c: PoolConnection) => Promise<void>): Promise<boolean> {
    return inTransaction(this.pool, async (c) => {
      const sets = ["state = ?", "updated_at = ?", "finished_at = ?", "duracao_ms = ?", "processed_items = ?"];
      const args: (string | number | Date)[] = [to, this.clock(), f.finishedAt, f.duracaoMs, f.processedItems];
      if (f.manifest) sets.push("manifest = ?"), args.push(JSON.stringify(f.manifest));
      if (f.artifactsExpiresAt) sets.push("artifacts_expires_at = ?"), args.push(f.artifactsExpiresAt);
      if (f.detailsJson !== undefined) sets.push("details = ?"), args.push(f.detailsJson);
      if (f.totalItems !== undefined) sets.push("total_items = ?"), args.push(f.totalItems);
      const [res] = await c.execute<ResultSetHeader>(
        `UPDATE billing_jobs SET ${sets.join(", ")} WHERE id = ? AND retry_rounds = ? AND state IN (${placeholders(RUNNING_JOB_STATES.length)})`,
        [...args, id, round, ...RUNNING_JOB_STATES],
      );
      if (res.affectedRows !== 1) return false;
      await also(c);
      return true;
    });
  }

  /** Unfinished jobs by kind and state, across tenants (ix_billing_jobs_state_updated). */
  async openJobs(): Promise<OpenJobs[]> {
    const [rows] = await this.pool.query<OpenDbRow[]>(
      `SELECT kind, state, COUNT(*) AS n, MIN(COALESCE(round_started_at, created_at)) AS oldest
         FROM billing_jobs WHERE state IN (?, ?, ?) GROUP BY kind, state`,
      [JobState.RECEIVED, JobState.VALIDATING, JobState.PROCESSING],
    );
    return rows.map((r) => ({
      kind: r.kind,
      state: r.state,
      count: Number(r.n),
      oldestSince: r.oldest,
    }));
  }

  async list(
    tenant: string,
    opts: {
      kind?: JobKind;
      state?: JobState;
      before?: string;
      from?: Date;
      to?: Date;
      jobId?: string;
      idempotencyKey?: string;
      itemId?: string;
      limit: number;
    },
  ): Promise<JobRow[]> {
    const where = ["tenant = ?"];
    const args: (string | number | Date)[] = [tenant];
    if (opts.from) where.push("created_at >= ?"), args.push(opts.from);
    if (opts.to) where.push("created_at < ?"), args.push(opts.to);
    if (opts.kind) where.push("kind = ?"), args.push(opts.kind);
    if (opts.state) where.push("state = ?"), args.push(opts.state);
    if (opts.before) where.push("id < ?"), args.push(opts.before);
    if (opts.jobId) where.push("id = ?"), args.push(opts.jobId);
    if (opts.idempotencyKey) where.push("idempotency_key = ?"), args.push(opts.idempotencyKey);
    // Per job through ix_billing_boleto_items_id (job_id, item_id): no index on item_id alone is needed.
    if (opts.itemId)
      where.push("EXISTS (SELECT 1 FROM billing_boleto_items i WHERE i.job_id = billing_jobs.id AND i.item_id = ?)"),
        args.push(opts.itemId);
    const [rows] = await this.pool.query<JobDbRow[]>(`SELECT * FROM billing_jobs WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?`, [
      ...args,
      opts.limit,
    ]);
    return rows.map(toJob);
  }

  /** Jobs per (kind, state) of a tenant, through ix_billing_jobs_tenant_state / _created. */
  async countByState(tenant: string, opts: { from?: Date; to?: Date }): Promise<{ kind: JobKind; state: JobState; count: number }[]> {
    const where = ["tenant = ?"];
    const args: (string | Date)[] = [tenant];
    if (opts.from) where.push("created_at >= ?"), args.push(opts.from);
    if (opts.to) where.push("created_at < ?"), args.push(opts.to);
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT kind, state, COUNT(*) AS n FROM billing_jobs WHERE ${where.join(" AND ")} GROUP BY kind, state ORDER BY kind, state`,
      args,
    );
    return rows.map((r) => ({ kind: r["kind"] as JobKind, state: r["state"] as JobState, count: Number(r["n"]) }));
  }
}
