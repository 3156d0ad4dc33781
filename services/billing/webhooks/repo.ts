// Webhook endpoints and the delivery log (which is also the outbox the senders drain).
import { createHash } from "node:crypto";
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { DeliveryState } from "../../../libs/gen/malha/billing/v1/webhook_pb.js";

export interface EndpointRow {
  tenant: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  secret: string;
  /** A rotated-out secret that still signs until `previousSecretUntil`. */
  previousSecret?: string;
  previousSecretUntil?: Date;
  createdAt: Date;
  updatedAt: Date;
}

export interface DeliveryRow {
  id: string;
  tenant: string;
  jobId: string;
  round: number;
  eventType: string;
  state: DeliveryState;
  attempts: number;
  attemptLimit: number;
  lastHttpStatus: number;
  lastError: string;
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
  body: string;
}

const toEndpoint = (r: RowDataPacket): EndpointRow => ({
  tenant: r["tenant"],
  url: r["url"],
  eventTypes: JSON.parse(r["event_types"]) as string[],
  enabled: r["enabled"] === 1,
  secret: r["secret"],
  ...(r["previous_secret"] && r["previous_secret_until"]
    ? { previousSecret: r["previous_secret"], previousSecretUntil: r["previous_secret_until"] }
    : {}),
  createdAt: r["created_at"],
  updatedAt: r["updated_at"],
});

const toDelivery = (r: RowDataPacket): DeliveryRow => ({
  id: r["id"],
  tenant: r["tenant"],
  jobId: r["job_id"],
  round: r["job_round"],
  eventType: r["event_type"],
  state: r["state"],
  attempts: r["attempts"],
  attemptLimit: r["attempt_limit"],
  lastHttpStatus: r["last_http_status"],
  lastError: r["last_error"],
  nextAttemptAt: r["next_attempt_at"],
  createdAt: r["created_at"],
  deliveredAt: r["delivered_at"],
  body: r["body"],
});

/** Deterministic per (job, round): the same completion always carries the same webhook-id. */
export const deliveryId = (jobId: string, round: number) =>
  `msg_${createHash("sha256").update(`${jobId}:${round}`).digest("hex").slice(0, 32)}`;

