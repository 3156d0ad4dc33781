// Retorno occurrences and the tenant-wide fingerprint index that flags events already ingested from an
// earlier file. Inserts are idempotent (a re-run after a crash rewrites nothing).
import type { JsonObject } from "@bufbuild/protobuf";
import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { inTransaction, isDuplicateKey } from "../../../libs/db/tx.js";

/**
 * The value of an indexed look-up column (ASCII, bounded), or '' when the bank wrote something that column
 * cannot hold: a retorno may carry Latin-1 (decision 0025), and such a value cannot be one we issued, so no
 * look-up by it could match one of our boletos. The occurrence's body keeps the value as the bank wrote it,
 * and nothing is cut: a cut value would look like a real key.
 */
export function lookupKey(value: string, maxChars: number): string {
  return value.length <= maxChars && /^[\x20-\x7e]*$/.test(value) ? value : "";
}

export class AlreadyParsed extends Error {
  override name = "AlreadyParsed";
  constructor(readonly jobId: string) {
    super(`file already parsed by job ${jobId}`);
  }
}

export interface OccurrenceInsert {
  line: number;
  state: number;
  nossoNumero: string;
  boletoId: string;
  fingerprintSha256: string;
  /** The RetornoOccurrence in its JSON form, without `duplicate` (decided here). */
  body: JsonObject;
}

interface FileDbRow extends RowDataPacket {
  job_id: string;
}

interface OwnerDbRow extends RowDataPacket {
  fingerprint_sha256: string;
  job_id: string;
}

interface BodyDbRow extends RowDataPacket {
  body: string;
}

export class RetornoRepo {
  constructor(private readonly pool: Pool) {}

  async jobForFile(tenant: string, sha256: string): Promise<string | undefined> {
    const [rows] = await this.pool.execute<FileDbRow[]>("SELECT job_id FROM billing_retorno_files WHERE tenant = ? AND file_sha256 = ?", [
      tenant,
      sha256,
    ]);
    return rows[0]?.job_id;
  }

  /** Inside the creating transaction: the file's sha256 belongs to one job per tenant. */
  async claimFile(c: PoolConnection, tenant: string, sha256: string, jobId: string): Promise<void> {
    try {
      await c.execute("INSERT INTO billing_retorno_files (tenant, file_sha256, job_id) VALUES (?, ?, ?)", [tenant, sha256, jobId]);
    } catch (err) {
      if (!isDuplicateKey(err)) throw err;
      const [rows] = await c.execute<FileDbRow[]>("SELECT job_id FROM billing_retorno_files WHERE tenant = ? AND file_sha256 = ?", [
        tenant,
        sha256,
      ]);
      const owner = rows[0];
      if (!owner) throw err;
      throw new AlreadyParsed(owner.job_id);
    }
  }

  /** Stores the occurrences; returns how many were already known to the tenant from other jobs. */
  async store(tenant: string, jobId: string, occ: OccurrenceInsert[]): Promise<number> {
    let duplicates = 0;
    for (let i = 0; i < occ.length; i += 500) {
      const chunk = occ.slice(i, i + 500);
      duplicates += await inTransaction(this.pool, async (c) => {
        await c.query("INSERT IGNORE INTO billing_retorno_fingerprints (tenant, fingerprint_sha256, job_id) VALUES ?", [
          chunk.map((o) => [tenant, o.fingerprintSha256, jobId]),
        ]);
        const [owners] = await c.query<OwnerDbRow[]>(
          "SELECT fingerprint_sha256, job_id FROM billing_retorno_fingerprints WHERE tenant = ? AND fingerprint_sha256 IN (?)",
          [tenant, chunk.map((o) => o.fingerprintSha256)],
        );
        const owner = new Map(owners.map((r) => [r.fingerprint_sha256, r.job_id]));
        // The same event twice in one file: the first line owns it.
        const seen = new Set<string>();
        const rows = chunk.map((o) => {
          const dup = owner.get(o.fingerprintSha256) !== jobId || seen.has(o.fingerprintSha256);
          seen.add(o.fingerprintSha256);
          return [
            jobId,
            o.line,
            o.state,
            lookupKey(o.nossoNumero, 32),
            lookupKey(o.boletoId, 64),
            o.fingerprintSha256,
            dup ? 1 : 0,
            JSON.stringify({ ...o.body, duplicate: dup }),
          ];
        });
        await c.query(
          "INSERT IGNORE INTO billing_retorno_occurrences (job_id, line_number, state, nosso_numero, boleto_id, fingerprint_sha256, duplicate, body) VALUES ?",
          [rows],
        );
        return rows.filter((r) => r[6] === 1).length;
      });
    }
    return duplicates;
  }

  async page(
    jobId: string,
    f: { state?: number; nossoNumero?: string; boletoId?: string; excludeDuplicates: boolean; afterLine: number; limit: number },
  ): Promise<string[]> {
    // A key no look-up column can hold matches nothing (and must not reach SQL: an ASCII column compared
    // with other characters is an error, not a miss).
    if ((f.boletoId && !lookupKey(f.boletoId, 64)) || (f.nossoNumero && !lookupKey(f.nossoNumero, 32))) return [];
    const where = ["job_id = ?", "line_number > ?"];
    const args: (string | number)[] = [jobId, f.afterLine];
    if (f.state) where.push("state = ?"), args.push(f.state);
    if (f.nossoNumero) where.push("nosso_numero = ?"), args.push(f.nossoNumero);
    if (f.boletoId) where.push("boleto_id = ?"), args.push(f.boletoId);
    if (f.excludeDuplicates) where.push("duplicate = 0");
    const [rows] = await this.pool.query<BodyDbRow[]>(
      `SELECT body FROM billing_retorno_occurrences WHERE ${where.join(" AND ")} ORDER BY line_number LIMIT ?`,
      [...args, f.limit],
    );
    return rows.map((r) => r.body);
  }
}
