// Municipalities and their physical tables. DDL commits implicitly in MySQL, so the tables are created
// (idempotently) before the transaction that records the municipality: a crash in between leaves empty
// tables that the next registration simply reuses.
import type { PoolConnection, RowDataPacket } from "mysql2/promise";
import type { Municipality } from "../../../libs/gen/malha/store/v1/types_pb.js";
import { tipoNsuCodes } from "../codes.js";
import { alreadyExists, municipalityNotFound } from "../errors.js";
import { municipalityTables, type Ibge } from "../ibge.js";
import { municipalityFromRows } from "../mapping/records.js";
import { keysetAfter, orderBy, Where } from "../sql/keyset.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import { inTransaction, isDuplicateKey, withDb } from "../../../libs/db/tx.js";
import type { Row, StoreDb } from "./context.js";

export interface FeedSpecCols {
  ambiente: number;
  tipoNsu: string;
}

export interface Registration {
  ibge: Ibge;
  name: string;
  uf: string;
  active: boolean;
  feeds: FeedSpecCols[];
}

export async function createMunicipalityTables(db: StoreDb, ibge: Ibge): Promise<void> {
  const t = municipalityTables(ibge);
  await withDb(async () => {
    await db.pool.query(`CREATE TABLE IF NOT EXISTS ${t.documentos} LIKE nfse_documentos_template`);
    await db.pool.query(`CREATE TABLE IF NOT EXISTS ${t.eventos} LIKE nfse_eventos_template`);
  });
}

async function readMunicipality(conn: PoolConnection | StoreDb["pool"], ibge: string, lock = false): Promise<Municipality | undefined> {
  const [rows] = await conn.query<RowDataPacket[]>(`SELECT * FROM municipalities WHERE ibge = ?${lock ? " FOR UPDATE" : ""}`, [ibge]);
  const m = rows[0];
  if (!m) return undefined;
  const [feeds] = await conn.query<RowDataPacket[]>(
    "SELECT ambiente, tipo_nsu, enabled FROM nfse_sync_state WHERE ibge = ? ORDER BY ambiente, tipo_nsu",
    [ibge],
  );
  return municipalityFromRows(m, feeds);
}

export async function registerMunicipality(db: StoreDb, reg: Registration): Promise<{ municipality: Municipality; created: boolean }> {
  await createMunicipalityTables(db, reg.ibge);
  return inTransaction(db.pool, (conn) => recordMunicipality(conn, reg));
}

/**
 * The registration's transaction. The row is inserted first and read only if it exists: a locking read
 * of an ibge not yet registered would take a gap lock, and two registrations holding the same gap both
 * wait for each other's INSERT (a deadlock at every onboarding of many municipalities at once). A
 * duplicate of the unique key leaves this transaction open with the existing row's lock.
 */
export async function recordMunicipality(
  conn: PoolConnection,
  reg: Registration,
): Promise<{ municipality: Municipality; created: boolean }> {
  try {
    await conn.query("INSERT INTO municipalities (ibge, name, uf, active) VALUES (?, ?, ?, ?)", [
      reg.ibge,
      reg.name,
      reg.uf,
      reg.active ? 1 : 0,
    ]);
  } catch (err) {
    if (!isDuplicateKey(err)) throw err;
    const existing = await readMunicipality(conn, reg.ibge, true);
    if (!existing) throw err;
    if (existing.name === reg.name && existing.uf === reg.uf && existing.active === reg.active && sameFeedSet(existing, reg)) {
      return { municipality: existing, created: false };
    }
    throw alreadyExists(`municipality ${reg.ibge} is already registered with other fields; use UpdateMunicipality`);
  }
  await insertFeeds(conn, reg.ibge, reg.feeds);
  return { municipality: (await readMunicipality(conn, reg.ibge))!, created: true };
}

function sameFeedSet(existing: Municipality, reg: Registration): boolean {
  const enabled = existing.feeds
    .filter((f) => f.enabled)
    .map((f) => `${f.ambiente}/${f.tipoNsu}`)
    .sort();
  const requested = reg.feeds.map((f) => `${f.ambiente}/${tipoNsuNumber(f.tipoNsu)}`).sort();
  return enabled.length === requested.length && enabled.every((v, i) => v === requested[i]);
}

// Feed specs travel as column words; Municipality.feeds carries enum numbers.
function tipoNsuNumber(code: string): number {
  return tipoNsuCodes.fromDb(code) ?? 0;
}

