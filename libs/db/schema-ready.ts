import type { Pool } from "mysql2/promise";
import type { Logger } from "../log/logger.js";
import { migrate } from "./migrate.js";

export interface SchemaOptions {
  /** Apply pending migrations (serialised across replicas by a server lock); otherwise only check the connection. */
  migrateOnStart: boolean;
  migrationsDir: string;
}

/**
 * The readiness step every MySQL-backed service shares: bring the schema up to date, or at least prove
 * the database answers, before the service reports SERVING.
 */
export async function ensureSchema(pool: Pool, opts: SchemaOptions, log: Logger): Promise<void> {
  if (!opts.migrateOnStart) {
    await pool.query("SELECT 1");
    return;
  }
  const result = await migrate(pool, opts.migrationsDir, { log: (line) => log.info(line) });
  log.info({ applied: result.applied.length, alreadyApplied: result.alreadyApplied.length }, "schema up to date");
}
