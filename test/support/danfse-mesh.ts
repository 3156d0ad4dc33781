// The DANFSe path as separate processes on real sockets: the NFS-e sync mesh (simulator, store, gateway,
// a coordinator) synced to the end, then the artifacts service on a temporary directory and a danfse
// process reading the store — on the same throwaway database.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { DanfseService } from "../../libs/gen/malha/danfse/v1/danfse_pb.js";
import { startNfseMesh, type NfseMesh } from "./nfse-mesh.js";
import { startService, type ServiceProcess } from "./service-process.js";
import { until } from "./sync-checks.js";

export interface DanfseMesh {
  nfse: NfseMesh;
  artifacts: ServiceProcess;
  danfse: ServiceProcess;
  client: Client<typeof DanfseService>;
  /** Every stored note of a municipality, as the store lists it (chave and dCompet as YYYY-MM-DD). */
  notes(ibge: string): Promise<{ chave: string; competencia: string }[]>;
  startDanfse(extraEnv?: Record<string, string>): Promise<ServiceProcess>;
  stop(): Promise<void>;
}

export async function startDanfseMesh(
  opts: {
    municipalities?: number;
    feedSize?: number;
    danfseEnv?: Record<string, string>;
    /** Run every service compiled from dist/ (after `npm run build`), as deployed (benchmarks). */
    compiled?: boolean;
  } = {},
): Promise<DanfseMesh> {
  const compiled = opts.compiled ?? false;
  const nfse = await startNfseMesh({ municipalities: opts.municipalities ?? 2, feedSize: opts.feedSize ?? 40, coordinators: 1, compiled });
  const dir = mkdtempSync(join(tmpdir(), "malha-danfse-"));
  const processes: ServiceProcess[] = [];
  try {
    await nfse.registerAll();
    // The sync runs while the other two start: they only need the store's address.
    const synced = until(async () => {
      const { states } = await nfse.storeClient.listSyncStates({ pageSize: 100 });
      return states.length === nfse.municipalities.length && states.every((s) => s.lastSuccessAt !== undefined);
    }, "every feed to catch up");
    synced.catch(() => undefined);
    const artifacts = await startService(
      "artifacts",
      {
        MYSQL_URL: nfse.db.url,
        ARTIFACT_DIR: join(dir, "artifacts"),
        ARTIFACT_LINK_SECRET: "danfse-test-only-link-secret-0123456789abcdef",
        ARTIFACT_HTTP_PORT: "0",
        ARTIFACT_HTTP_HOST: "127.0.0.1",
      },
      { compiled },
    );
    processes.push(artifacts);
    const startDanfse = async (extraEnv: Record<string, string> = {}) => {
      const p = await startService(
        "danfse",
        {
          MYSQL_URL: nfse.db.url,
          STORE_URL: nfse.store.baseUrl,
          ARTIFACTS_URL: artifacts.baseUrl,
          DANFSE_RENDER_THREADS: "2",
          DANFSE_EXPORT_HEARTBEAT_SECONDS: "0.2",
          DANFSE_EXPORT_STALE_SECONDS: "1",
          ...opts.danfseEnv,
          ...extraEnv,
        },
        { compiled },
      );
      processes.push(p);
      return p;
    };
    const danfse = await startDanfse();
    await synced;
    return {
      nfse,
      artifacts,
      danfse,
      client: createClient(DanfseService, createGrpcTransport({ baseUrl: danfse.baseUrl })),
      async notes(ibge) {
        const out: { chave: string; competencia: string }[] = [];
        let pageToken = "";
        do {
          const res = await nfse.storeClient.listDocuments({ ibge, pageSize: 500, pageToken });
          for (const d of res.documents) {
            const c = d.document!.competencia!;
            out.push({
              chave: d.document!.chave,
              competencia: `${c.year}-${String(c.month).padStart(2, "0")}-${String(c.day).padStart(2, "0")}`,
            });
          }
          pageToken = res.nextPageToken;
        } while (pageToken);
        return out;
      },
      startDanfse,
      async stop() {
        for (const p of processes) p.kill("SIGKILL");
        await nfse.stop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const p of processes) p.kill("SIGKILL");
    await nfse.stop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}