async function insertFeeds(conn: PoolConnection, ibge: string, feeds: FeedSpecCols[]): Promise<void> {
  for (const f of feeds) {
    // Enabling a feed that exists keeps its cursor; one that never existed starts at 0.
    await conn.query(
      "INSERT INTO nfse_sync_state (ibge, ambiente, tipo_nsu, enabled) VALUES (?, ?, ?, 1) ON DUPLICATE KEY UPDATE enabled = 1",
      [ibge, f.ambiente, f.tipoNsu],
    );
  }
}

export async function getMunicipality(db: StoreDb, ibge: Ibge): Promise<Municipality> {
  const m = await withDb(() => readMunicipality(db.pool, ibge));
  if (!m) throw municipalityNotFound(ibge);
  return m;
}

/** NOT_FOUND unless the municipality is registered (its tables exist). */
export async function requireMunicipality(db: StoreDb, ibge: Ibge): Promise<void> {
  const [rows] = await withDb(() => db.pool.query<RowDataPacket[]>("SELECT 1 FROM municipalities WHERE ibge = ?", [ibge]));
  if (rows.length === 0) throw municipalityNotFound(ibge);
}

export interface MunicipalityUpdate {
  ibge: Ibge;
  active?: boolean;
  name?: string;
  enable: FeedSpecCols[];
  disable: FeedSpecCols[];
}

export async function updateMunicipality(db: StoreDb, u: MunicipalityUpdate): Promise<Municipality> {
  return inTransaction(db.pool, async (conn) => {
    const existing = await readMunicipality(conn, u.ibge, true);
    if (!existing) throw municipalityNotFound(u.ibge);
    if (u.active !== undefined || u.name !== undefined) {
      await conn.query("UPDATE municipalities SET active = COALESCE(?, active), name = COALESCE(?, name) WHERE ibge = ?", [
        u.active === undefined ? null : u.active ? 1 : 0,
        u.name ?? null,
        u.ibge,
      ]);
    }
    await insertFeeds(conn, u.ibge, u.enable);
    for (const f of u.disable) {
      await conn.query("UPDATE nfse_sync_state SET enabled = 0 WHERE ibge = ? AND ambiente = ? AND tipo_nsu = ?", [
        u.ibge,
        f.ambiente,
        f.tipoNsu,
      ]);
    }
    return (await readMunicipality(conn, u.ibge))!;
  });
}

export interface MunicipalityFilter {
  active?: boolean;
  uf?: string;
  pageSize: number;
  pageToken: string;
}

export async function listMunicipalities(db: StoreDb, f: MunicipalityFilter): Promise<{ items: Municipality[]; next: string }> {
  const filters = { active: f.active, uf: f.uf };
  const after = db.tokens.decode("ListMunicipalities", filters, f.pageToken, ["string"]);
  const limit = pageSizeOf(f.pageSize);
  const where = new Where();
  if (f.active !== undefined) where.add("active = ?", f.active ? 1 : 0);
  if (f.uf) where.add("uf = ?", f.uf);
  const key = [{ expr: "ibge" }];
  if (after) where.addFragment(keysetAfter(key, after));
  const [rows] = await withDb(() =>
    db.pool.query<RowDataPacket[]>(`SELECT * FROM municipalities ${where.sql} ORDER BY ${orderBy(key)} LIMIT ?`, [
      ...where.params,
      limit + 1,
    ]),
  );
  const page = rows.slice(0, limit);
  const ibges = page.map((r) => String(r.ibge));
  const feedsBy = new Map<string, Row[]>();
  if (ibges.length) {
    const [feeds] = await withDb(() =>
      db.pool.query<RowDataPacket[]>(
        "SELECT ibge, ambiente, tipo_nsu, enabled FROM nfse_sync_state WHERE ibge IN (?) ORDER BY ibge, ambiente, tipo_nsu",
        [ibges],
      ),
    );
    for (const r of feeds) feedsBy.set(String(r.ibge), [...(feedsBy.get(String(r.ibge)) ?? []), r]);
  }
  const last = page[page.length - 1];
  return {
    items: page.map((m) => municipalityFromRows(m, feedsBy.get(String(m.ibge)) ?? [])),
    next: rows.length > limit && last ? db.tokens.encode("ListMunicipalities", filters, [String(last.ibge)]) : "",
  };
}
