// Checks shared by the end-to-end sync tests: polling with a bound, and "what the tables hold".
import type { RowDataPacket } from "mysql2/promise";
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
export async function storedNsus(mesh: NfseMesh, ibge: string): Promise<bigint[]> {
  const nsus: bigint[] = [];
  const queries: [string, string[]][] = [
    [`SELECT nsu FROM nfse_documentos_${ibge}`, []],
    [`SELECT nsu FROM nfse_eventos_${ibge}`, []],
    ["SELECT nsu FROM nfse_quarantine WHERE ibge = ?", [ibge]],
  ];
  for (const [sql, params] of queries) {
    const [rows] = await mesh.db.pool.query<RowDataPacket[]>(sql, params);
    nsus.push(...rows.map((r) => BigInt(r.nsu as string)));
  }
  return nsus.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** Everything `lote=true` distributed is stored exactly once (hidden NSUs may or may not be back-filled yet). */
export async function expectDistributedOnce(mesh: NfseMesh, ibge: string): Promise<void> {
  const feed = mesh.sim.feed(ibge, "DISTRIBUICAO");
  const stored = await storedNsus(mesh, ibge);
  expect(new Set(stored).size).toBe(stored.length);
  const hidden = new Set(feed.entries.filter((e) => e.hidden).map((e) => e.nsu));
  expect(stored.filter((n) => !hidden.has(n))).toEqual(feed.entries.filter((e) => !e.hidden).map((e) => e.nsu));
}
