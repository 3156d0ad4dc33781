import { execFile } from "node:child_process";
import { appendFile, cp, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createThrowawayDatabase } from "../test/support/mysql.js";
import type { ThrowawayDatabase } from "../test/support/mysql.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SCRIPT = join(ROOT, "scripts/migrate.ts");

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = { ...process.env };
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete childEnv[k];
    else childEnv[k] = v;
  }
  return new Promise((resolve) => {
    execFile(process.execPath, ["--import", "tsx", SCRIPT, ...args], { cwd: ROOT, env: childEnv }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === "number" ? err.code : 1) : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const lines = (text: string): string[] => text.split("\n").filter((l) => l !== "");

describe("scripts/migrate.ts", () => {
  it("exits 2 with one line when MYSQL_URL is missing or invalid, never echoing it", { timeout: 30_000 }, async () => {
    const missing = await run([], { MYSQL_URL: undefined });
    expect(missing.code).toBe(2);
    expect(lines(missing.stderr)).toEqual(["config error: MYSQL_URL is required (mysql://user:pass@host:port/db)"]);

    const invalid = await run([], { MYSQL_URL: "postgres://u:hunter2@h/db" });
    expect(invalid.code).toBe(2);
    expect(lines(invalid.stderr)).toHaveLength(1);
    expect(invalid.stderr).toMatch(/^config error: MYSQL_URL is invalid: /);
    expect(invalid.stderr).not.toContain("hunter2");
  });

  describe("against a throwaway database", () => {
    let db: ThrowawayDatabase;
    let dir: string;
    beforeEach(async () => {
      db = await createThrowawayDatabase();
      dir = await mkdtemp(join(tmpdir(), "malha-migrate-cli-"));
      await cp(join(ROOT, "migrations"), dir, { recursive: true });
    });
    afterEach(async () => {
      await db.drop();
      await rm(dir, { recursive: true, force: true });
    });

    it("applies migrations/ by default, one line per file plus a summary, then reports a no-op", { timeout: 60_000 }, async () => {
      const first = await run([], { MYSQL_URL: db.url });
      expect(first.stderr).toBe("");
      expect(first.code).toBe(0);
      const out = lines(first.stdout);
      expect(out[0]).toMatch(/^applied 001_create_nfse_tables\.sql: \d+ statement\(s\) in \d+ ms$/);
      expect(out.at(-1)).toMatch(/^migrations: \d+ applied, 0 already applied$/);

      const second = await run([], { MYSQL_URL: db.url });
      expect(second.code).toBe(0);
      expect(lines(second.stdout)).toEqual([expect.stringMatching(/^migrations: 0 applied, \d+ already applied$/)]);
    });

    it("exits 1 with one line and no stack trace when a migration is refused", { timeout: 60_000 }, async () => {
      expect((await run([dir], { MYSQL_URL: db.url })).code).toBe(0);
      await appendFile(join(dir, "001_create_nfse_tables.sql"), "-- edited\n");
      const refused = await run([dir], { MYSQL_URL: db.url });
      expect(refused.code).toBe(1);
      expect(lines(refused.stderr)).toEqual([
        expect.stringMatching(/^migration error: 001_create_nfse_tables\.sql was changed after it was applied: /),
      ]);
      expect(refused.stderr).not.toMatch(/\n\s+at /);
    });

    it("exits 1 with the failing statement when a later file breaks", { timeout: 60_000 }, async () => {
      await writeFile(join(dir, "900_bad.sql"), "SELECT 1;\nSELEC oops;\n");
      const failed = await run([dir], { MYSQL_URL: db.url });
      expect(failed.code).toBe(1);
      expect(lines(failed.stderr)).toEqual([
        expect.stringMatching(/^migration error: 900_bad\.sql: statement 2 \(line 2\) failed: ER_PARSE_ERROR: /),
      ]);
      expect(lines(failed.stdout)[0]).toMatch(/^applied 001_create_nfse_tables\.sql/);
    });
  });

  it("exits 1 with one line when the server cannot be reached", { timeout: 30_000 }, async () => {
    const down = await run([], { MYSQL_URL: "mysql://malha:secret@127.0.0.1:1/malha" });
    expect(down.code).toBe(1);
    expect(lines(down.stderr)).toEqual([expect.stringMatching(/^migration failed: .*ECONNREFUSED/)]);
    expect(down.stderr).not.toContain("secret");
  });
});
