// Per-municipality tables are copies of their templates (CREATE TABLE … LIKE) made when a municipality is
// registered, so a migration that widens a template leaves the older copies behind: plain SQL cannot loop
// over tables. The store brings them in line at start, before it serves: every column the template has and a
// copy lacks is added with the template's definition (always nullable here: a NOT NULL column could not be
// added to rows that exist), and every missing index is added. Idempotent, and cheap when nothing is behind.
import type { RowDataPacket } from "mysql2/promise";
import type { Logger } from "../../../libs/log/logger.js";
import type { StoreDb } from "./context.js";

const TEMPLATES = [
  { template: "nfse_documentos_template", prefix: "nfse_documentos_" },
  { template: "nfse_eventos_template", prefix: "nfse_eventos_" },
] as const;

const COPY = /^nfse_(?:documentos|eventos)_[0-9]{7}$/;

interface ColumnDef {
  name: string;
  type: string;
  charset: string | null;
  collation: string | null;
}

async function columnsByTable(db: StoreDb, like: string): Promise<Map<string, ColumnDef[]>> {
  const [rows] = await db.pool.query<RowDataPacket[]>(
    `SELECT TABLE_NAME AS t, COLUMN_NAME AS c, COLUMN_TYPE AS type, CHARACTER_SET_NAME AS cs, COLLATION_NAME AS co
       FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME, ORDINAL_POSITION`,
    [like],
  );
  const out = new Map<string, ColumnDef[]>();
  for (const r of rows) {
    const list = out.get(r.t) ?? [];
    list.push({ name: r.c, type: r.type, charset: r.cs, collation: r.co });
    out.set(r.t, list);
  }
  return out;
}

async function indexesByTable(db: StoreDb, like: string): Promise<Map<string, Map<string, { unique: boolean; columns: string[] }>>> {
  const [rows] = await db.pool.query<RowDataPacket[]>(
    `SELECT TABLE_NAME AS t, INDEX_NAME AS i, NON_UNIQUE AS nu, COLUMN_NAME AS c
       FROM information_schema.STATISTICS WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME LIKE ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX`,
    [like],
  );
  const out = new Map<string, Map<string, { unique: boolean; columns: string[] }>>();
  for (const r of rows) {
    const table = out.get(r.t) ?? new Map();
    const index = table.get(r.i) ?? { unique: Number(r.nu) === 0, columns: [] };
    index.columns.push(r.c);
    table.set(r.i, index);
    out.set(r.t, table);
  }
  return out;
}

const quoted = (name: string) => `\`${name.replace(/`/g, "``")}\``;

/** Brings every per-municipality table up to its template; returns how many tables were altered. */
export async function alignMunicipalityTables(db: StoreDb, log: Logger): Promise<number> {
  let altered = 0;
  for (const { template, prefix } of TEMPLATES) {
    const like = `${prefix.replace(/_/g, "\\_")}%`;
    const columns = await columnsByTable(db, like);
    const indexes = await indexesByTable(db, like);
    const want = columns.get(template) ?? [];
    const wantIndexes = indexes.get(template) ?? new Map();
    for (const [table, have] of columns) {
      if (table === template || !COPY.test(table)) continue;
      const present = new Set(have.map((c) => c.name));
      const clauses: string[] = [];
      let previous: string | undefined;
      for (const c of want) {
        if (!present.has(c.name)) {
          const charset = c.charset ? ` CHARACTER SET ${c.charset} COLLATE ${c.collation}` : "";
          clauses.push(
            `ADD COLUMN ${quoted(c.name)} ${c.type}${charset} NULL DEFAULT NULL${previous ? ` AFTER ${quoted(previous)}` : " FIRST"}`,
          );
        }
        previous = c.name;
      }
      const haveIndexes = indexes.get(table) ?? new Map();
      for (const [name, index] of wantIndexes) {
        if (name === "PRIMARY" || haveIndexes.has(name)) continue;
        clauses.push(`ADD ${index.unique ? "UNIQUE " : ""}KEY ${quoted(name)} (${index.columns.map(quoted).join(", ")})`);
      }
      if (clauses.length === 0) continue;
      await db.pool.query(`ALTER TABLE ${quoted(table)} ${clauses.join(", ")}`);
      altered++;
      log.info({ table, changes: clauses.length }, "per-municipality table brought in line with its template");
    }
  }
  return altered;
}
