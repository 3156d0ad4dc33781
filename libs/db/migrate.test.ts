import { createHash } from "node:crypto";
import { appendFile, cp, mkdtemp, readFile, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Pool, ResultSetHeader, RowDataPacket } from "mysql2/promise";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThrowawayDatabase } from "../../test/support/mysql.js";
import type { ThrowawayDatabase } from "../../test/support/mysql.js";
import { MIGRATION_LOCK_NAME, MigrationError, migrate } from "./migrate.js";

const MIGRATIONS = fileURLToPath(new URL("../../migrations", import.meta.url));
const TIMEOUT = { timeout: 60_000 };

const SHARED_TABLES = [
  "certificates",
  "municipalities",
  "nfse_confirmed_holes",
  "nfse_cursor_resets",
  "nfse_documentos_template",
  "nfse_eventos_template",
  "nfse_quarantine",
  "nfse_sync_runs",
  "nfse_sync_state",
  "schema_migrations",
];

async function tables(pool: Pool): Promise<string[]> {
  const [rows] = await pool.query<RowDataPacket[]>(
    "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() ORDER BY table_name",
  );
  return rows.map((r) => String(r["name"]));
}

async function recorded(pool: Pool): Promise<RowDataPacket[]> {
  const [rows] = await pool.query<RowDataPacket[]>("SELECT * FROM schema_migrations ORDER BY version");
  return rows;
}

async function migrationFiles(): Promise<string[]> {
  return (await readdir(MIGRATIONS)).filter((n) => n.endsWith(".sql")).sort();
}

/** Asserts that `promise` rejects with a MigrationError and returns it. */
async function refusal(promise: Promise<unknown>): Promise<MigrationError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(MigrationError);
  return err as MigrationError;
}

