import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import type { Sealed } from "./crypto.js";

export type StoredStatus = "active" | "inactive" | "deactivated";

/** Certificate metadata as stored; no secret. */
export interface CertificateRow {
  id: string;
  ibge: string;
  fingerprint: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  cnpj: string;
  notBefore: Date;
  notAfter: Date;
  status: StoredStatus;
  keyId: string;
  algorithm: string;
  chainLength: number;
  createdAt: Date;
  updatedAt: Date;
  activatedAt: Date | null;
  deactivatedAt: Date | null;
  deactivationReason: string | null;
}

/** The four encrypted values of a row. `chain` is null only for rows written before the vault stored it. */
export interface SealedSecrets {
  pfx: Sealed;
  password: Sealed;
  privateKey: Sealed;
  chain: Sealed | null;
}

export interface NewCertificate {
  ibge: string;
  fingerprint: string;
  subject: string;
  issuer: string;
  serialNumber: string;
  cnpj: string;
  notBefore: Date;
  notAfter: Date;
  chainLength: number;
  keyId: string;
  algorithm: string;
  secrets: SealedSecrets;
  requestedBy: string;
}

export interface ImportOutcome {
  row: CertificateRow;
  created: boolean;
  activated: boolean;
  replacedId?: string;
}

const METADATA_COLUMNS = `id, ibge, fingerprint_sha256, subject, issuer, serial_number, cnpj, not_before, not_after,
  status, key_id, algorithm, chain_length, created_at, updated_at, activated_at, deactivated_at, deactivation_reason`;
const SECRET_COLUMNS = `pfx_ciphertext, pfx_nonce, pfx_auth_tag, password_ciphertext, password_nonce, password_auth_tag,
  private_key_ciphertext, private_key_nonce, private_key_auth_tag, chain_ciphertext, chain_nonce, chain_auth_tag`;

const ER_DUP_ENTRY = "ER_DUP_ENTRY";
const ER_LOCK_DEADLOCK = "ER_LOCK_DEADLOCK";
const MAX_ATTEMPTS = 5;

/** SQL for the certificates table and the master-key check values. Ids are BIGINT UNSIGNED, as strings. */
export class CertificateRepository {
  constructor(private readonly pool: Pool) {}

