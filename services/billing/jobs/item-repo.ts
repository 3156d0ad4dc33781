// Boleto items and their attempts. A worker "claims" an item attempt in a transaction that also records
// which queue message holds it: a redelivery of that message resumes the attempt, a stale duplicate of
// it (another message for the same attempt while the holder is alive) is dropped, and a finished item is
// never processed again.
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { ItemState } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { inTransaction } from "../../../libs/db/tx.js";
import { ACTIVE_ITEM_STATES, FINAL_ITEM_STATES } from "./states.js";
import { storedErrorsOf, resultOf, type StoredError, type StoredResult } from "./stored.js";

export interface ItemRow {
  jobId: string;
  position: number;
  itemId: string;
  state: ItemState;
  inputJson: string;
  nossoNumero: string | null;
  subloteIndex: number | null;
  result: StoredResult | null;
  errors: StoredError[];
  attemptCount: number;
  createdAt: Date;
  updatedAt: Date;
}

export interface AttemptRow {
  number: number;
  state: ItemState;
  deliveries: number;
  renders: number;
  startedAt: Date | null;
  finishedAt: Date | null;
  errors: StoredError[];
  result: StoredResult | null;
}

interface ItemDbRow extends RowDataPacket {
  job_id: string;
  position: number;
  item_id: string;
  state: ItemState;
  /** Absent when the listing leaves the input out. */
  input?: string;
  nosso_numero: string | null;
  sublote_index: number | null;
  result: string | null;
  errors: string | null;
  attempt_count: number;
  created_at: Date;
  updated_at: Date;
}

interface AttemptDbRow extends RowDataPacket {
  number: number;
  state: ItemState;
  deliveries: number;
  renders: number;
  started_at: Date | null;
  finished_at: Date | null;
  errors: string | null;
  result: string | null;
}

interface HolderDbRow extends RowDataPacket {
  holder_seq: number | string | null;
  held_at: Date | null;
}

interface PositionDbRow extends RowDataPacket {
  position: number;
  attempt_count: number;
}

interface CountDbRow extends RowDataPacket {
  state: ItemState;
  n: number | string;
}

interface NossoNumeroDbRow extends RowDataPacket {
  nosso_numero: string | null;
}

const toItem = (r: ItemDbRow): ItemRow => ({
  jobId: r.job_id,
  position: r.position,
  itemId: r.item_id,
  state: r.state,
  inputJson: r.input ?? "",
  nossoNumero: r.nosso_numero,
  subloteIndex: r.sublote_index ?? null,
  result: resultOf(r.result, "billing_boleto_items.result"),
  errors: storedErrorsOf(r.errors, "billing_boleto_items.errors"),
  attemptCount: r.attempt_count,
  createdAt: r.created_at,
  updatedAt: r.updated_at,
});

export type Claim = { kind: "finished" } | { kind: "held-elsewhere" } | { kind: "claimed"; item: ItemRow; attempt: number };

const placeholders = (n: number) => Array.from({ length: n }, () => "?").join(", ");

