import type { Pool, PoolConnection, RowDataPacket } from "mysql2/promise";
import { MigrationError } from "./migration-error.js";
import { loadMigrationFiles } from "./migration-files.js";
import type { MigrationFile } from "./migration-files.js";

export { MigrationError } from "./migration-error.js";
export type { MigrationErrorKind } from "./migration-error.js";

export const MIGRATION_LOCK_NAME = "malha_schema_migrations";

export interface MigrateOptions {
  /** Receives one line per applied file. */
  log?: (line: string) => void;
  /** Seconds to wait for another runner to finish (default 60). */
  lockTimeoutSeconds?: number;
}

export interface MigrateResult {
  applied: string[];
  alreadyApplied: string[];
}

const CREATE_SCHEMA_MIGRATIONS = `CREATE TABLE IF NOT EXISTS schema_migrations (
  version INT UNSIGNED NOT NULL,
  name VARCHAR(191) NOT NULL,
  checksum CHAR(64) NOT NULL,
  applied_at DATETIME NOT NULL,
  statements INT UNSIGNED NOT NULL,
  duration_ms INT UNSIGNED NOT NULL,
  PRIMARY KEY (version)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci`;

interface AppliedRow extends RowDataPacket {
  version: number;
  name: string;
  checksum: string;
}

/**
 * Applies the pending `NNN_name.sql` files of `dir` in version order and records each in
 * `schema_migrations`. Concurrent runners are serialised by a named server lock; the loser finds the work
 * done and returns it as already applied. Any drift between the directory and what was recorded (edited,
 * missing, renamed or out-of-order files) refuses the whole run before a single statement is sent.
 */
export async function migrate(pool: Pool, dir: string, options: MigrateOptions = {}): Promise<MigrateResult> {
  const files = await loadMigrationFiles(dir);
  const lockTimeout = options.lockTimeoutSeconds ?? 60;

  // One dedicated connection: GET_LOCK belongs to the session, and statements that change session state
  // (SET …) must not leak into the application's pool, so the connection is destroyed afterwards.
  const conn = await pool.getConnection();
  try {
    await acquireLock(conn, lockTimeout);
    try {
      await ensureDatabaseSelected(conn);
      await conn.query(CREATE_SCHEMA_MIGRATIONS);
      const [rows] = await conn.query<AppliedRow[]>("SELECT version, name, checksum FROM schema_migrations ORDER BY version");
      const pending = planPending(files, rows);
      const alreadyApplied = files.filter((f) => !pending.includes(f)).map((f) => f.name);
      const applied: string[] = [];
      for (const file of pending) {
        const durationMs = await applyFile(conn, file);
        applied.push(file.name);
        options.log?.(`applied ${file.name}: ${file.statements.length} statement(s) in ${durationMs} ms`);
      }
      return { applied, alreadyApplied };
    } finally {
      await conn.query("SELECT RELEASE_LOCK(?)", [MIGRATION_LOCK_NAME]).catch(() => undefined);
    }
  } finally {
    conn.destroy();
  }
}

async function acquireLock(conn: PoolConnection, timeoutSeconds: number): Promise<void> {
  const [rows] = await conn.query<RowDataPacket[]>("SELECT GET_LOCK(?, ?) AS got", [MIGRATION_LOCK_NAME, timeoutSeconds]);
  const got = rows[0]?.["got"];
  if (got === null || got === undefined) {
    throw new MigrationError("lock_timeout", `could not take the migration lock ${MIGRATION_LOCK_NAME} (GET_LOCK returned NULL)`);
  }
  if (Number(got) !== 1) {
    throw new MigrationError(
      "lock_timeout",
      `another migration runner held the lock ${MIGRATION_LOCK_NAME} for more than ${timeoutSeconds} s`,
    );
  }
}

async function ensureDatabaseSelected(conn: PoolConnection): Promise<void> {
  const [rows] = await conn.query<RowDataPacket[]>("SELECT DATABASE() AS db");
  if (rows[0]?.["db"] == null) throw new MigrationError("no_database", "the connection has no database selected");
}

/** Compares the directory with the recorded history; returns the files still to apply, or refuses. */
function planPending(files: MigrationFile[], recorded: AppliedRow[]): MigrationFile[] {
  const onDisk = new Map(files.map((f) => [f.version, f]));
  let highestApplied = -1;
  for (const row of recorded) {
    const version = Number(row.version);
    highestApplied = Math.max(highestApplied, version);
    const file = onDisk.get(version);
    if (!file) {
      throw new MigrationError("missing_file", `${row.name} is recorded as applied but is missing from the migrations directory`, {
        file: row.name,
      });
    }
    if (file.name !== row.name) {
      throw new MigrationError(
        "renamed_file",
        `version ${file.name.slice(0, 3)} was applied as ${row.name} but the directory has ${file.name}`,
        { file: file.name },
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        "checksum_mismatch",
        `${file.name} was changed after it was applied: recorded sha256 ${row.checksum}, file sha256 ${file.checksum}; ` +
          "add a new migration instead of editing an applied one",
        { file: file.name, expectedChecksum: row.checksum, actualChecksum: file.checksum },
      );
    }
  }
  const recordedVersions = new Set(recorded.map((r) => Number(r.version)));
  const pending = files.filter((f) => !recordedVersions.has(f.version));
  const late = pending.find((f) => f.version < highestApplied);
  if (late) {
    // Applying it now would run it after later migrations it was not written against.
    throw new MigrationError(
      "out_of_order",
      `${late.name} is pending but version ${String(highestApplied).padStart(3, "0")} is already applied; renumber it above`,
      { file: late.name },
    );
  }
  return pending;
}

interface ServerError {
  code?: unknown;
  sqlMessage?: unknown;
  message?: unknown;
}

async function applyFile(conn: PoolConnection, file: MigrationFile): Promise<number> {
  const started = Date.now();
  for (const [i, statement] of file.statements.entries()) {
    try {
      await conn.query(statement.text);
    } catch (err) {
      const e = (err ?? {}) as ServerError;
      const serverMessage = String(e.sqlMessage ?? e.message ?? err);
      const serverCode = typeof e.code === "string" ? e.code : undefined;
      // MySQL commits DDL implicitly, so earlier statements of this file cannot be rolled back.
      const tookEffect = i === 0 ? "no statement of this file took effect" : `statements 1-${i} of this file already took effect`;
      throw new MigrationError(
        "statement_failed",
        `${file.name}: statement ${i + 1} (line ${statement.line}) failed: ${serverCode ? `${serverCode}: ` : ""}${serverMessage}; ` +
          `${tookEffect} and the file was not recorded`,
        { file: file.name, statementIndex: i + 1, statementLine: statement.line, serverCode, serverMessage },
      );
    }
  }
  const durationMs = Date.now() - started;
  await conn.query(
    "INSERT INTO schema_migrations (version, name, checksum, applied_at, statements, duration_ms) VALUES (?, ?, ?, UTC_TIMESTAMP(), ?, ?)",
    [file.version, file.name, file.checksum, file.statements.length, durationMs],
  );
  return durationMs;
}
