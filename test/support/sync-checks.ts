// Checks shared by the end-to-end sync tests: polling with a bound, and "what the tables hold".
import type { Pool, RowDataPacket } from "mysql2/promise";
import { expect } from "vitest";
import type { NfseMesh } from "./nfse-mesh.js";

/** Polls `cond` until it holds; a bounded wait, never an assertion on time. Errors count as "not yet". */
export async function until(cond: () => Promise<boolean>, what: string, timeoutMs = 120_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await cond().catch(() => false))) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

/** Every NSU a municipality's feed left in the tables: documents, events and quarantined items. */
export async function storedNsusIn(pool: Pool, ibge: string): Promise<bigint[]> {
  const nsus: bigint[] = [];
  const queries: [string, string[]][] = [
    [`SELECT nsu FROM nfse_documentos_${ibge}`, []],
    [`SELECT nsu FROM nfse_eventos_${ibge}`, []],
    ["SELECT nsu FROM nfse_quarantine WHERE ibge = ?", [ibge]],
  ];
  for (const [sql, params] of queries) {
    const [rows] = await pool.query<RowDataPacket[]>(sql, params);
    nsus.push(...rows.map((r) => BigInt(r.nsu as string)));
  }
  return nsus.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** storedNsusIn on a mesh's database. */
export const storedNsus = (mesh: NfseMesh, ibge: string): Promise<bigint[]> => storedNsusIn(mesh.db.pool, ibge);

/** Everything `lote=true` distributed is stored exactly once (hidden NSUs may or may not be back-filled yet). */
export async function expectDistributedOnce(mesh: NfseMesh, ibge: string): Promise<void> {
  const feed = mesh.sim.feed(ibge, "DISTRIBUICAO");
  const stored = await storedNsus(mesh, ibge);
  expect(new Set(stored).size).toBe(stored.length);
  const hidden = new Set(feed.entries.filter((e) => e.hidden).map((e) => e.nsu));
  expect(stored.filter((n) => !hidden.has(n))).toEqual(feed.entries.filter((e) => !e.hidden).map((e) => e.nsu));
}

const money = (v: bigint | undefined) => (v === undefined ? null : v.toString());
const rate4 = (ppm: number | undefined) =>
  ppm === undefined ? null : `${Math.trunc(ppm / 10_000)}.${String(ppm % 10_000).padStart(4, "0")}`;

/**
 * What the ADN distributes since 2026 reached the columns: notes and events whose chave, parties and authors
 * carry alphanumeric CNPJs, IBS/CBS groups with a destinatário, and notes with NT 009's elements — none of
 * them quarantined, each column equal to what the simulator generated. Also checks the feeds hold each kind,
 * so that the sync was tried on them.
 */
export async function expectDecember2026Columns(mesh: NfseMesh): Promise<void> {
  let alphanumericNotes = 0;
  let alphanumericEvents = 0;
  let fullIbsCbs = 0;
  let destinatarios = 0;
  let nt009 = 0;
  for (const m of mesh.municipalities) {
    const [quarantined] = await mesh.db.pool.query<RowDataPacket[]>("SELECT nsu, message FROM nfse_quarantine WHERE ibge = ?", [m.ibge]);
    expect(quarantined).toEqual([]);
    const [rows] = await mesh.db.pool.query<RowDataPacket[]>(`SELECT * FROM nfse_documentos_${m.ibge}`);
    const byChave = new Map(rows.map((r) => [r.chave as string, r]));
    const [eventRows] = await mesh.db.pool.query<RowDataPacket[]>(`SELECT id_evento, chave, autor_documento FROM nfse_eventos_${m.ibge}`);
    const events = new Map(eventRows.map((r) => [r.id_evento as string, r]));
    for (const entry of mesh.sim.feed(m.ibge, "DISTRIBUICAO").entries) {
      if (entry.facts.kind === "EVENTO") {
        const e = entry.facts.event;
        expect(events.get(e.id), e.id).toMatchObject({ chave: e.chave, autor_documento: e.autor.number });
        if (/[A-Z]/.test(e.chave)) alphanumericEvents++;
        continue;
      }
      const n = entry.facts.note;
      const row = byChave.get(n.chave);
      expect(row, n.chave).toBeDefined();
      if (/[A-Z]/.test(n.chave)) alphanumericNotes++;
      if (n.nt009) nt009++;
      expect(row).toMatchObject({ emitente_documento: n.emitente.doc.number, tomador_documento: n.tomador?.doc.number ?? null });
      const g = n.ibsCbs;
      if (g?.destinatario) destinatarios++;
      if (g?.full) fullIbsCbs++;
      expect(row).toMatchObject({
        destinatario_documento: g?.destinatario?.doc.number ?? null,
        destinatario_nome: g?.destinatario?.name ?? null,
        ibscbs_localidade_incidencia: g?.cLocalidadeIncid ?? null,
        valor_total_nf: money(g?.vTotNF),
        ibscbs_base_calculo: money(g?.full?.vBC),
        ibs_uf_aliquota: rate4(g?.full?.pIBSUF),
        ibs_uf_valor: money(g?.full?.vIBSUF),
        ibs_mun_aliquota: rate4(g?.full?.pIBSMun),
        ibs_mun_valor: money(g?.full?.vIBSMun),
        ibs_valor_total: money(g?.full && g.full.vIBSUF + g.full.vIBSMun),
        cbs_aliquota: rate4(g?.full?.pCBS),
        cbs_valor: money(g?.full?.vCBS),
        ibscbs_cst: g?.full?.cst ?? null,
        ibscbs_classificacao: g?.full?.cClassTrib ?? null,
      });
    }
  }
  for (const [kind, n] of Object.entries({ alphanumericNotes, alphanumericEvents, fullIbsCbs, destinatarios, nt009 })) {
    expect(n, `notes or events of kind ${kind} in the feeds`).toBeGreaterThan(0);
  }
}
