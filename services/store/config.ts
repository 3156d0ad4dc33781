import { join } from "node:path";
import type { EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { MYSQL_URL_FORMAT, parseMysqlUrl } from "../../libs/db/pool.js";
import { readPageTokenSecret, type PageTokenSecret } from "../../libs/rpc/page-token.js";
import { threadsPerCpu } from "../../libs/worker-pool/index.js";
import type { PageDecodeLimits } from "./mapping/page-rows.js";

export interface StoreConfig {
  mysqlUrl: string;
  /** Apply pending migrations before reporting SERVING (replicas serialise on a server lock). */
  migrateOnStart: boolean;
  migrationsDir: string;
  mysqlConnectionLimit: number;
  /** Upper bound for one multi-row INSERT; the server's max_allowed_packet lowers it further. */
  maxStatementBytes: number;
  /** HMAC key of page tokens. Replicas behind one address must share it, or tokens fail across them. */
  pageTokenSecret: PageTokenSecret;
  /** Caps of the ADN entries ApplyBatch decodes (docs/decisions/0034-store-decodes-the-page.md). */
  decode: PageDecodeLimits;
  /** Threads decoding the pages' entries, off the event loop (docs/decisions/0038-store-decodes-in-worker-threads.md). */
  decodeThreads: number;
  /** V8 old-generation limit of each decode thread, MB. */
  decodeThreadHeapMb: number;
}

/**
 * One decode thread per two CPUs, at least one, at most 4: the event loop's SQL and the database want the
 * rest. On 2 cores one thread gave more documents per second than two, with less CPU and 40 MB less
 * (bench/README.md, docs/decisions/0038-store-decodes-in-worker-threads.md).
 */
export const defaultDecodeThreads = (): number => Math.max(1, Math.floor(threadsPerCpu(8) / 2));

/**
 * Room for a page of two entries at ADN_MAX_DECOMPRESSED_BYTES' default (8 MiB each, up to MAX_XML_NODES
 * elements): page-decoder.test.ts decodes one. Only what a page needs becomes resident.
 */
export const DEFAULT_DECODE_THREAD_HEAP_MB = 128;

export function readStoreConfig(env: EnvReader): StoreConfig {
  return {
    mysqlUrl: env.parse("MYSQL_URL", (url) => (parseMysqlUrl(url), url), { hint: MYSQL_URL_FORMAT }),
    migrateOnStart: env.bool("STORE_MIGRATE_ON_START", { default: true }),
    migrationsDir: env.string("MIGRATIONS_DIR", { default: join(projectRoot(), "migrations") }),
    mysqlConnectionLimit: env.int("MYSQL_CONNECTION_LIMIT", { default: 20, min: 1, max: 1000 }),
    maxStatementBytes: env.int("STORE_MAX_STATEMENT_BYTES", { default: 16 * 1024 * 1024, min: 16 * 1024, max: 1024 * 1024 * 1024 }),
    pageTokenSecret: readPageTokenSecret(env, "STORE_PAGE_TOKEN_SECRET"),
    decode: {
      // The gateway's variable and default: an entry decodes to the same item in either process.
      maxDecompressedBytes: env.int("ADN_MAX_DECOMPRESSED_BYTES", { default: 8 * 1024 * 1024, min: 1024, max: 256 * 1024 * 1024 }),
      // What the gateway's decoded pages were held to before the store decoded them (ADN_MAX_BATCH_BYTES).
      maxPageXmlBytes: env.int("STORE_MAX_PAGE_XML_BYTES", { default: 15 * 1024 * 1024, min: 1024, max: 256 * 1024 * 1024 }),
    },
    decodeThreads: env.int("STORE_DECODE_THREADS", { default: defaultDecodeThreads(), min: 1, max: 64 }),
    decodeThreadHeapMb: env.int("STORE_DECODE_THREAD_HEAP_MB", { default: DEFAULT_DECODE_THREAD_HEAP_MB, min: 32, max: 4096 }),
  };
}
