import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { MigrationError } from "./migration-error.js";
import { SqlSplitError, splitSqlStatements } from "./sql-split.js";
import type { SqlStatement } from "./sql-split.js";

export const MIGRATION_FILE_PATTERN = /^\d{3}_[a-z0-9_]+\.sql$/;

export interface MigrationFile {
  version: number;
  /** File name, e.g. `001_create_nfse_tables.sql`; this is what schema_migrations records. */
  name: string;
  path: string;
  /** sha256 (hex) of the file's bytes. */
  checksum: string;
  statements: SqlStatement[];
}

function isMissing(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === "ENOENT";
}

/**
 * Reads and validates every `*.sql` file of a directory, sorted by version. Everything that can be wrong
 * with the files themselves is found here, before anything touches the database. Files not ending in
 * `.sql` (README, .gitkeep) are ignored; a `.sql` file with a bad name is refused rather than skipped, so
 * a typo cannot silently leave a migration out.
 */
export async function loadMigrationFiles(dir: string): Promise<MigrationFile[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (isMissing(err)) throw new MigrationError("no_directory", `migrations directory not found: ${dir}`);
    throw err;
  }
  const names = entries
    .filter((e) => (e.isFile() || e.isSymbolicLink()) && e.name.toLowerCase().endsWith(".sql"))
    .map((e) => e.name)
    .sort();

  const files: MigrationFile[] = [];
  const byVersion = new Map<number, string>();
  for (const name of names) {
    if (!MIGRATION_FILE_PATTERN.test(name)) {
      throw new MigrationError("bad_name", `bad migration file name ${name}: expected NNN_lowercase_name.sql`, {
        file: name,
      });
    }
    const version = Number(name.slice(0, 3));
    const clash = byVersion.get(version);
    if (clash !== undefined) {
      throw new MigrationError("duplicate_version", `duplicate migration version ${name.slice(0, 3)}: ${clash} and ${name}`, {
        file: name,
      });
    }
    byVersion.set(version, name);

    const path = join(dir, name);
    const bytes = await readFile(path);
    const checksum = createHash("sha256").update(bytes).digest("hex");
    let statements: SqlStatement[];
    try {
      statements = splitSqlStatements(bytes.toString("utf8"));
    } catch (err) {
      if (err instanceof SqlSplitError) {
        throw new MigrationError("syntax", `${name}: ${err.message}`, { file: name, statementLine: err.line });
      }
      throw err;
    }
    if (statements.length === 0) {
      throw new MigrationError("empty_file", `${name} contains no SQL statement`, { file: name });
    }
    files.push({ version, name, path, checksum, statements });
  }
  return files.sort((a, b) => a.version - b.version);
}