describe("migrate (real MariaDB)", () => {
  let db: ThrowawayDatabase;
  let dir: string;

  beforeEach(async () => {
    db = await createThrowawayDatabase();
    dir = await mkdtemp(join(tmpdir(), "malha-migrations-"));
    await cp(MIGRATIONS, dir, { recursive: true });
  });
  afterEach(async () => {
    await db.drop();
    await rm(dir, { recursive: true, force: true });
  });

  it("applies migrations/ to an empty database and records each file", TIMEOUT, async () => {
    const files = await migrationFiles();
    const logged: string[] = [];
    const result = await migrate(db.pool, MIGRATIONS, { log: (line) => logged.push(line) });

    expect(result).toEqual({ applied: files, alreadyApplied: [] });
    expect(logged).toHaveLength(files.length);
    expect(logged[0]).toMatch(/^applied 001_create_nfse_tables\.sql: \d+ statement\(s\) in \d+ ms$/);
    expect(await tables(db.pool)).toEqual(expect.arrayContaining(SHARED_TABLES));

    const rows = await recorded(db.pool);
    expect(rows.map((r) => r["name"])).toEqual(files);
    const first = rows[0] as RowDataPacket;
    const bytes = await readFile(join(MIGRATIONS, "001_create_nfse_tables.sql"));
    expect(first["version"]).toBe(1);
    expect(first["checksum"]).toBe(createHash("sha256").update(bytes).digest("hex"));
    expect(first["statements"]).toBe(9);
    expect(Math.abs((first["applied_at"] as Date).getTime() - Date.now())).toBeLessThan(60_000);

    // Every table is InnoDB, utf8mb4_unicode_ci by default, and COMPACT like the 5.6 target.
    const [meta] = await db.pool.query<RowDataPacket[]>(
      "SELECT table_name, engine, table_collation, row_format FROM information_schema.tables WHERE table_schema = DATABASE()",
    );
    for (const t of meta) {
      expect([t["table_name"], t["engine"], t["table_collation"], t["row_format"]]).toEqual([
        t["table_name"],
        "InnoDB",
        "utf8mb4_unicode_ci",
        "Compact",
      ]);
    }
  });

  it("creates per-municipality tables from the templates with CREATE TABLE … LIKE, indexes included", TIMEOUT, async () => {
    await migrate(db.pool, MIGRATIONS);
    await db.pool.query("CREATE TABLE nfse_documentos_3550308 LIKE nfse_documentos_template");
    await db.pool.query("CREATE TABLE nfse_eventos_3550308 LIKE nfse_eventos_template");

    const indexes = async (table: string): Promise<string[]> => {
      const [rows] = await db.pool.query<RowDataPacket[]>(
        "SELECT index_name, non_unique, GROUP_CONCAT(column_name ORDER BY seq_in_index) AS cols " +
          "FROM information_schema.statistics WHERE table_schema = DATABASE() AND table_name = ? GROUP BY index_name, non_unique ORDER BY index_name",
        [table],
      );
      return rows.map((r) => `${r["index_name"]}:${r["non_unique"]}:${r["cols"]}`);
    };
    expect(await indexes("nfse_documentos_3550308")).toEqual(await indexes("nfse_documentos_template"));
    expect(await indexes("nfse_documentos_3550308")).toEqual(
      expect.arrayContaining([
        "uq_chave:0:chave",
        "uq_feed_nsu:0:ambiente,tipo_nsu,nsu",
        "ix_prestador:1:prestador_documento,data_emissao",
      ]),
    );
    expect(await indexes("nfse_eventos_3550308")).toEqual(expect.arrayContaining(["uq_id_evento:0:id_evento"]));

    // The upsert pattern of the store: a re-applied document keeps its row and reports its id.
    const chave = "35503082211222333000181000000000004226031234567893";
    const upsert =
      "INSERT INTO nfse_documentos_3550308 (chave, ambiente, tipo_nsu, nsu, prestador_nome, valor_servico, xml, xml_sha256) " +
      "VALUES (?, 2, 'DISTRIBUICAO', ?, ?, 100000, ?, ?) " +
      "ON DUPLICATE KEY UPDATE id = LAST_INSERT_ID(id), prestador_nome = VALUES(prestador_nome)";
    const xml = Buffer.from('<NFSe versao="1.01">ç</NFSe>');
    const sha = createHash("sha256").update(xml).digest("hex");
    const [a] = await db.pool.execute<ResultSetHeader>(upsert, [chave, "1201", "PRESTADORA ÇÃO", xml, sha]);
    const [b] = await db.pool.execute<ResultSetHeader>(upsert, [chave, "1201", "PRESTADORA ÇÃO", xml, sha]);
    expect(b.insertId).toBe(a.insertId);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT nsu, xml FROM nfse_documentos_3550308");
    expect(rows).toHaveLength(1);
    expect(rows[0]?.["nsu"]).toBe("1201");
    expect(Buffer.compare(rows[0]?.["xml"] as Buffer, xml)).toBe(0);
  });

  it("is a no-op the second time", TIMEOUT, async () => {
    const files = await migrationFiles();
    await migrate(db.pool, dir);
    const before = await recorded(db.pool);
    const again = await migrate(db.pool, dir);
    expect(again).toEqual({ applied: [], alreadyApplied: files });
    expect(await recorded(db.pool)).toEqual(before);
  });

  it("refuses an edited applied file, naming it and both checksums, and applies nothing else", TIMEOUT, async () => {
    await migrate(db.pool, dir);
    const file = join(dir, "001_create_nfse_tables.sql");
    const original = createHash("sha256")
      .update(await readFile(file))
      .digest("hex");
    await appendFile(file, "\n-- an innocent-looking edit\n");
    const edited = createHash("sha256")
      .update(await readFile(file))
      .digest("hex");
    await writeFile(join(dir, "900_later.sql"), "CREATE TABLE later_table (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;\n");

    const err = await refusal(migrate(db.pool, dir));
    expect(err.kind).toBe("checksum_mismatch");
    expect(err.file).toBe("001_create_nfse_tables.sql");
    expect([err.expectedChecksum, err.actualChecksum]).toEqual([original, edited]);
    expect(err.message).toContain("001_create_nfse_tables.sql");
    expect(err.message).toContain(original);
    expect(err.message).toContain(edited);
    expect(await tables(db.pool)).not.toContain("later_table");
    expect((await recorded(db.pool)).map((r) => r["name"])).not.toContain("900_later.sql");
  });

  it("refuses when an applied file is missing from the directory", TIMEOUT, async () => {
    await writeFile(join(dir, "900_extra.sql"), "CREATE TABLE extra (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;\n");
    await migrate(db.pool, dir);
    await rm(join(dir, "900_extra.sql"));
    const err = await refusal(migrate(db.pool, dir));
    expect(err.kind).toBe("missing_file");
    expect(err.message).toContain("900_extra.sql");
  });

  it("refuses bad file names and duplicate versions before touching the database", TIMEOUT, async () => {
    await writeFile(join(dir, "2_short.sql"), "SELECT 1;\n");
    expect((await refusal(migrate(db.pool, dir))).kind).toBe("bad_name");
    await rm(join(dir, "2_short.sql"));
    await writeFile(join(dir, "002_Upper.sql"), "SELECT 1;\n");
    expect((await refusal(migrate(db.pool, dir))).kind).toBe("bad_name");
    await rm(join(dir, "002_Upper.sql"));
    await writeFile(join(dir, "001_another.sql"), "SELECT 1;\n");
    const err = await refusal(migrate(db.pool, dir));
    expect(err.kind).toBe("duplicate_version");
    expect(err.message).toContain("001_another.sql");
    expect(err.message).toContain("001_create_nfse_tables.sql");
    expect(await tables(db.pool)).toEqual([]);
    // A README or other non-.sql file is not a migration and is ignored.
    await rm(join(dir, "001_another.sql"));
    await writeFile(join(dir, "README.md"), "# notes\n");
    await migrate(db.pool, dir);
  });

  it("refuses a pending file numbered below an applied one", TIMEOUT, async () => {
    await writeFile(join(dir, "900_last.sql"), "CREATE TABLE last_one (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;\n");
    await migrate(db.pool, dir);
    await writeFile(join(dir, "500_late.sql"), "CREATE TABLE late_one (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;\n");
    const err = await refusal(migrate(db.pool, dir));
    expect(err.kind).toBe("out_of_order");
    expect(err.message).toContain("500_late.sql");
    expect(await tables(db.pool)).not.toContain("late_one");
  });

  it("reports a failing statement with file, index, line and server message, and leaves the file unrecorded", TIMEOUT, async () => {
    await writeFile(
      join(dir, "900_broken.sql"),
      [
        "-- first statement works; MySQL auto-commits it",
        "CREATE TABLE broken_ok (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;",
        "",
        "CREATE TABLE broken_bad (",
        "  id INT NOT NULL,",
        "  PRIMARY KEY (no_such_column)",
        ") ENGINE=InnoDB;",
        "CREATE TABLE never_reached (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;",
      ].join("\n"),
    );
    const err = await refusal(migrate(db.pool, dir));
    expect(err.kind).toBe("statement_failed");
    expect(err.file).toBe("900_broken.sql");
    expect(err.statementIndex).toBe(2);
    expect(err.statementLine).toBe(4);
    expect(err.serverMessage).toMatch(/no_such_column/);
    expect(err.message).toMatch(
      /^900_broken\.sql: statement 2 \(line 4\) failed: .*no_such_column.*statements 1-1 of this file already took effect/,
    );
    expect(err.message).not.toContain("\n");

    const names = (await recorded(db.pool)).map((r) => r["name"]);
    expect(names).toEqual(await migrationFiles());
    const present = await tables(db.pool);
    expect(present).toContain("broken_ok");
    expect(present).not.toContain("never_reached");
  });

  it("sends statements whole when semicolons hide in strings and comments", TIMEOUT, async () => {
    await writeFile(
      join(dir, "900_tricky.sql"),
      "CREATE TABLE tricky (id INT NOT NULL, note VARCHAR(50) NOT NULL DEFAULT 'a;b' COMMENT 'x; y', PRIMARY KEY (id)) ENGINE=InnoDB; -- done; really\n" +
        "/* INSERT; */ INSERT INTO tricky (id, note) VALUES (1, 'it''s; fine'), (2, \"semi;colon\");\n",
    );
    await migrate(db.pool, dir);
    const [rows] = await db.pool.query<RowDataPacket[]>("SELECT note FROM tricky ORDER BY id");
    expect(rows.map((r) => r["note"])).toEqual(["it's; fine", "semi;colon"]);
    expect((await recorded(db.pool)).find((r) => r["name"] === "900_tricky.sql")?.["statements"]).toBe(2);
  });

  it("lets concurrent runners apply each file exactly once", TIMEOUT, async () => {
    // A slow file keeps the lock held while the other runners queue on GET_LOCK.
    await writeFile(
      join(dir, "900_slow.sql"),
      "DO SLEEP(0.5);\nCREATE TABLE slow_one (id INT NOT NULL, PRIMARY KEY (id)) ENGINE=InnoDB;\n",
    );
    const files = (await readdir(dir)).filter((n) => n.endsWith(".sql")).sort();
    const runners = [db.newPool(), db.newPool(), db.newPool(), db.newPool()];
    const results = await Promise.all(runners.map((pool) => migrate(pool, dir)));

    const applied = results.flatMap((r) => r.applied);
    expect(applied.sort()).toEqual(files);
    for (const r of results) expect([...r.applied, ...r.alreadyApplied].sort()).toEqual(files);
    expect(results.filter((r) => r.applied.length > 0)).toHaveLength(1);
    expect((await recorded(db.pool)).map((r) => r["name"])).toEqual(files);
  });

  it("gives up with lock_timeout when another runner holds the lock too long", TIMEOUT, async () => {
    const holder = await db.newPool({ connectionLimit: 1 }).getConnection();
    try {
      await holder.query("SELECT GET_LOCK(?, 5)", [MIGRATION_LOCK_NAME]);
      const err = await refusal(migrate(db.pool, dir, { lockTimeoutSeconds: 1 }));
      expect(err.kind).toBe("lock_timeout");
      expect(await tables(db.pool)).toEqual([]);
    } finally {
      await holder.query("SELECT RELEASE_LOCK(?)", [MIGRATION_LOCK_NAME]);
      holder.release();
    }
  });
});
