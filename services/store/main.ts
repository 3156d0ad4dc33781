// Wiring only. The store owns MySQL: it applies migrations before it reports SERVING. Its RPCs
// (cursor, batches, queries) arrive with the store issue; until then they answer UNIMPLEMENTED.
import { createMysqlPool } from "../../libs/db/pool.js";
import { migrate } from "../../libs/db/migrate.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { readStoreConfig } from "./config.js";

await runService("store", ({ env, log }) => {
  const config = readStoreConfig(env);
  const pool = createMysqlPool(config.mysqlUrl, { connectionLimit: config.mysqlConnectionLimit });
  return {
    services: [serve(StoreService, {})],
    async ready() {
      if (!config.migrateOnStart) {
        await pool.query("SELECT 1");
        return;
      }
      const result = await migrate(pool, config.migrationsDir, { log: (line) => log.info(line) });
      log.info({ applied: result.applied.length, alreadyApplied: result.alreadyApplied.length }, "schema up to date");
    },
    close: () => pool.end(),
  };
});
