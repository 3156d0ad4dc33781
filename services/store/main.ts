// Wiring only. The store owns MySQL: it applies migrations before it reports SERVING, then serves the
// municipality, sync-cursor, run-log and query RPCs (services/store/handlers).
import { createMysqlPool } from "../../libs/db/pool.js";
import { countTransactionRetries } from "../../libs/db/tx-metrics.js";
import { ensureSchema } from "../../libs/db/schema-ready.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { storeAccess } from "./access.js";
import { readStoreConfig } from "./config.js";
import { createStoreDb, fitStatementBudget, STORE_POOL } from "./db.js";
import { createStoreHandlers } from "./handlers/index.js";
import { createStoreMetrics } from "./metrics.js";
import { createPageDecoder } from "./page-decoder.js";
import { alignMunicipalityTables } from "./repo/table-shape.js";

/** A page decodes in milliseconds; one that takes a minute is a stuck thread (it is replaced). */
const DECODE_TIMEOUT_MS = 60_000;

await runService("store", ({ env, log, metrics: serviceMetrics }) => {
  const config = readStoreConfig(env);
  const metrics = createStoreMetrics(serviceMetrics.registry);
  // The store prepares no statement, so its pool sizes no statement cache (docs/decisions/0035-one-statement-per-step-in-apply-batch.md).
  const pool = createMysqlPool(config.mysqlUrl, { ...STORE_POOL, connectionLimit: config.mysqlConnectionLimit });
  countTransactionRetries(pool, serviceMetrics.registry);
  const db = createStoreDb(pool, config, log);
  const decoder = createPageDecoder({
    threads: config.decodeThreads,
    limits: config.decode,
    threadHeapMb: config.decodeThreadHeapMb,
    timeoutMs: DECODE_TIMEOUT_MS,
    pageTimer: metrics.pageDecode,
  });
  return {
    services: [serve(StoreService, createStoreHandlers(db, log, decoder, metrics), storeAccess)],
    async ready() {
      await ensureSchema(pool, config, log);
      // Always, not only with migrations on: the store creates these tables at run time, so it owns their shape.
      await alignMunicipalityTables(db, log);
      log.info({ statementBudgetBytes: await fitStatementBudget(db, config) }, "statement budget");
    },
    close: () => Promise.all([decoder.close(), pool.end()]).then(() => undefined),
  };
});
