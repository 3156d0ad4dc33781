// Artifact metadata in MySQL (table artifact_metadata, migration 004). MySQL rather than sidecar JSON
// files: several replicas share one volume, and the unique key (tenant, job_id, name) settles concurrent
// uploads of one name without file locks; listing by tenant/job and the expiry sweep are index range scans
// instead of directory walks.
import type { Pool, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { isDuplicateKey } from "../../libs/db/tx.js";

export interface ArtifactRecord {
  id: string;
  tenant: string;
  jobId: string;
  name: string;
  contentType: string;
  sizeBytes: bigint;
  sha256: string;
  storageKey: string;
  createdAt: Date;
  expiresAt: Date;
  /** When the retention sweep deleted the content; null while it may still be on storage. */
  sweptAt: Date | null;
}

/** Position after the last row of a page (newest first). */
export interface ListCursor {
  createdAt: Date;
  id: string;
}

export interface ListQuery {
  tenant: string;
  /** Empty = every job. */
  jobId: string;
  includeExpired: boolean;
  now: Date;
  after?: ListCursor;
  limit: number;
}

interface Row extends RowDataPacket {
  id: string;
  tenant: string;
  job_id: string;
  name: string;
  content_type: string;
  size_bytes: string;
  sha256: string;
  storage_key: string;
  created_at: Date;
  expires_at: Date;
  swept_at: Date | null;
}

const COLUMNS = "id, tenant, job_id, name, content_type, size_bytes, sha256, storage_key, created_at, expires_at, swept_at";

function fromRow(r: Row): ArtifactRecord {
  return {
    id: r.id,
    tenant: r.tenant,
    jobId: r.job_id,
    name: r.name,
    contentType: r.content_type,
    sizeBytes: BigInt(r.size_bytes),
    sha256: r.sha256,
    storageKey: r.storage_key,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
    sweptAt: r.swept_at,
  };
}

/** Readable until expiry; a swept row is expired whatever its clock says. */
export function isExpired(record: ArtifactRecord, now: Date): boolean {
  return record.sweptAt !== null || record.expiresAt.getTime() <= now.getTime();
}

export class ArtifactMetadataStore {
  constructor(private readonly pool: Pool) {}

  /** Inserts a new artifact; "duplicate" when (tenant, job_id, name) is already taken. */
  async insert(record: ArtifactRecord): Promise<"inserted" | "duplicate"> {
    try {
      await this.pool.execute(`INSERT INTO artifact_metadata (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, [
        record.id,
        record.tenant,
        record.jobId,
        record.name,
        record.contentType,
        record.sizeBytes.toString(),
        record.sha256,
        record.storageKey,
        record.createdAt,
        record.expiresAt,
        record.sweptAt,
      ]);
      return "inserted";
    } catch (err) {
      if (isDuplicateKey(err)) return "duplicate";
      throw err;
    }
  }

  async findByName(tenant: string, jobId: string, name: string): Promise<ArtifactRecord | undefined> {
    const [rows] = await this.pool.execute<Row[]>(`SELECT ${COLUMNS} FROM artifact_metadata WHERE tenant = ? AND job_id = ? AND name = ?`, [
      tenant,
      jobId,
      name,
    ]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Scoped by tenant in SQL: another tenant's id reads exactly like a missing one. */
  async get(tenant: string, id: string): Promise<ArtifactRecord | undefined> {
    const [rows] = await this.pool.execute<Row[]>(`SELECT ${COLUMNS} FROM artifact_metadata WHERE tenant = ? AND id = ?`, [tenant, id]);
    return rows[0] ? fromRow(rows[0]) : undefined;
  }

  /** Several of a tenant's artifacts by id (those it has; order not kept). */
  async getMany(tenant: string, ids: readonly string[]): Promise<ArtifactRecord[]> {
    if (ids.length === 0) return [];
    const [rows] = await this.pool.query<Row[]>(`SELECT ${COLUMNS} FROM artifact_metadata WHERE tenant = ? AND id IN (?)`, [tenant, ids]);
    return rows.map(fromRow);
  }

  /** Newest first, keyset-paginated on (created_at, id). */
  async list(q: ListQuery): Promise<ArtifactRecord[]> {
    const where = ["tenant = ?"];
    const params: (string | Date | number)[] = [q.tenant];
    if (q.jobId !== "") {
      where.push("job_id = ?");
      params.push(q.jobId);
    }
    if (!q.includeExpired) {
      where.push("expires_at > ? AND swept_at IS NULL");
      params.push(q.now);
    }
    if (q.after) {
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      params.push(q.after.createdAt, q.after.createdAt, q.after.id);
    }
    // LIMIT as a literal: mysql2's prepared statements send numbers as DOUBLE, which MySQL refuses there.
    const limit = Math.max(1, Math.min(1000, Math.trunc(q.limit)));
    const [rows] = await this.pool.execute<Row[]>(
      `SELECT ${COLUMNS} FROM artifact_metadata WHERE ${where.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
      params,
    );
    return rows.map(fromRow);
  }

  /** Expired artifacts whose content has not been deleted yet, oldest expiry first. */
  async dueForSweep(now: Date, limit: number): Promise<ArtifactRecord[]> {
    const n = Math.max(1, Math.min(10_000, Math.trunc(limit)));
    const [rows] = await this.pool.execute<Row[]>(
      `SELECT ${COLUMNS} FROM artifact_metadata WHERE swept_at IS NULL AND expires_at <= ? ORDER BY expires_at LIMIT ${n}`,
      [now],
    );
    return rows.map(fromRow);
  }

  /** Which of these ids have a row (any state). */
  async existingIds(ids: string[]): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const [rows] = await this.pool.query<Row[]>(`SELECT id FROM artifact_metadata WHERE id IN (?)`, [ids]);
    return new Set(rows.map((r) => r.id));
  }

  /** Records that the content is gone; false when another replica recorded it first. */
  async markSwept(id: string, now: Date): Promise<boolean> {
    const [result] = await this.pool.execute<ResultSetHeader>(
      "UPDATE artifact_metadata SET swept_at = ? WHERE id = ? AND swept_at IS NULL",
      [now, id],
    );
    return result.affectedRows === 1;
  }
}
