// Wiring only: config, disk backend, MySQL metadata, gRPC handlers, the signed-link HTTP server and the
// retention sweep. Migrations are applied in ready() (serialised by a server lock with the store and other
// replicas), and the HTTP server and sweep start only after them.
import { createMysqlPool } from "../../libs/db/pool.js";
import { ensureSchema } from "../../libs/db/schema-ready.js";
import { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { servicePageTokens } from "../../libs/rpc/page-token.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { artifactsAccess } from "./access.js";
import { readArtifactsConfig } from "./config.js";
import { ARTIFACTS_ERROR_DOMAIN } from "./errors.js";
import { createHandlers } from "./handlers.js";
import { startDownloadServer, type DownloadServer } from "./http.js";
import { LinkSigner } from "./links.js";
import { createArtifactsMetrics } from "./metrics.js";
import { ArtifactMetadataStore } from "./metadata.js";
import { DiskBlobStore } from "./storage/disk.js";
import { startSweeper, type Sweeper } from "./sweep.js";

await runService("artifacts", async ({ env, log, metrics }) => {
  const config = readArtifactsConfig(env);
  const blobs = await DiskBlobStore.open(config.dir);
  const pool = createMysqlPool(config.mysqlUrl, { connectionLimit: config.mysqlConnectionLimit });
  const meta = new ArtifactMetadataStore(pool);
  const signer = new LinkSigner(config.linkSecret);
  let http: DownloadServer | undefined;
  let sweeper: Sweeper | undefined;
  // Without ARTIFACT_PUBLIC_BASE_URL, links point at this host: fine locally, set it in any deployment.
  const host = config.httpHost === "0.0.0.0" || config.httpHost === "::" ? "127.0.0.1" : config.httpHost;
  const localHost = host.includes(":") ? `[${host}]` : host;
  const linkBaseUrl = () => config.publicBaseUrl ?? `http://${localHost}:${http?.port ?? config.httpPort}`;

  return {
    services: [
      serve(
        ArtifactsService,
        createHandlers({
          blobs,
          meta,
          signer,
          maxBytes: config.maxBytes,
          defaultTtlMs: config.defaultTtlMs,
          pageTokens: servicePageTokens(config.pageTokenSecret, ARTIFACTS_ERROR_DOMAIN, log),
          linkBaseUrl,
          metrics: createArtifactsMetrics(metrics.registry),
        }),
        artifactsAccess,
      ),
    ],
    async ready() {
      await ensureSchema(pool, config, log);
      http = await startDownloadServer({ signer, meta, blobs, log }, config.httpHost, config.httpPort);
      log.info({ httpPort: http.port, dir: blobs.root }, "download server listening");
      sweeper = startSweeper({ meta, blobs, staleTempMs: config.staleTempMs }, config.sweepIntervalMs, config.orphanScanMs, log);
    },
    async close() {
      await sweeper?.stop();
      await http?.close();
      await pool.end();
    },
  };
});
