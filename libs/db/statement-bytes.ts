// A statement sent as bytes the caller wrote, not as text mysql2 encodes: mysql2's COM_QUERY packet is
// extended here to take a Buffer as it stands (one copy into the packet), so the store's multi-row upserts
// skip building a string of hundreds of KB, measuring it and encoding it again
// (docs/decisions/0057-statements-sent-as-bytes.md). Text statements go through mysql2 unchanged.
// mysql2 exports neither its packet classes nor its constants; they are loaded from its files by path,
// the same modules its own index loads, and the extension refuses to load if their shape changed.
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { PoolConnection, ResultSetHeader } from "mysql2/promise";

const require = createRequire(import.meta.url);
const mysql2Root = dirname(require.resolve("mysql2"));

interface QueryPacketShape {
  query: unknown;
  clientFlags: number;
  attributes?: Record<string, unknown>;
}
interface QueryPacketClass {
  prototype: { toPacket(this: QueryPacketShape): unknown };
}
type PacketClass = new (id: number, buffer: Buffer, start: number, end: number) => { offset: number };

const QueryPacket = require(join(mysql2Root, "lib/packets/query.js")) as QueryPacketClass;
const Packet = require(join(mysql2Root, "lib/packets/packet.js")) as PacketClass;
const { QUERY: COM_QUERY } = require(join(mysql2Root, "lib/constants/commands.js")) as { QUERY: number };
const { CLIENT_QUERY_ATTRIBUTES } = require(join(mysql2Root, "lib/constants/client.js")) as { CLIENT_QUERY_ATTRIBUTES: number };

if (
  typeof QueryPacket?.prototype?.toPacket !== "function" ||
  typeof Packet !== "function" ||
  COM_QUERY !== 0x03 ||
  !CLIENT_QUERY_ATTRIBUTES
) {
  throw new Error("statement-bytes: mysql2's COM_QUERY packet is not where this module expects it (see its decision 0057)");
}

const textToPacket = QueryPacket.prototype.toPacket;
QueryPacket.prototype.toPacket = function toPacket(this: QueryPacketShape) {
  const statement = this.query;
  if (!Buffer.isBuffer(statement)) return textToPacket.call(this);
  if (this.attributes && Object.keys(this.attributes).length > 0) throw new Error("statement-bytes: query attributes are not supported");
  // 4 bytes of packet header (mysql2 writes them), the command, and with query attributes their two counts.
  const headerLength = this.clientFlags & CLIENT_QUERY_ATTRIBUTES ? 7 : 5;
  const length = headerLength + statement.length;
  const buffer = Buffer.allocUnsafe(length);
  buffer[4] = COM_QUERY;
  if (headerLength === 7) {
    buffer[5] = 0; // parameter_count
    buffer[6] = 1; // parameter_set_count
  }
  statement.copy(buffer, headerLength);
  const packet = new Packet(0, buffer, 0, length);
  packet.offset = length;
  return packet;
};

/** How a statement sent as bytes is named in an error: its start, not hundreds of KB of it. */
const SHOWN_BYTES = 200;

const SEPARATOR = Buffer.from(";");

/**
 * Runs `statements` in order on `conn` in as few round trips as `budgetBytes` allows: consecutive
 * statements joined by `;` into one COM_QUERY of at most that many bytes (a larger statement goes alone).
 * The connection's pool must allow multiple statements (pool.ts `multipleStatements`). The server stops
 * at the first statement that fails, and that error is thrown: the caller's transaction rolls back as it
 * would have after the same statement sent alone. One result per statement, in order
 * (docs/decisions/0059-a-page-s-writes-in-one-round-trip.md).
 */
export async function queryStatements(
  conn: PoolConnection,
  statements: readonly Buffer[],
  budgetBytes: number,
): Promise<ResultSetHeader[]> {
  if (
    statements.length > 1 &&
    !(conn as unknown as { connection?: { config?: { multipleStatements?: boolean } } }).connection?.config?.multipleStatements
  ) {
    throw new Error("statement-bytes: queryStatements needs a pool created with multipleStatements");
  }
  const results: ResultSetHeader[] = [];
  let group: Buffer[] = [];
  let bytes = 0;
  const flush = async () => {
    if (group.length === 0) return;
    const parts = group.flatMap((s, i) => (i === 0 ? [s] : [SEPARATOR, s]));
    const result = await send(conn, group.length === 1 ? group[0]! : Buffer.concat(parts, bytes));
    const each = Array.isArray(result) ? result : [result];
    if (each.length !== group.length) throw new Error(`statement-bytes: ${group.length} statements gave ${each.length} results`);
    results.push(...each);
    group = [];
    bytes = 0;
  };
  for (const statement of statements) {
    if (group.length > 0 && bytes + SEPARATOR.length + statement.length > budgetBytes) await flush();
    bytes += (group.length > 0 ? SEPARATOR.length : 0) + statement.length;
    group.push(statement);
  }
  await flush();
  return results;
}

/**
 * Sends one COM_QUERY of `statement` on `conn`, a connection of a pool from pool.ts (whose query format sends
 * a statement without values as it is). An error keeps mysql2's code and message; its `sql` is the
 * statement's start.
 */
async function send(conn: PoolConnection, statement: Buffer): Promise<ResultSetHeader | ResultSetHeader[]> {
  try {
    const [result] = await conn.query<ResultSetHeader | ResultSetHeader[]>({ sql: statement as unknown as string });
    return result;
  } catch (err) {
    if (err instanceof Error && Buffer.isBuffer((err as { sql?: unknown }).sql)) {
      const shown = statement.subarray(0, SHOWN_BYTES).toString("utf8");
      (err as { sql?: unknown }).sql = statement.length > SHOWN_BYTES ? `${shown}… (${statement.length} bytes)` : shown;
    }
    throw err;
  }
}
