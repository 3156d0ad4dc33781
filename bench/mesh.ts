// The benchmark's mesh: test/support/nfse-mesh.ts (ADN simulator in this process; store, adn-gateway and
// one coordinator as real processes on a throwaway MariaDB database and the stack's NATS) with what a
// benchmark needs on top: extra env per service (profiling), feeds generated before the clock starts,
// reconciliation off (it is a separate, budgeted path), and a graceful stop so CPU profiles get written.
import type { Client } from "@connectrpc/connect";
import type { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import type { AdnSimulator } from "../tools/adn-sim/server.js";
import type { SimSwitches } from "../tools/adn-sim/switches.js";
import type { ThrowawayDatabase } from "../test/support/mysql.js";
import { startNfseMesh } from "../test/support/nfse-mesh.js";
import { benchRuntime } from "./runtime.js";
import type { ServiceProcess } from "../test/support/service-process.js";

export type ServiceName = "store" | "adn-gateway" | "coordinator";

export interface BenchMeshOptions {
  municipalities: number;
  /** More municipalities, after those, for the warm-up ingests before the measured one (`warmups`). */
  warmupMunicipalities?: number;
  /** How many warm-up ingests of `warmupMunicipalities` feeds each, one after the other (1 by default). */
  warmupIngests?: number;
  feedSize: number;
  switches?: Partial<SimSwitches>;
  coordinatorEnv?: Record<string, string>;
  /** Extra env of every service process (e.g. NODE_OPTIONS for --cpu-prof), by service. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
  /** Services from dist/ (see runtime.ts); the default is benchRuntime()'s choice. */
  compiled?: boolean;
}

export interface BenchMesh {
  sim: AdnSimulator;
  db: ThrowawayDatabase;
  services: Record<ServiceName, ServiceProcess>;
  storeClient: Client<typeof StoreService>;
  /** The measured municipalities. */
  municipalities: { ibge: string; cnpj: string; name: string; uf: string }[];
  /** Each warm-up ingest's municipalities (none unless `warmupMunicipalities`). */
  warmups: { ibge: string; cnpj: string; name: string; uf: string }[][];
  /** Registers the measured municipalities. */
  registerAll(): Promise<void>;
  /** Registers the municipalities of warm-up ingest `i`. */
  registerWarmup(i: number): Promise<void>;
  /** SIGTERM every service and wait for it to exit (profiles are written on exit), then clean up. */
  stop(): Promise<void>;
}

export async function startBenchMesh(opts: BenchMeshOptions): Promise<BenchMesh> {
  const mesh = await startNfseMesh({
    municipalities: opts.municipalities + (opts.warmupMunicipalities ?? 0) * (opts.warmupIngests ?? 1),
    feedSize: opts.feedSize,
    coordinators: 1,
    compiled: opts.compiled ?? benchRuntime().compiled,
    ...(opts.switches ? { switches: opts.switches } : {}),
    coordinatorEnv: { NFSE_RECONCILIATION_INTERVAL_SECONDS: "86400", ...opts.coordinatorEnv, ...opts.serviceEnv?.coordinator },
    serviceEnv: {
      ...(opts.serviceEnv?.store ? { store: opts.serviceEnv.store } : {}),
      "adn-gateway": { NFSE_REQUEST_TIMEOUT_SECONDS: "30", ...opts.serviceEnv?.["adn-gateway"] },
    },
  });
  // Generate every feed now, so that generation (gzip of each XML) is not inside the measured window.
  for (const m of mesh.municipalities) mesh.sim.feed(m.ibge, "DISTRIBUICAO");
  // The warm-up's come last, so the measured feeds are the ones a run without warm-up measures.
  const measured = mesh.municipalities.slice(0, opts.municipalities);
  const perWarmup = opts.warmupMunicipalities ?? 0;
  const warmups =
    perWarmup > 0
      ? Array.from({ length: opts.warmupIngests ?? 1 }, (_, i) =>
          mesh.municipalities.slice(opts.municipalities + i * perWarmup, opts.municipalities + (i + 1) * perWarmup),
        )
      : [];
  return {
    sim: mesh.sim,
    db: mesh.db,
    services: { store: mesh.store, "adn-gateway": mesh.gateway, coordinator: mesh.coordinators[0]! },
    storeClient: mesh.storeClient,
    municipalities: measured,
    warmups,
    registerAll: () => mesh.registerAll({ only: measured }),
    registerWarmup: (i) => mesh.registerAll({ only: warmups[i]! }),
    stop: () => mesh.stop({ graceful: true }),
  };
}
