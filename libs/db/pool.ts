import { createPool } from "mysql2";
import type { Pool } from "mysql2/promise";
import type { SslOptions } from "mysql2";
import { formatQuery, POOL_TIMEZONE } from "./sql-text.js";

export const MYSQL_URL_FORMAT = "mysql://user:pass@host:port/db";

export interface MysqlUrlParts {
  host: string;
  port: number;
  user: string;
  password: string;
  database: string;
}

export class MysqlUrlError extends Error {
  override name = "MysqlUrlError";
}

/**
 * Parses `mysql://user:pass@host:port/db`. Query parameters are refused because mysql2 would turn them
 * into connection options (e.g. `?multipleStatements=true`), bypassing the settings below. Error messages
 * never repeat the URL, which carries the password.
 */
export function parseMysqlUrl(url: string): MysqlUrlParts {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new MysqlUrlError(`not a URL (expected ${MYSQL_URL_FORMAT})`);
  }
  if (parsed.protocol !== "mysql:") throw new MysqlUrlError(`scheme must be mysql: (expected ${MYSQL_URL_FORMAT})`);
  if (parsed.hostname === "") throw new MysqlUrlError(`host is missing (expected ${MYSQL_URL_FORMAT})`);
  if (parsed.search !== "") throw new MysqlUrlError("query parameters are not supported; pass options in code");
  const database = decodeURIComponent(parsed.pathname.replace(/^\//, ""));
  if (database === "" || database.includes("/")) {
    throw new MysqlUrlError(`database name is missing (expected ${MYSQL_URL_FORMAT})`);
  }
  const user = decodeURIComponent(parsed.username);
  if (user === "") throw new MysqlUrlError(`user is missing (expected ${MYSQL_URL_FORMAT})`);
  const port = parsed.port === "" ? 3306 : Number(parsed.port);
  const host = parsed.hostname.startsWith("[") ? parsed.hostname.slice(1, -1) : parsed.hostname;
  return { host, port, user, password: decodeURIComponent(parsed.password), database };
}

/** The same server and credentials with another database, e.g. for a throwaway test database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export interface MysqlPoolOptions {
  /** Maximum open connections (default 10). Size it to the service's concurrent transactions. */
  connectionLimit?: number;
  /** Idle connections kept open (default: connectionLimit). */
  maxIdle?: number;
  /** Milliseconds before an idle connection above maxIdle is closed (default 60 000). */
  idleTimeoutMs?: number;
  /** Requests allowed to wait for a connection; 0 means unbounded (default 0). */
  queueLimit?: number;
  /** Milliseconds allowed for the TCP connect and handshake (default 10 000). */
  connectTimeoutMs?: number;
  /**
   * Prepared statements (`execute`) each connection keeps; the least recently used is closed beyond it
   * (default: mysql2's 16 000). They all count against the server-wide max_prepared_stmt_count
   * (16 382 by default, shared by every client), so a pool that prepares many texts should set it.
   */
  maxPreparedStatements?: number;
  /**
   * Lets one COM_QUERY carry several statements (libs/db/statement-bytes.ts `queryStatements`). Off by
   * default: only a pool whose every statement is built from escaped values and checked identifiers may
   * turn it on (docs/decisions/0059-a-page-s-writes-in-one-round-trip.md).
   */
  multipleStatements?: boolean;
  ssl?: SslOptions;
}

// Every DATETIME column holds UTC. mysql2's `timezone: 'Z'` only covers how JS Dates are sent and read;
// the session zone additionally makes NOW()/CURRENT_TIMESTAMP defaults UTC whatever the server's zone.
// Every literal we and mysql2 write escapes quotes with a backslash (sql-text.ts, binary-literal.ts): a
// server whose sql_mode has NO_BACKSLASH_ESCAPES would read them otherwise, so the session drops that
// one mode and keeps the rest of the server's.
export const SESSION_SETUP =
  "SET time_zone = '+00:00', sql_mode = TRIM(BOTH ',' FROM REPLACE(CONCAT(',', @@SESSION.sql_mode, ','), ',NO_BACKSLASH_ESCAPES,', ','))";

export function createMysqlPool(url: string, options: MysqlPoolOptions = {}): Pool {
  const parts = parseMysqlUrl(url);
  const core = createPool({
    ...parts,
    charset: "utf8mb4_unicode_ci",
    timezone: POOL_TIMEZONE,
    queryFormat: formatQuery,
    // BIGINT UNSIGNED (NSU, ids) can exceed 2^53: always hand them over as strings, never as lossy numbers.
    supportBigNumbers: true,
    bigNumberStrings: true,
    // mysql2 adds IGNORE_SPACE to the session sql_mode by default; keep the server's exact 5.6-like mode.
    flags: ["-IGNORE_SPACE"],
    multipleStatements: options.multipleStatements ?? false,
    // mysql2's promise API captures the caller's stack (Error.captureStackTrace) on every query, for
    // errors nobody prints a stack of: ≈ 4 % of the store's CPU during a sync (docs/decisions/0006-mysql2-trace-off.md).
    trace: false,
    connectionLimit: options.connectionLimit ?? 10,
    maxIdle: options.maxIdle ?? options.connectionLimit ?? 10,
    idleTimeout: options.idleTimeoutMs ?? 60_000,
    queueLimit: options.queueLimit ?? 0,
    connectTimeout: options.connectTimeoutMs ?? 10_000,
    waitForConnections: true,
    enableKeepAlive: true,
    ...(options.maxPreparedStatements !== undefined ? { maxPreparedStatements: options.maxPreparedStatements } : {}),
    ...(options.ssl ? { ssl: options.ssl } : {}),
  });
  // The pool emits "connection" before handing a new connection to its first user, and a connection runs
  // its commands in order, so this SET always precedes the first real query.
  core.on("connection", (connection) => {
    connection.query(SESSION_SETUP, (err) => {
      if (err) connection.destroy();
    });
  });
  return core.promise();
}
