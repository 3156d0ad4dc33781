// Wiring only: config, MySQL (export jobs), the store and artifacts clients, the render threads, the
// stale-export sweep and the RPC handlers. Migrations are applied in ready().
import { hostname } from "node:os";
import { createMysqlPool } from "../../libs/db/pool.js";
import { ensureSchema } from "../../libs/db/schema-ready.js";
import { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { DanfseService } from "../../libs/gen/malha/danfse/v1/danfse_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { peerClient } from "../../libs/rpc/peers.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { danfseAccess } from "./access.js";
import { readDanfseConfig } from "./config.js";
import { ExportRepo } from "./export-repo.js";
import { createHandlers } from "./handlers.js";
import { createDanfseMetrics } from "./metrics.js";
import { createRenderer } from "./renderer.js";
import { startSweep } from "./sweep.js";

await runService("danfse", ({ env, log, metrics }) => {
  const config = readDanfseConfig(env);
  const danfseMetrics = createDanfseMetrics(metrics.registry);
  const storePeer = peerClient(env, "store", StoreService);
  const artifactsPeer = peerClient(env, "artifacts", ArtifactsService);
  const pool = createMysqlPool(config.mysqlUrl, { connectionLimit: config.mysqlConnectionLimit });
  const repo = new ExportRepo(pool, `${hostname()}:${process.pid}`);
  const renderer = createRenderer({
    store: storePeer.client,
    threads: config.renderThreads,
    timeoutMs: config.renderTimeoutMs,
    threadHeap: { oldMb: config.renderThreadHeapMb, youngMb: Math.min(16, Math.floor(config.renderThreadHeapMb / 4)) },
    metrics: danfseMetrics,
  });
  const handlers = createHandlers({
    store: storePeer.client,
    artifacts: artifactsPeer.client,
    renderer,
    repo,
    log,
    exportMaxNotes: config.exportMaxNotes,
    exportConcurrency: config.exportConcurrency,
    exportTtlMs: config.exportTtlMs,
    linkTtlMs: config.linkTtlMs,
    heartbeatMs: config.heartbeatMs,
    exportTimeoutMs: config.exportTimeoutMs,
    metrics: danfseMetrics,
  });
  let sweep: { stop(): void } | undefined;
  return {
    services: [serve(DanfseService, handlers.impl, danfseAccess)],
    async ready() {
      await ensureSchema(pool, config, log);
      sweep = startSweep({
        repo,
        log,
        intervalMs: config.heartbeatMs,
        staleMs: config.exportStaleMs,
        keepMs: config.exportTtlMs,
        onInterrupted: (n) => danfseMetrics.exports.inc({ state: "interrupted" }, n),
      });
      log.info({ renderThreads: config.renderThreads, exportMaxNotes: config.exportMaxNotes }, "danfse ready");
    },
    async close() {
      sweep?.stop();
      await handlers.interruptRunning().catch((err: unknown) => log.warn({ err }, "could not mark running exports interrupted"));
      await renderer.close();
      await pool.end();
      storePeer.close();
      artifactsPeer.close();
    },
  };
});
