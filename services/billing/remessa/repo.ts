// Remessa sub-batches and the per-convênio NSA sequences (docs/decisions/0011-nsa-allocation.md).
import type { Pool, PoolConnection, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { SubloteState } from "../../../libs/gen/malha/billing/v1/cnab_pb.js";
import type { ChaveAgrupamento } from "../../../libs/cobranca/index.js";
import { inTransaction } from "../../../libs/db/tx.js";
import { Doc } from "../jobs/json-doc.js";
import { artifactOf, storedErrorsOf, type StoredArtifact, type StoredError } from "../jobs/stored.js";

export type SubloteChave = Required<Omit<ChaveAgrupamento, "pix">> & { pix: boolean };

export interface StoredRemessaFile {
  artifact: StoredArtifact;
  registros: number;
  titulos: number;
  valorTotalCents: number;
}

export interface SubloteRow {
  jobId: string;
  index: number;
  subloteId: string;
  chave: SubloteChave;
  state: SubloteState;
  titulos: number;
  valorTotalCents: number;
  nsa: number | null;
  generatedAt: Date | null;
  attemptCount: number;
  errors: StoredError[];
  file: StoredRemessaFile | null;
}

interface SubloteDbRow extends RowDataPacket {
  job_id: string;
  idx: number;
  sublote_id: string;
  sublote_key: string;
  state: SubloteState;
  titulos: number;
  valor_total_cents: number | string;
  nsa: number | null;
  generated_at: Date | null;
  attempt_count: number;
  errors: string | null;
  file: string | null;
}

interface NsaDbRow extends RowDataPacket {
  nsa: number | null;
  generated_at: Date | null;
}

interface CountDbRow extends RowDataPacket {
  n: number | string;
}

// Key order as grouped by libs/cobranca: manifest.json repeats the key, and its bytes must not change.
function chaveOf(text: string): SubloteChave {
  const d = Doc.parse(text, "billing_remessa_sublotes.sublote_key");
  const layout = d.num("layout");
  if (layout !== 240 && layout !== 400) throw new Error(`billing_remessa_sublotes.sublote_key.layout is ${layout}`);
  return {
    banco: d.str("banco"),
    layout,
    convenio: d.str("convenio"),
    carteira: d.str("carteira"),
    conta: d.str("conta"),
    agencia: d.str("agencia"),
    variacao: d.str("variacao"),
    pix: d.bool("pix"),
  };
}

function fileOf(text: string | null): StoredRemessaFile | null {
  if (!text) return null;
  const d = Doc.parse(text, "billing_remessa_sublotes.file");
  return {
    artifact: artifactOf(d.doc("artifact")),
    registros: d.num("registros"),
    titulos: d.num("titulos"),
    valorTotalCents: d.num("valorTotalCents"),
  };
}

const toRow = (r: SubloteDbRow): SubloteRow => ({
  jobId: r.job_id,
  index: r.idx,
  subloteId: r.sublote_id,
  chave: chaveOf(r.sublote_key),
  state: r.state,
  titulos: r.titulos,
  valorTotalCents: Number(r.valor_total_cents),
  nsa: r.nsa,
  generatedAt: r.generated_at,
  attemptCount: r.attempt_count,
  errors: storedErrorsOf(r.errors, "billing_remessa_sublotes.errors"),
  file: fileOf(r.file),
});

export class RemessaRepo {
  constructor(
    private readonly pool: Pool,
    private readonly clock: () => Date = () => new Date(),
  ) {}

  async insert(
    c: PoolConnection,
    jobId: string,
    rows: { index: number; subloteId: string; chave: SubloteChave; titulos: number; valorTotalCents: number }[],
  ): Promise<void> {
    const now = this.clock();
    for (const r of rows) {
      await c.execute(
        "INSERT INTO billing_remessa_sublotes (job_id, idx, sublote_id, sublote_key, state, titulos, valor_total_cents, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [jobId, r.index, r.subloteId, JSON.stringify(r.chave), SubloteState.PENDING, r.titulos, r.valorTotalCents, now],
      );
    }
  }

  async list(jobId: string): Promise<SubloteRow[]> {
    const [rows] = await this.pool.execute<SubloteDbRow[]>("SELECT * FROM billing_remessa_sublotes WHERE job_id = ? ORDER BY idx", [jobId]);
    return rows.map(toRow);
  }

  async get(jobId: string, index: number): Promise<SubloteRow | undefined> {
    const [rows] = await this.pool.execute<SubloteDbRow[]>("SELECT * FROM billing_remessa_sublotes WHERE job_id = ? AND idx = ?", [
      jobId,
      index,
    ]);
    return rows[0] ? toRow(rows[0]) : undefined;
  }

  /** PENDING → GENERATING (a new attempt); a redelivery of a GENERATING one resumes it; final ones are left alone. */
  async claim(jobId: string, index: number): Promise<SubloteRow | undefined> {
    return inTransaction(this.pool, async (c) => {
      const [rows] = await c.execute<SubloteDbRow[]>("SELECT * FROM billing_remessa_sublotes WHERE job_id = ? AND idx = ? FOR UPDATE", [
        jobId,
        index,
      ]);
      const row = rows[0] ? toRow(rows[0]) : undefined;
      if (!row || (row.state !== SubloteState.PENDING && row.state !== SubloteState.GENERATING)) return undefined;
      if (row.state === SubloteState.PENDING) {
        await c.execute(
          "UPDATE billing_remessa_sublotes SET state = ?, attempt_count = attempt_count + 1, updated_at = ? WHERE job_id = ? AND idx = ?",
          [SubloteState.GENERATING, this.clock(), jobId, index],
        );
        return { ...row, state: SubloteState.GENERATING, attemptCount: row.attemptCount + 1 };
      }
      return row;
    });
  }

  /**
   * The sub-batch's NSA and generation time, allocated once: the next NSA of (tenant, environment, banco,
   * convênio) is taken and stored on the sub-batch in one transaction, so it is never reused, never skipped
   * by a crash, and every retry of the sub-batch writes the same header.
   */
  async allocateNsa(
    jobId: string,
    index: number,
    seq: { tenant: string; environment: number; banco: string; convenio: string },
  ): Promise<{ nsa: number; generatedAt: Date }> {
    return inTransaction(this.pool, async (c) => {
      const [rows] = await c.execute<NsaDbRow[]>(
        "SELECT nsa, generated_at FROM billing_remessa_sublotes WHERE job_id = ? AND idx = ? FOR UPDATE",
        [jobId, index],
      );
      const r = rows[0];
      if (r && r.nsa !== null && r.generated_at !== null) return { nsa: r.nsa, generatedAt: r.generated_at };
      const [res] = await c.execute<ResultSetHeader>(
        `INSERT INTO billing_nsa_seq (tenant, environment, banco, convenio, last_nsa) VALUES (?, ?, ?, ?, LAST_INSERT_ID(1))
         ON DUPLICATE KEY UPDATE last_nsa = LAST_INSERT_ID(last_nsa + 1)`,
        [seq.tenant, seq.environment, seq.banco, seq.convenio],
      );
      const nsa = Number(res.insertId);
      // Whole seconds: the file header carries seconds, and the stored value must reproduce it exactly.
      const generatedAt = new Date(Math.floor(this.clock().getTime() / 1000) * 1000);
      await c.execute("UPDATE billing_remessa_sublotes SET nsa = ?, generated_at = ? WHERE job_id = ? AND idx = ?", [
        nsa,
        generatedAt,
        jobId,
        index,
      ]);
      return { nsa, generatedAt };
    });
  }

  async finish(
    jobId: string,
    index: number,
    state: SubloteState,
    out: { file?: StoredRemessaFile; errors?: StoredError[] },
  ): Promise<boolean> {
    const [res] = await this.pool.execute<ResultSetHeader>(
      "UPDATE billing_remessa_sublotes SET state = ?, file = COALESCE(?, file), errors = ?, updated_at = ? WHERE job_id = ? AND idx = ? AND state = ?",
      [
        state,
        out.file ? JSON.stringify(out.file) : null,
        out.errors?.length ? JSON.stringify(out.errors) : null,
        this.clock(),
        jobId,
        index,
        SubloteState.GENERATING,
      ],
    );
    return res.affectedRows === 1;
  }

  async requeueFailed(jobId: string, indexes: number[]): Promise<{ index: number; attempt: number }[]> {
    const out: { index: number; attempt: number }[] = [];
    for (const index of indexes) {
      const [res] = await this.pool.execute<ResultSetHeader>(
        "UPDATE billing_remessa_sublotes SET state = ?, updated_at = ? WHERE job_id = ? AND idx = ? AND state = ?",
        [SubloteState.PENDING, this.clock(), jobId, index, SubloteState.FAILED],
      );
      if (res.affectedRows === 1) out.push({ index, attempt: ((await this.get(jobId, index))?.attemptCount ?? 0) + 1 });
    }
    return out;
  }

  async open(jobId: string): Promise<number> {
    const [rows] = await this.pool.execute<CountDbRow[]>(
      "SELECT COUNT(*) AS n FROM billing_remessa_sublotes WHERE job_id = ? AND state IN (?, ?)",
      [jobId, SubloteState.PENDING, SubloteState.GENERATING],
    );
    return Number(rows[0]!.n);
  }
}
