// What ApplyBatch needs to know of the stored rows before it writes a page, read in ONE statement: a
// UNION ALL of up to six parts, each tagged, all with the same ten columns (docs/decisions/0035-one-
// statement-per-step-in-apply-batch.md). Every part is a lookup by a unique or leading index key, so the
// union costs the server what the separate statements cost, minus their per-statement overhead. The
// locking parts (FOR UPDATE) are the ones that were locking reads before, in the same order: documents,
// then events, then quarantine rows.
import type { Feed } from "../codes.js";
import type { MunicipalityTables } from "../ibge.js";
import type { SqlFragment } from "./keyset.js";

/** The tag in a row's first column. */
export const KNOWN = {
  /** A document of the page, by chave, locked. */
  document: 1,
  /** The document holding one of the page documents' NSUs in this feed. */
  nsuHolder: 2,
  /** A note that only the page's events name (its status may change), not locked. */
  note: 3,
  /** An event of the page, by id_evento, locked. */
  event: 4,
  /** A stored event of a note the page touches (for the note's status). */
  noteEvent: 5,
  /** A quarantine row of one of the page's faults' NSUs, locked. */
  fault: 6,
} as const;

export interface KnownKeys {
  /** chave of every document of the page. */
  documentChaves: string[];
  /** NSU of every document of the page. */
  documentNsus: string[];
  /** chave named by the page's events and not among documentChaves. */
  eventOnlyChaves: string[];
  idEventos: string[];
  faultNsus: string[];
}

/** The union's columns; a part that has no such column gives NULL. `f` is the entry of ApplyBatches the row is for. */
const COLUMNS = ["f", "k", "id", "chave", "ambiente", "tipo_nsu", "nsu", "sha", "situacao", "substituta", "codigo"] as const;
type Column = Exclude<(typeof COLUMNS)[number], "f" | "k">;

/**
 * One part of the union: every column named (a union's column names are its first part's, and any part
 * may come first), `pick` saying which table column gives which.
 */
function part(f: number, k: number, pick: Partial<Record<Column, string>>, from: string, lock: boolean): string {
  const columns = COLUMNS.map((c) => (c === "f" ? `${f} AS f` : c === "k" ? `${k} AS k` : `${pick[c] ?? "NULL"} AS ${c}`));
  return `(SELECT ${columns.join(", ")} FROM ${from}${lock ? " FOR UPDATE" : ""})`;
}

/**
 * The statement, or undefined when the page has nothing to look up (only holes, say). `entry` tags its
 * rows, so that the parts of several pages (of different municipalities) can form one union.
 */
export function knownRowsQuery(t: MunicipalityTables, feed: Feed, keys: KnownKeys, entry = 0): SqlFragment | undefined {
  if (!Number.isSafeInteger(entry) || entry < 0) throw new RangeError(`entry must be a non-negative integer, not ${entry}`);
  const parts: string[] = [];
  const params: unknown[] = [];
  const note = { id: "chave", chave: "chave", nsu: "nsu", situacao: "situacao", substituta: "chave_substituta" };
  const event = { id: "id_evento", chave: "chave", nsu: "nsu", substituta: "chave_substituta", codigo: "codigo" };
  if (keys.documentChaves.length > 0) {
    const document = { ...note, ambiente: "ambiente", tipo_nsu: "tipo_nsu", sha: "xml_sha256" };
    parts.push(part(entry, KNOWN.document, document, `${t.documentos} WHERE chave IN (?)`, true));
    parts.push(
      part(
        entry,
        KNOWN.nsuHolder,
        { id: "chave", chave: "chave", nsu: "nsu" },
        `${t.documentos} WHERE ambiente = ? AND tipo_nsu = ? AND nsu IN (?)`,
        false,
      ),
    );
    params.push(keys.documentChaves, feed.ambiente, feed.tipoNsu, keys.documentNsus);
  }
  if (keys.eventOnlyChaves.length > 0) {
    parts.push(part(entry, KNOWN.note, note, `${t.documentos} WHERE chave IN (?)`, false));
    params.push(keys.eventOnlyChaves);
  }
  if (keys.idEventos.length > 0) {
    const locked = { ...event, ambiente: "ambiente", tipo_nsu: "tipo_nsu", sha: "xml_sha256" };
    parts.push(part(entry, KNOWN.event, locked, `${t.eventos} WHERE id_evento IN (?)`, true));
    params.push(keys.idEventos);
  }
  const allChaves = [...keys.documentChaves, ...keys.eventOnlyChaves];
  if (allChaves.length > 0) {
    parts.push(part(entry, KNOWN.noteEvent, event, `${t.eventos} WHERE chave IN (?)`, false));
    params.push(allChaves);
  }
  if (keys.faultNsus.length > 0) {
    const where = "nfse_quarantine WHERE ibge = ? AND ambiente = ? AND tipo_nsu = ? AND nsu IN (?)";
    parts.push(part(entry, KNOWN.fault, { id: "item_key", nsu: "nsu" }, where, true));
    params.push(feed.ibge, feed.ambiente, feed.tipoNsu, keys.faultNsus);
  }
  if (parts.length === 0) return undefined;
  return { sql: parts.join(" UNION ALL "), params };
}
