// danfse_exports: what a poll reads, written by the process running the export. Every transition is a
// conditional UPDATE from RUNNING, so an export marked INTERRUPTED by another replica is never brought
// back by a late write of its old process.
import { randomBytes } from "node:crypto";
import type { Pool, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { DanfseExportState } from "../../libs/gen/malha/danfse/v1/danfse_pb.js";

export interface ExportZip {
  artifactId: string;
  sizeBytes: number;
  sha256: string;
  expiresAt: Date;
}

export interface ExportRow {
  id: string;
  ibge: string;
  state: DanfseExportState;
  total: number;
  rendered: number;
  failed: number;
  error: string;
  createdAt: Date;
  finishedAt: Date | undefined;
  zip: ExportZip | undefined;
}

export const newExportId = () => `dx_${randomBytes(12).toString("hex")}`;

export class ExportRepo {
  constructor(
    private readonly pool: Pool,
    /** Who runs the exports this process creates (host and pid): logs and operators read it. */
    private readonly holder: string,
  ) {}

  async create(id: string, ibge: string, total: number): Promise<ExportRow> {
    const now = new Date();
    await this.pool.execute(
      "INSERT INTO danfse_exports (id, ibge, state, total, holder, created_at, heartbeat_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
      [id, ibge, DanfseExportState.RUNNING, total, this.holder, now, now],
    );
    return {
      id,
      ibge,
      state: DanfseExportState.RUNNING,
      total,
      rendered: 0,
      failed: 0,
      error: "",
      createdAt: now,
      finishedAt: undefined,
      zip: undefined,
    };
  }

  async get(id: string): Promise<ExportRow | undefined> {
    const [rows] = await this.pool.execute<RowDataPacket[]>("SELECT * FROM danfse_exports WHERE id = ?", [id]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  /** Progress and heartbeat; false when the export is no longer RUNNING (interrupted by a sweep). */
  async progress(id: string, rendered: number, failed: number): Promise<boolean> {
    const [r] = await this.pool.execute<ResultSetHeader>(
      "UPDATE danfse_exports SET rendered = ?, failed = ?, heartbeat_at = ? WHERE id = ? AND state = ?",
      [rendered, failed, new Date(), id, DanfseExportState.RUNNING],
    );
    return r.affectedRows === 1;
  }

  async complete(id: string, rendered: number, failed: number, zip: ExportZip): Promise<boolean> {
    const now = new Date();
    const [r] = await this.pool.execute<ResultSetHeader>(
      `UPDATE danfse_exports SET state = ?, rendered = ?, failed = ?, artifact_id = ?, zip_size_bytes = ?, zip_sha256 = ?,
         zip_expires_at = ?, heartbeat_at = ?, finished_at = ? WHERE id = ? AND state = ?`,
      [
        DanfseExportState.COMPLETED,
        rendered,
        failed,
        zip.artifactId,
        zip.sizeBytes,
        zip.sha256,
        zip.expiresAt,
        now,
        now,
        id,
        DanfseExportState.RUNNING,
      ],
    );
    return r.affectedRows === 1;
  }

  async fail(id: string, error: string): Promise<void> {
    const now = new Date();
    await this.pool.execute(
      "UPDATE danfse_exports SET state = ?, error = ?, heartbeat_at = ?, finished_at = ? WHERE id = ? AND state = ?",
      [DanfseExportState.FAILED, error.slice(0, 1000), now, now, id, DanfseExportState.RUNNING],
    );
  }

  /** RUNNING exports whose process stopped heartbeating become FAILED INTERRUPTED; returns how many. */
  async interruptStale(staleMs: number): Promise<number> {
    const now = new Date();
    const [r] = await this.pool.execute<ResultSetHeader>(
      "UPDATE danfse_exports SET state = ?, error = ?, finished_at = ? WHERE state = ? AND heartbeat_at < ?",
      [
        DanfseExportState.FAILED,
        "INTERRUPTED: the process running the export stopped before it finished; start the export again",
        now,
        DanfseExportState.RUNNING,
        new Date(now.getTime() - staleMs),
      ],
    );
    return r.affectedRows;
  }

  /** Exports finished longer ago than their zips live are of no use: the rows go too. */
  async purgeFinishedBefore(before: Date): Promise<number> {
    const [r] = await this.pool.execute<ResultSetHeader>("DELETE FROM danfse_exports WHERE finished_at < ? LIMIT 1000", [before]);
    return r.affectedRows;
  }
}

function toRow(r: RowDataPacket): ExportRow {
  return {
    id: r.id as string,
    ibge: r.ibge as string,
    state: Number(r.state) as DanfseExportState,
    total: Number(r.total),
    rendered: Number(r.rendered),
    failed: Number(r.failed),
    error: r.error as string,
    createdAt: r.created_at as Date,
    finishedAt: (r.finished_at as Date | null) ?? undefined,
    zip:
      r.artifact_id === null
        ? undefined
        : {
            artifactId: r.artifact_id as string,
            sizeBytes: Number(r.zip_size_bytes),
            sha256: r.zip_sha256 as string,
            expiresAt: r.zip_expires_at as Date,
          },
  };
}
