// The ceiling: the same rows the store writes, by the fastest plain path. Items are decoded with libs/adn
// and mapped with the store's own pure mapping (itemRow) BEFORE the clock starts; the timed part is one
// mysql2 connection writing them with multi-row upserts (the store's buildMultiInsert and column lists),
// one transaction per ADN page, each transaction also moving a cursor row — nothing else: no fence check,
// no look-ups of existing rows, no status derivation, no RPC.
import type { PoolConnection } from "mysql2/promise";
import { decodeItem } from "../libs/adn/item.js";
import { createMysqlPool } from "../libs/db/pool.js";
import { queryStatements } from "../libs/db/statement-bytes.js";
import { formatQuery } from "../libs/db/sql-text.js";
import { BEGIN_STATEMENT } from "../libs/db/tx.js";
import { Ambiente } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Feed } from "../services/store/codes.js";
import { parseIbge } from "../services/store/ibge.js";
import { DOCUMENT_COLUMNS, EVENT_COLUMNS, itemRow, type MappedRow } from "../services/store/mapping/item-rows.js";
import { buildMultiInsert } from "../services/store/sql/multi-insert.js";
import type { FeedPages } from "./workload.js";

export const MAX_DECOMPRESSED = 8 * 1024 * 1024;
const STATEMENT_BUDGET = 16 * 1024 * 1024;

export interface MappedFeed {
  ibge: string;
  pages: MappedRow[][];
}

export function mapFeeds(feeds: FeedPages[]): MappedFeed[] {
  return feeds.map((f) => {
    const feed: Feed = { ibge: parseIbge(f.ibge), ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: "DISTRIBUICAO" };
    return {
      ibge: f.ibge,
      pages: f.pages.map((page) => page.map((raw) => itemRow(feed, decodeItem(raw, { maxDecompressedBytes: MAX_DECOMPRESSED }), "bench"))),
    };
  });
}

/** The store's upsert clause (services/store/repo/apply-batch.ts upsertTail, which is not exported). */
export function upsertTail(columns: readonly string[], keep: ReadonlySet<string>): string {
  const sets = columns.filter((c) => !keep.has(c)).map((c) => `${c} = VALUES(${c})`);
  return `ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), ${sets.join(", ")}`;
}
export const DOC_TAIL = upsertTail(DOCUMENT_COLUMNS, new Set(["chave", "ambiente", "tipo_nsu", "nsu"]));
export const EVENT_TAIL = upsertTail(EVENT_COLUMNS, new Set(["id_evento", "ambiente", "tipo_nsu", "nsu"]));

export function benchTables(prefix: string, ibge: string) {
  return { documentos: `\`${prefix}_doc_${ibge}\``, eventos: `\`${prefix}_evt_${ibge}\`` };
}

/** Fresh copies of the per-municipality tables (from the store's templates) and a cursor table. */
export async function createBenchTables(conn: PoolConnection, prefix: string, ibges: string[]): Promise<void> {
  for (const ibge of ibges) {
    const t = benchTables(prefix, ibge);
    await conn.query(`DROP TABLE IF EXISTS ${t.documentos}, ${t.eventos}`);
    await conn.query(`CREATE TABLE ${t.documentos} LIKE nfse_documentos_template`);
    await conn.query(`CREATE TABLE ${t.eventos} LIKE nfse_eventos_template`);
  }
  await conn.query(`DROP TABLE IF EXISTS \`${prefix}_cursor\``);
  await conn.query(`CREATE TABLE \`${prefix}_cursor\` (ibge CHAR(7) PRIMARY KEY, last_nsu BIGINT UNSIGNED NOT NULL) ENGINE=InnoDB`);
  for (const ibge of ibges) await conn.query(`INSERT INTO \`${prefix}_cursor\` VALUES (?, 0)`, [ibge]);
}

export async function dropBenchTables(conn: PoolConnection, prefix: string, ibges: string[]): Promise<void> {
  for (const ibge of ibges) {
    const t = benchTables(prefix, ibge);
    await conn.query(`DROP TABLE IF EXISTS ${t.documentos}, ${t.eventos}`);
  }
  await conn.query(`DROP TABLE IF EXISTS \`${prefix}_cursor\``);
}

export interface CeilingResult {
  documents: number;
  seconds: number;
  docsPerSecond: number;
}

/** Writes every mapped page (one transaction each) through one connection; returns the timed figures. */
export async function runCeiling(mysqlUrl: string, feeds: MappedFeed[], prefix = "bench_ceiling"): Promise<CeilingResult> {
  const pool = createMysqlPool(mysqlUrl, { connectionLimit: 1, multipleStatements: true });
  const conn = await pool.getConnection();
  try {
    const ibges = feeds.map((f) => f.ibge);
    await createBenchTables(conn, prefix, ibges);
    let documents = 0;
    const t0 = performance.now();
    for (const f of feeds) {
      const t = benchTables(prefix, f.ibge);
      for (const page of f.pages) {
        const docs: unknown[][] = [];
        const events: unknown[][] = [];
        let highest = 0n;
        for (const r of page) {
          if (r.kind === "document") docs.push(r.values);
          else if (r.kind === "event") events.push(r.values);
          else throw new Error(`ceiling: unexpected quarantine row at NSU ${r.nsu}`);
          if (r.nsu > highest) highest = r.nsu;
        }
        // The transaction opened with the page's upserts and cursor row, in one round trip, as the store opens
        // a round with its first query and sends its writes in one (decision 0059).
        await queryStatements(
          conn,
          [
            Buffer.from(BEGIN_STATEMENT),
            ...buildMultiInsert({
              head: `INSERT INTO ${t.documentos} (${DOCUMENT_COLUMNS.join(", ")})`,
              columnCount: DOCUMENT_COLUMNS.length,
              tail: DOC_TAIL,
              rows: docs,
              budgetBytes: STATEMENT_BUDGET,
            }),
            ...buildMultiInsert({
              head: `INSERT INTO ${t.eventos} (${EVENT_COLUMNS.join(", ")})`,
              columnCount: EVENT_COLUMNS.length,
              tail: EVENT_TAIL,
              rows: events,
              budgetBytes: STATEMENT_BUDGET,
            }),
            Buffer.from(
              formatQuery(`UPDATE \`${prefix}_cursor\` SET last_nsu = GREATEST(last_nsu, ?) WHERE ibge = ?`, [highest.toString(), f.ibge]),
            ),
          ],
          STATEMENT_BUDGET,
        );
        await conn.commit();
        documents += page.length;
      }
    }
    const seconds = (performance.now() - t0) / 1000;
    await dropBenchTables(conn, prefix, ibges);
    return { documents, seconds, docsPerSecond: documents / seconds };
  } finally {
    conn.release();
    await pool.end();
  }
}