export class ItemRepo {
  constructor(
    private readonly pool: Pool,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async counts(jobId: string): Promise<Map<ItemState, number>> {
    const [rows] = await this.pool.execute<CountDbRow[]>(
      "SELECT state, COUNT(*) AS n FROM billing_boleto_items WHERE job_id = ? GROUP BY state",
      [jobId],
    );
    return new Map(rows.map((r) => [r.state, Number(r.n)]));
  }

  async page(
    jobId: string,
    opts: { state?: ItemState; subloteIndex?: number; afterPosition: number; limit: number; withInput?: boolean },
  ): Promise<ItemRow[]> {
    const cols = opts.withInput
      ? "*"
      : "job_id, position, item_id, state, nosso_numero, sublote_index, result, errors, attempt_count, created_at, updated_at";
    const where = ["job_id = ?", "position > ?"];
    const args: (string | number)[] = [jobId, opts.afterPosition];
    if (opts.state) where.push("state = ?"), args.push(opts.state);
    if (opts.subloteIndex !== undefined) where.push("sublote_index = ?"), args.push(opts.subloteIndex);
    const [rows] = await this.pool.query<ItemDbRow[]>(
      `SELECT ${cols} FROM billing_boleto_items WHERE ${where.join(" AND ")} ORDER BY position LIMIT ?`,
      [...args, opts.limit],
    );
    return rows.map(toItem);
  }

  /** The first item with that id (a later repeat of the id is a SKIPPED duplicate). */
  async byItemId(jobId: string, itemId: string): Promise<ItemRow | undefined> {
    const [rows] = await this.pool.execute<ItemDbRow[]>(
      "SELECT * FROM billing_boleto_items WHERE job_id = ? AND item_id = ? ORDER BY position LIMIT 1",
      [jobId, itemId],
    );
    return rows[0] ? toItem(rows[0]) : undefined;
  }

  async attempts(jobId: string, position: number): Promise<AttemptRow[]> {
    const [rows] = await this.pool.execute<AttemptDbRow[]>(
      "SELECT * FROM billing_item_attempts WHERE job_id = ? AND position = ? ORDER BY number",
      [jobId, position],
    );
    return rows.map((r) => ({
      number: r.number,
      state: r.state,
      deliveries: r.deliveries,
      renders: r.renders,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      errors: storedErrorsOf(r.errors, "billing_item_attempts.errors"),
      result: resultOf(r.result, "billing_item_attempts.result"),
    }));
  }

  /** Positions still to process in the current round, for (re-)enqueuing. */
  async unfinished(jobId: string): Promise<{ position: number; attempt: number }[]> {
    const [rows] = await this.pool.execute<PositionDbRow[]>(
      `SELECT position, attempt_count FROM billing_boleto_items WHERE job_id = ? AND state NOT IN (${placeholders(FINAL_ITEM_STATES.length)}) ORDER BY position`,
      [jobId, ...FINAL_ITEM_STATES],
    );
    return rows.map((r) => ({ position: r.position, attempt: Math.max(1, r.attempt_count) }));
  }

  /**
   * Takes the item's current attempt for one queue message (`seq`, its stream sequence). A new item gets
   * attempt 1. An attempt already held by another live message (picked less than `staleMs` ago) is left
   * to it; the same message redelivered after a crash resumes it.
   */
  async claim(jobId: string, position: number, seq: number, staleMs: number): Promise<Claim> {
    return inTransaction(this.pool, async (c) => {
      const [rows] = await c.execute<ItemDbRow[]>("SELECT * FROM billing_boleto_items WHERE job_id = ? AND position = ? FOR UPDATE", [
        jobId,
        position,
      ]);
      const row = rows[0];
      if (!row) return { kind: "finished" };
      const item = toItem(row);
      if ((FINAL_ITEM_STATES as readonly ItemState[]).includes(item.state)) return { kind: "finished" };
      const now = this.clock();
      let attempt = item.attemptCount;
      if (attempt === 0) {
        attempt = 1;
        await c.execute(
          "INSERT INTO billing_item_attempts (job_id, position, number, state, deliveries, started_at, holder_seq, held_at) VALUES (?, ?, 1, ?, 1, ?, ?, ?)",
          [jobId, position, ItemState.VALIDATING, now, seq, now],
        );
      } else {
        const [att] = await c.execute<HolderDbRow[]>(
          "SELECT holder_seq, held_at FROM billing_item_attempts WHERE job_id = ? AND position = ? AND number = ?",
          [jobId, position, attempt],
        );
        const a = att[0];
        if (a && a.holder_seq !== null && Number(a.holder_seq) !== seq && (item.state as ItemState) !== ItemState.PENDING) {
          const heldAt = a.held_at;
          if (heldAt && now.getTime() - heldAt.getTime() < staleMs) return { kind: "held-elsewhere" };
        }
        await c.execute(
          `UPDATE billing_item_attempts SET deliveries = deliveries + 1, state = ?, started_at = COALESCE(started_at, ?), holder_seq = ?, held_at = ?
           WHERE job_id = ? AND position = ? AND number = ?`,
          [ItemState.VALIDATING, now, seq, now, jobId, position, attempt],
        );
      }
      await c.execute("UPDATE billing_boleto_items SET state = ?, attempt_count = ?, updated_at = ? WHERE job_id = ? AND position = ?", [
        ItemState.VALIDATING,
        attempt,
        now,
        jobId,
        position,
      ]);
      return { kind: "claimed", item: { ...item, state: ItemState.VALIDATING, attemptCount: attempt }, attempt };
    });
  }

  /** Heartbeat of a long task: keeps the claim fresh so duplicates leave it alone. */
  async touch(jobId: string, position: number, attempt: number): Promise<void> {
    await this.pool.execute("UPDATE billing_item_attempts SET held_at = ? WHERE job_id = ? AND position = ? AND number = ?", [
      this.clock(),
      jobId,
      position,
      attempt,
    ]);
  }

  /**
   * Allocates the next nosso número of (tenant, environment, banco, convênio) for an item without one,
   * once: the number is stored on the item in the same transaction and reused by every later attempt.
   */
  async allocateNossoNumero(
    jobId: string,
    position: number,
    seqKey: { tenant: string; environment: number; banco: string; convenio: string },
  ): Promise<string> {
    return inTransaction(this.pool, async (c) => {
      const [rows] = await c.execute<NossoNumeroDbRow[]>(
        "SELECT nosso_numero FROM billing_boleto_items WHERE job_id = ? AND position = ? FOR UPDATE",
        [jobId, position],
      );
      const existing = rows[0]?.nosso_numero;
      if (existing) return existing;
      const [res] = await c.execute<ResultSetHeader>(
        `INSERT INTO billing_nosso_numero_seq (tenant, environment, banco, convenio, last_value) VALUES (?, ?, ?, ?, LAST_INSERT_ID(1))
         ON DUPLICATE KEY UPDATE last_value = LAST_INSERT_ID(last_value + 1)`,
        [seqKey.tenant, seqKey.environment, seqKey.banco, seqKey.convenio],
      );
      const value = String(res.insertId);
      await c.execute("UPDATE billing_boleto_items SET nosso_numero = ? WHERE job_id = ? AND position = ?", [value, jobId, position]);
      return value;
    });
  }

  /**
   * Remessa títulos without a nosso número, inside the creating transaction: one block of consecutive
   * numbers per (tenant, environment, banco, convênio) from the same sequence boleto items use.
   */
  async allocateBlock(
    c: PoolConnection,
    jobId: string,
    seqKey: { tenant: string; environment: number; banco: string; convenio: string },
    positions: number[],
  ): Promise<void> {
    if (positions.length === 0) return;
    const n = positions.length;
    const [res] = await c.execute<ResultSetHeader>(
      `INSERT INTO billing_nosso_numero_seq (tenant, environment, banco, convenio, last_value) VALUES (?, ?, ?, ?, LAST_INSERT_ID(?))
       ON DUPLICATE KEY UPDATE last_value = LAST_INSERT_ID(last_value + ?)`,
      [seqKey.tenant, seqKey.environment, seqKey.banco, seqKey.convenio, n, n],
    );
    const first = Number(res.insertId) - n + 1;
    for (let i = 0; i < n; i++) {
      await c.execute("UPDATE billing_boleto_items SET nosso_numero = ? WHERE job_id = ? AND position = ?", [
        String(first + i),
        jobId,
        positions[i]!,
      ]);
    }
  }

  /**
   * Moves the attempt to `state` (counting a render when it is RENDERING) and the item with it while the
   * item is still active. One statement: the LEFT JOIN leaves an item that already ended untouched
   * while the attempt is still updated, so a render that goes ahead anyway is still counted.
   */
  async setState(jobId: string, position: number, attempt: number, state: ItemState): Promise<void> {
    await this.pool.execute(
      `UPDATE billing_item_attempts a
         LEFT JOIN billing_boleto_items i
           ON i.job_id = a.job_id AND i.position = a.position AND i.state IN (${placeholders(ACTIVE_ITEM_STATES.length)})
       SET a.state = ?, a.renders = a.renders + ?, i.state = ?, i.updated_at = ?
       WHERE a.job_id = ? AND a.position = ? AND a.number = ?`,
      [...ACTIVE_ITEM_STATES, state, state === ItemState.RENDERING ? 1 : 0, state, this.clock(), jobId, position, attempt],
    );
  }

  /**
   * Ends the attempt (and the item) in a final state; false when it had already ended. One statement, so
   * atomic without a transaction: the item row decides (still this attempt, not final yet) and the
   * attempt row, when present, follows it.
   */
  async finish(
    jobId: string,
    position: number,
    attempt: number,
    state: ItemState,
    out: { result?: StoredResult; errors?: StoredError[] },
  ): Promise<boolean> {
    const now = this.clock();
    const result = out.result ? JSON.stringify(out.result) : null;
    const errors = out.errors && out.errors.length > 0 ? JSON.stringify(out.errors) : null;
    const [res] = await this.pool.execute<ResultSetHeader>(
      `UPDATE billing_boleto_items i
         LEFT JOIN billing_item_attempts a ON a.job_id = i.job_id AND a.position = i.position AND a.number = i.attempt_count
       SET i.state = ?, i.result = COALESCE(?, i.result), i.errors = ?, i.updated_at = ?,
           a.state = ?, a.finished_at = ?, a.result = ?, a.errors = ?, a.holder_seq = NULL
       WHERE i.job_id = ? AND i.position = ? AND i.attempt_count = ? AND i.state NOT IN (${placeholders(FINAL_ITEM_STATES.length)})`,
      [state, result, errors, now, state, now, result, errors, jobId, position, attempt, ...FINAL_ITEM_STATES],
    );
    return res.affectedRows > 0;
  }

  /** Remessa títulos move with their sub-batch: set `state` on the named positions still in one of `from`. */
  async markMany(
    jobId: string,
    positions: number[],
    state: ItemState,
    errors: StoredError[] | null,
    from: readonly ItemState[],
  ): Promise<void> {
    if (positions.length === 0) return;
    const now = this.clock();
    for (let i = 0; i < positions.length; i += 500) {
      const chunk = positions.slice(i, i + 500);
      await this.pool.query(
        `UPDATE billing_boleto_items SET state = ?, errors = ?, attempt_count = GREATEST(attempt_count, 1), updated_at = ? WHERE job_id = ? AND position IN (?) AND state IN (?)`,
        [state, errors && errors.length > 0 ? JSON.stringify(errors) : null, now, jobId, chunk, from],
      );
    }
  }

  /** RetryFailedItems: a new PENDING attempt for each FAILED item named; earlier attempts stay as history. */
  async requeueFailed(jobId: string, positions: number[]): Promise<{ position: number; attempt: number }[]> {
    if (positions.length === 0) return [];
    return inTransaction(this.pool, async (c) => {
      const now = this.clock();
      const out: { position: number; attempt: number }[] = [];
      for (const position of positions) {
        const [res] = await c.execute<ResultSetHeader>(
          "UPDATE billing_boleto_items SET state = ?, attempt_count = attempt_count + 1, updated_at = ? WHERE job_id = ? AND position = ? AND state = ?",
          [ItemState.PENDING, now, jobId, position, ItemState.FAILED],
        );
        if (res.affectedRows !== 1) continue;
        const [rows] = await c.execute<PositionDbRow[]>(
          "SELECT position, attempt_count FROM billing_boleto_items WHERE job_id = ? AND position = ?",
          [jobId, position],
        );
        const attempt = rows[0]!.attempt_count;
        await c.execute("INSERT INTO billing_item_attempts (job_id, position, number, state) VALUES (?, ?, ?, ?)", [
          jobId,
          position,
          attempt,
          ItemState.PENDING,
        ]);
        out.push({ position, attempt });
      }
      return out;
    });
  }
}