  async findById(id: string): Promise<CertificateRow | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(`SELECT ${METADATA_COLUMNS} FROM certificates WHERE id = ?`, [id]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  /** The municipality's ACTIVE row with its secrets (even when expired: the caller decides). */
  async findActiveWithSecrets(ibge: string): Promise<{ row: CertificateRow; secrets: SealedSecrets } | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${METADATA_COLUMNS}, ${SECRET_COLUMNS} FROM certificates WHERE active_ibge = ?`,
      [ibge],
    );
    return rows[0] ? { row: toRow(rows[0]), secrets: toSecrets(rows[0]) } : undefined;
  }

  /**
   * Stores a new certificate, or returns the stored one with the same fingerprint untouched. The new one
   * becomes ACTIVE when it expires later than the current ACTIVE one (or there is none), which turns
   * INACTIVE. The unique key on active_ibge keeps a racing import from making a second ACTIVE row; the
   * loser retries and then sees the winner.
   */
  async importCertificate(cert: NewCertificate): Promise<ImportOutcome> {
    return this.transaction(async (conn) => {
      const [same] = await conn.query<RowDataPacket[]>(
        `SELECT ${METADATA_COLUMNS} FROM certificates WHERE fingerprint_sha256 = ? FOR UPDATE`,
        [cert.fingerprint],
      );
      if (same[0]) return { row: toRow(same[0]), created: false, activated: false };
      const [active] = await conn.query<RowDataPacket[]>("SELECT id, not_after FROM certificates WHERE active_ibge = ? FOR UPDATE", [
        cert.ibge,
      ]);
      const current = active[0];
      const activate = !current || cert.notAfter.getTime() > (current["not_after"] as Date).getTime();
      if (activate && current) {
        await conn.query("UPDATE certificates SET status = 'inactive', active_ibge = NULL WHERE id = ?", [current["id"]]);
      }
      const s = cert.secrets;
      const [result] = await conn.query<ResultSetHeader>(
        `INSERT INTO certificates (ibge, fingerprint_sha256, subject, issuer, serial_number, cnpj, chain_length,
           not_before, not_after, status, active_ibge, key_id, algorithm, ${SECRET_COLUMNS},
           imported_by, activated_at, activated_by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        [
          cert.ibge,
          cert.fingerprint,
          cert.subject,
          cert.issuer,
          cert.serialNumber,
          cert.cnpj,
          cert.chainLength,
          cert.notBefore,
          cert.notAfter,
          activate ? "active" : "inactive",
          activate ? cert.ibge : null,
          cert.keyId,
          cert.algorithm,
          ...sealedParams(s),
          cert.requestedBy || null,
          activate ? new Date() : null,
          activate ? cert.requestedBy || null : null,
        ],
      );
      const row = await this.findIn(conn, String(result.insertId));
      return {
        row,
        created: true,
        activated: activate,
        ...(activate && current ? { replacedId: String(current["id"]) } : {}),
      };
    });
  }

  /** DEACTIVATED with its reason; a second call changes nothing. Undefined for an unknown id. */
  async deactivate(id: string, reason: string, requestedBy: string): Promise<CertificateRow | undefined> {
    return this.transaction(async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>("SELECT status FROM certificates WHERE id = ? FOR UPDATE", [id]);
      if (!rows[0]) return undefined;
      if (rows[0]["status"] !== "deactivated") {
        await conn.query(
          `UPDATE certificates SET status = 'deactivated', active_ibge = NULL, deactivated_at = UTC_TIMESTAMP(),
             deactivated_by = ?, deactivation_reason = ? WHERE id = ?`,
          [requestedBy || null, reason, id],
        );
      }
      return this.findIn(conn, id);
    });
  }

  /**
   * Makes `id` ACTIVE for its municipality and the current ACTIVE one INACTIVE. `check` runs on the
   * locked row first and may throw (expired, not yet valid).
   */
  async activate(
    id: string,
    requestedBy: string,
    check: (row: CertificateRow) => void,
  ): Promise<{ row: CertificateRow; replacedId?: string } | undefined> {
    return this.transaction(async (conn) => {
      const [rows] = await conn.query<RowDataPacket[]>(`SELECT ${METADATA_COLUMNS} FROM certificates WHERE id = ? FOR UPDATE`, [id]);
      if (!rows[0]) return undefined;
      const row = toRow(rows[0]);
      check(row);
      if (row.status === "active") return { row };
      const [active] = await conn.query<RowDataPacket[]>("SELECT id FROM certificates WHERE active_ibge = ? FOR UPDATE", [row.ibge]);
      const replacedId = active[0] ? String(active[0]["id"]) : undefined;
      if (replacedId) {
        await conn.query("UPDATE certificates SET status = 'inactive', active_ibge = NULL WHERE id = ?", [replacedId]);
      }
      await conn.query(
        `UPDATE certificates SET status = 'active', active_ibge = ibge, activated_at = ?, activated_by = ?,
           deactivated_at = NULL, deactivated_by = NULL, deactivation_reason = NULL WHERE id = ?`,
        [new Date(), requestedBy || null, id],
      );
      return { row: await this.findIn(conn, id), ...(replacedId ? { replacedId } : {}) };
    });
  }

  async list(where: string, params: unknown[], orderBy: string, limit: number): Promise<CertificateRow[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${METADATA_COLUMNS} FROM certificates ${where ? `WHERE ${where}` : ""} ORDER BY ${orderBy} LIMIT ?`,
      [...params, limit],
    );
    return rows.map(toRow);
  }

  /** Rows with their secrets in id order after `afterId`; `notUnderKey` limits them to rows needing rotation. */
  async pageWithSecrets(afterId: string, limit: number, notUnderKey?: string): Promise<{ row: CertificateRow; secrets: SealedSecrets }[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>(
      `SELECT ${METADATA_COLUMNS}, ${SECRET_COLUMNS} FROM certificates
       WHERE id > CAST(? AS UNSIGNED) ${notUnderKey === undefined ? "" : "AND key_id <> ?"} ORDER BY id LIMIT ?`,
      notUnderKey === undefined ? [afterId, limit] : [afterId, notUnderKey, limit],
    );
    return rows.map((r) => ({ row: toRow(r), secrets: toSecrets(r) }));
  }

  /**
   * Replaces a row's secrets and key id in one statement, only if the row is still under `fromKeyId`
   * (a concurrent rotation may have moved it): false when it was not.
   */
  async reencrypt(id: string, fromKeyId: string, toKeyId: string, algorithm: string, secrets: SealedSecrets): Promise<boolean> {
    const [result] = await this.pool.query<ResultSetHeader>(
      `UPDATE certificates SET key_id = ?, algorithm = ?,
         pfx_ciphertext = ?, pfx_nonce = ?, pfx_auth_tag = ?, password_ciphertext = ?, password_nonce = ?,
         password_auth_tag = ?, private_key_ciphertext = ?, private_key_nonce = ?, private_key_auth_tag = ?,
         chain_ciphertext = ?, chain_nonce = ?, chain_auth_tag = ?
       WHERE id = ? AND key_id = ?`,
      [toKeyId, algorithm, ...sealedParams(secrets), id, fromKeyId],
    );
    return result.affectedRows === 1;
  }

  async countNotUnderKey(keyId: string): Promise<number> {
    const [rows] = await this.pool.query<RowDataPacket[]>("SELECT COUNT(*) AS n FROM certificates WHERE key_id <> ?", [keyId]);
    return Number(rows[0]?.["n"] ?? 0);
  }

  /** Per stored status, not_after of every row; small enough to aggregate in the process. */
  async expirySummary(): Promise<{ id: string; ibge: string; status: StoredStatus; notAfter: Date }[]> {
    const [rows] = await this.pool.query<RowDataPacket[]>("SELECT id, ibge, status, not_after FROM certificates");
    return rows.map((r) => ({
      id: String(r["id"]),
      ibge: r["ibge"] as string,
      status: r["status"] as StoredStatus,
      notAfter: r["not_after"] as Date,
    }));
  }

  async keyCheckValue(keyId: string): Promise<string | undefined> {
    const [rows] = await this.pool.query<RowDataPacket[]>("SELECT check_value FROM vault_master_keys WHERE key_id = ?", [keyId]);
    return rows[0]?.["check_value"] as string | undefined;
  }

  /** Records a key id's check value unless one is recorded already (first writer wins). */
  async recordKeyCheckValue(keyId: string, checkValue: string): Promise<void> {
    await this.pool.query("INSERT IGNORE INTO vault_master_keys (key_id, check_value) VALUES (?, ?)", [keyId, checkValue]);
  }

  private async findIn(conn: PoolConnection, id: string): Promise<CertificateRow> {
    const [rows] = await conn.query<RowDataPacket[]>(`SELECT ${METADATA_COLUMNS} FROM certificates WHERE id = ?`, [id]);
    if (!rows[0]) throw new Error(`certificate ${id} vanished inside its own transaction`);
    return toRow(rows[0]);
  }

  /** Runs `fn` in a transaction, retried a few times on deadlocks and on a lost race for active_ibge. */
  private async transaction<T>(fn: (conn: PoolConnection) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      const conn = await this.pool.getConnection();
      try {
        await conn.beginTransaction();
        const result = await fn(conn);
        await conn.commit();
        return result;
      } catch (err) {
        await conn.rollback().catch(() => undefined);
        const code = (err as { code?: string }).code;
        const retryable =
          code === ER_LOCK_DEADLOCK || (code === ER_DUP_ENTRY && /active_ibge|fingerprint/.test(String((err as Error).message)));
        if (!retryable || attempt >= MAX_ATTEMPTS) throw err;
      } finally {
        conn.release();
      }
      // Racing imports of one municipality collide on the same gap lock; a jittered pause lets one win.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * attempt));
    }
  }
}

function sealedParams(s: SealedSecrets): unknown[] {
  return [
    s.pfx.ciphertext,
    s.pfx.nonce,
    s.pfx.tag,
    s.password.ciphertext,
    s.password.nonce,
    s.password.tag,
    s.privateKey.ciphertext,
    s.privateKey.nonce,
    s.privateKey.tag,
    s.chain?.ciphertext ?? null,
    s.chain?.nonce ?? null,
    s.chain?.tag ?? null,
  ];
}

function toRow(r: RowDataPacket): CertificateRow {
  return {
    id: String(r["id"]),
    ibge: r["ibge"] as string,
    fingerprint: r["fingerprint_sha256"] as string,
    subject: r["subject"] as string,
    issuer: r["issuer"] as string,
    serialNumber: r["serial_number"] as string,
    cnpj: r["cnpj"] as string,
    notBefore: r["not_before"] as Date,
    notAfter: r["not_after"] as Date,
    status: r["status"] as StoredStatus,
    keyId: r["key_id"] as string,
    algorithm: r["algorithm"] as string,
    chainLength: Number(r["chain_length"]),
    createdAt: r["created_at"] as Date,
    updatedAt: r["updated_at"] as Date,
    activatedAt: (r["activated_at"] as Date | null) ?? null,
    deactivatedAt: (r["deactivated_at"] as Date | null) ?? null,
    deactivationReason: (r["deactivation_reason"] as string | null) ?? null,
  };
}

function toSecrets(r: RowDataPacket): SealedSecrets {
  const sealed = (prefix: string): Sealed => ({
    ciphertext: r[`${prefix}_ciphertext`] as Buffer,
    nonce: r[`${prefix}_nonce`] as Buffer,
    tag: r[`${prefix}_auth_tag`] as Buffer,
  });
  return {
    pfx: sealed("pfx"),
    password: sealed("password"),
    privateKey: sealed("private_key"),
    chain: r["chain_ciphertext"] ? sealed("chain") : null,
  };
}