export class WebhookRepo {
  constructor(
    private readonly pool: Pool,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async endpoint(tenant: string): Promise<EndpointRow | undefined> {
    const [rows] = await this.pool.execute<RowDataPacket[]>("SELECT * FROM billing_webhook_endpoints WHERE tenant = ?", [tenant]);
    return rows[0] ? toEndpoint(rows[0]) : undefined;
  }

  /**
   * Creates or replaces; `secret` undefined keeps the current one. A new secret for an existing endpoint
   * moves the current one to previous_secret for `previousGraceMs` (0 = dropped at once).
   */
  async upsertEndpoint(e: {
    tenant: string;
    url: string;
    eventTypes: string[];
    enabled: boolean;
    secret?: string;
    previousGraceMs?: number;
  }): Promise<void> {
    const now = this.clock();
    const rotating = e.secret ?? "";
    const graceMs = e.previousGraceMs ?? 0;
    // previous_* are assigned before secret: MySQL evaluates the assignments left to right, so they read
    // the secret being replaced.
    await this.pool.execute(
      `INSERT INTO billing_webhook_endpoints (tenant, url, event_types, enabled, secret, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON DUPLICATE KEY UPDATE url = VALUES(url), event_types = VALUES(event_types), enabled = VALUES(enabled),
         previous_secret = IF(? = '', previous_secret, IF(? > 0, secret, NULL)),
         previous_secret_until = IF(? = '', previous_secret_until, IF(? > 0, ?, NULL)),
         secret = IF(? = '', secret, VALUES(secret)), updated_at = VALUES(updated_at)`,
      [
        e.tenant,
        e.url,
        JSON.stringify(e.eventTypes),
        e.enabled ? 1 : 0,
        rotating,
        now,
        now,
        rotating,
        graceMs,
        rotating,
        graceMs,
        new Date(now.getTime() + graceMs),
        rotating,
      ],
    );
  }

  /** Deletes the endpoint and abandons pending retries (they become SKIPPED). */
  async deleteEndpoint(tenant: string): Promise<boolean> {
    const [res] = await this.pool.execute<ResultSetHeader>("DELETE FROM billing_webhook_endpoints WHERE tenant = ?", [tenant]);
    if (res.affectedRows === 0) return false;
    await this.pool.execute(
      "UPDATE billing_webhook_deliveries SET state = ?, last_error = 'endpoint deleted', next_attempt_at = NULL WHERE tenant = ? AND state IN (?, ?)",
      [DeliveryState.SKIPPED, tenant, DeliveryState.PENDING, DeliveryState.RETRYING],
    );
    return true;
  }

  /** The outbox insert, inside the transaction that finishes the job. */
  async enqueue(
    c: PoolConnection,
    d: { id: string; tenant: string; jobId: string; round: number; eventType: string; body: string; attemptLimit: number; now: Date },
  ): Promise<void> {
    await c.execute(
      `INSERT IGNORE INTO billing_webhook_deliveries (id, tenant, job_id, job_round, event_type, state, attempt_limit, next_attempt_at, created_at, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [d.id, d.tenant, d.jobId, d.round, d.eventType, DeliveryState.PENDING, d.attemptLimit, d.now, d.now, d.body],
    );
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`: moving next_attempt_at forward with a conditional
   * update means one sender per delivery, and a sender that dies leaves it due again when the lease ends.
   */
  async claimDue(limit: number, leaseMs: number): Promise<DeliveryRow[]> {
    const now = this.clock();
    const [rows] = await this.pool.query<RowDataPacket[]>(
      "SELECT * FROM billing_webhook_deliveries WHERE state IN (?, ?) AND next_attempt_at <= ? ORDER BY next_attempt_at LIMIT ?",
      [DeliveryState.PENDING, DeliveryState.RETRYING, now, limit],
    );
    const claimed: DeliveryRow[] = [];
    for (const r of rows) {
      const d = toDelivery(r);
      const [res] = await this.pool.execute<ResultSetHeader>(
        "UPDATE billing_webhook_deliveries SET next_attempt_at = ? WHERE id = ? AND state = ? AND next_attempt_at = ?",
        [new Date(now.getTime() + leaseMs), d.id, d.state, d.nextAttemptAt],
      );
      if (res.affectedRows === 1) claimed.push(d);
    }
    return claimed;
  }

  async record(
    id: string,
    outcome: { state: DeliveryState; httpStatus: number; error: string; nextAttemptAt: Date | null; countsAsAttempt: boolean },
  ): Promise<void> {
    const now = this.clock();
    await this.pool.execute(
      `UPDATE billing_webhook_deliveries SET state = ?, attempts = attempts + ?, last_http_status = ?, last_error = ?, next_attempt_at = ?,
         delivered_at = IF(? = ?, ?, delivered_at) WHERE id = ? AND state IN (?, ?)`,
      [
        outcome.state,
        outcome.countsAsAttempt ? 1 : 0,
        outcome.httpStatus,
        outcome.error.slice(0, 500),
        outcome.nextAttemptAt,
        outcome.state,
        DeliveryState.SUCCEEDED,
        now,
        id,
        DeliveryState.PENDING,
        DeliveryState.RETRYING,
      ],
    );
  }

  async get(tenant: string, id: string): Promise<DeliveryRow | undefined> {
    const [rows] = await this.pool.execute<RowDataPacket[]>("SELECT * FROM billing_webhook_deliveries WHERE tenant = ? AND id = ?", [
      tenant,
      id,
    ]);
    return rows[0] ? toDelivery(rows[0]) : undefined;
  }

  async list(
    tenant: string,
    opts: { jobId?: string; state?: DeliveryState; before?: [number, string]; limit: number },
  ): Promise<DeliveryRow[]> {
    const where = ["tenant = ?"];
    const args: (string | number | Date)[] = [tenant];
    if (opts.jobId) where.push("job_id = ?"), args.push(opts.jobId);
    if (opts.state) where.push("state = ?"), args.push(opts.state);
    if (opts.before) {
      const at = new Date(opts.before[0]);
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      args.push(at, at, opts.before[1]);
    }
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT * FROM billing_webhook_deliveries WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ?`,
      [...args, opts.limit],
    );
    return rows.map(toDelivery);
  }

  /** Back to PENDING with a fresh budget of attempts; same id and body. */
  async redeliver(tenant: string, id: string, maxAttempts: number): Promise<boolean> {
    const [res] = await this.pool.execute<ResultSetHeader>(
      "UPDATE billing_webhook_deliveries SET state = ?, attempt_limit = attempts + ?, next_attempt_at = ?, last_error = '' WHERE tenant = ? AND id = ?",
      [DeliveryState.PENDING, maxAttempts, this.clock(), tenant, id],
    );
    return res.affectedRows === 1;
  }
}
