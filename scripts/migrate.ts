// Applies migrations/ (or the directory given) to the database in MYSQL_URL.
//   usage: tsx scripts/migrate.ts [dir]
// Exit codes: 0 done, 1 migration refused or failed, 2 bad configuration.
import { join } from "node:path";
import { projectRoot } from "../libs/config/paths.js";
import { MigrationError, migrate } from "../libs/db/migrate.js";
import { MYSQL_URL_FORMAT, MysqlUrlError, createMysqlPool, parseMysqlUrl } from "../libs/db/pool.js";

// Found the way the services find it (package.json and migrations/ side by side), so the same default
// works from source (scripts/) and compiled (dist/scripts/, the image and the systemd layout).
const DEFAULT_DIR = join(projectRoot(), "migrations");

function describe(err: unknown): string {
  if (err instanceof Error) {
    // Connection failures can be AggregateErrors with an empty message (one error per address tried).
    const inner = err instanceof AggregateError ? (err.errors[0] as Error | undefined) : undefined;
    const code = (err as { code?: unknown }).code;
    const text = err.message || inner?.message || (typeof code === "string" ? code : err.name);
    return text.replace(/\s+/g, " ").trim();
  }
  return String(err);
}

async function main(): Promise<number> {
  const url = process.env["MYSQL_URL"];
  if (url === undefined || url.trim() === "") {
    process.stderr.write(`config error: MYSQL_URL is required (${MYSQL_URL_FORMAT})\n`);
    return 2;
  }
  try {
    parseMysqlUrl(url);
  } catch (err) {
    if (err instanceof MysqlUrlError) {
      process.stderr.write(`config error: MYSQL_URL is invalid: ${err.message}\n`);
      return 2;
    }
    throw err;
  }
  const dir = process.argv[2] ?? DEFAULT_DIR;
  const pool = createMysqlPool(url, { connectionLimit: 1 });
  try {
    const { applied, alreadyApplied } = await migrate(pool, dir, { log: (line) => process.stdout.write(`${line}\n`) });
    process.stdout.write(`migrations: ${applied.length} applied, ${alreadyApplied.length} already applied\n`);
    return 0;
  } catch (err) {
    process.stderr.write(err instanceof MigrationError ? `migration error: ${err.message}\n` : `migration failed: ${describe(err)}\n`);
    return 1;
  } finally {
    await pool.end().catch(() => undefined);
  }
}

process.exitCode = await main();
