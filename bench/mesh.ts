// The bench's own copy of the NFS-e mesh wiring (test/support/nfse-mesh.ts, which it may not edit): the
// same processes (ADN simulator in this process, store, adn-gateway, coordinator as real processes on a
// throwaway MariaDB database and the stack's NATS), plus what a benchmark needs and the test mesh does not
// offer: more municipalities than the five demo ones, extra env per service (NODE_OPTIONS=--cpu-prof) and
// a graceful SIGTERM stop so that CPU profiles get written.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import { startAdnSimulator, type AdnSimulator } from "../test/adn-sim/server.js";
import type { SimSwitches } from "../test/adn-sim/switches.js";
import { createTestRoot, issueEcnpj, issueServer } from "../test/support/icp-brasil.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../test/support/mysql.js";
import { cnpjFrom, DEMO_MUNICIPALITIES } from "../test/support/nfse-mesh.js";
import { startService, type ServiceProcess } from "../test/support/service-process.js";

/** The demo municipalities first, then more real capitals (IBGE codes with valid UF prefixes). */
const MORE_MUNICIPALITIES = [
  { ibge: "3106200", name: "Belo Horizonte", uf: "MG" },
  { ibge: "2927408", name: "Salvador", uf: "BA" },
  { ibge: "1302603", name: "Manaus", uf: "AM" },
  { ibge: "4314902", name: "Porto Alegre", uf: "RS" },
  { ibge: "2611606", name: "Recife", uf: "PE" },
  { ibge: "5208707", name: "Goiânia", uf: "GO" },
  { ibge: "1501402", name: "Belém", uf: "PA" },
  { ibge: "2111300", name: "São Luís", uf: "MA" },
  { ibge: "2704302", name: "Maceió", uf: "AL" },
  { ibge: "5002704", name: "Campo Grande", uf: "MS" },
  { ibge: "2211001", name: "Teresina", uf: "PI" },
  { ibge: "2408102", name: "Natal", uf: "RN" },
  { ibge: "4205407", name: "Florianópolis", uf: "SC" },
  { ibge: "2507507", name: "João Pessoa", uf: "PB" },
  { ibge: "5103403", name: "Cuiabá", uf: "MT" },
] as const;
export const BENCH_MUNICIPALITIES = [...DEMO_MUNICIPALITIES, ...MORE_MUNICIPALITIES];

export type ServiceName = "store" | "adn-gateway" | "coordinator";

export interface BenchMeshOptions {
  municipalities: number;
  feedSize: number;
  switches?: Partial<SimSwitches>;
  coordinatorEnv?: Record<string, string>;
  /** Extra env of every service process (e.g. NODE_OPTIONS for --cpu-prof), by service. */
  serviceEnv?: Partial<Record<ServiceName, Record<string, string>>>;
}

export interface BenchMesh {
  sim: AdnSimulator;
  db: ThrowawayDatabase;
  services: Record<ServiceName, ServiceProcess>;
  storeClient: Client<typeof StoreService>;
  municipalities: { ibge: string; cnpj: string; name: string; uf: string }[];
  registerAll(): Promise<void>;
  /** SIGTERM every service and wait for it to exit (profiles are written on exit), then clean up. */
  stop(): Promise<void>;
}

export async function startBenchMesh(opts: BenchMeshOptions): Promise<BenchMesh> {
  const natsUrl = process.env.NATS_URL;
  if (!natsUrl) throw new Error("NATS_URL is not set: run `bash scripts/stack.sh start` and export its env");
  if (opts.municipalities > BENCH_MUNICIPALITIES.length) throw new Error(`at most ${BENCH_MUNICIPALITIES.length} municipalities`);
  const dir = mkdtempSync(join(tmpdir(), "malha-bench-"));
  const root = createTestRoot();
  const server = issueServer(root);
  const municipalities = BENCH_MUNICIPALITIES.slice(0, opts.municipalities).map((m, i) => ({
    ...m,
    cnpj: cnpjFrom(`${String(46_395_000 + i).padStart(8, "0")}0001`),
  }));
  const credentials = join(dir, "credentials");
  mkdirSync(credentials, { recursive: true, mode: 0o700 });
  for (const m of municipalities) {
    const cert = issueEcnpj(root, { cnpj: m.cnpj, razaoSocial: `MUNICIPIO DE ${m.name.toUpperCase()}` });
    writeFileSync(join(credentials, `${m.ibge}.pem`), cert.certPem + root.certPem);
    writeFileSync(join(credentials, `${m.ibge}.key`), cert.keyPem, { mode: 0o600 });
  }
  const caFile = join(dir, "adn-ca.pem");
  writeFileSync(caFile, root.certPem);

  const sim = await startAdnSimulator({
    serverCertPem: server.certPem,
    serverKeyPem: server.keyPem,
    clientCaPem: root.certPem,
    municipalities: municipalities.map(({ ibge, cnpj }) => ({ ibge, cnpj })),
    feedSize: opts.feedSize,
    ...(opts.switches ? { switches: opts.switches } : {}),
  });
  // Generate every feed now, so that generation (gzip of each XML) is not inside the measured window.
  for (const m of municipalities) sim.feed(m.ibge, "DISTRIBUICAO");

  // LOG_LEVEL stays "info": startService waits for the "serving" line.
  const started: ServiceProcess[] = [];
  let db: ThrowawayDatabase | undefined;
  try {
    db = await createThrowawayDatabase();
    const store = await startService("store", { MYSQL_URL: db.url, ...opts.serviceEnv?.store });
    started.push(store);
    const gateway = await startService("adn-gateway", {
      ADN_CREDENTIALS_DIR: credentials,
      ADN_CA_FILE: caFile,
      ADN_BASE_URL_PRODUCAO: sim.url,
      ADN_BASE_URL_PRODUCAO_RESTRITA: sim.url,
      NFSE_REQUEST_TIMEOUT_SECONDS: "30",
      NFSE_RETRY_BACKOFF_BASE_SECONDS: "0.05",
      NFSE_RETRY_BACKOFF_MAX_SECONDS: "0.5",
      ...opts.serviceEnv?.["adn-gateway"],
    });
    started.push(gateway);
    const coordinator = await startService("coordinator", {
      NATS_URL: natsUrl,
      STORE_URL: store.baseUrl,
      ADN_GATEWAY_URL: gateway.baseUrl,
      // No vault in this mesh: the certificate check is skipped when the vault cannot be reached.
      VAULT_URL: "http://127.0.0.1:1",
      COORDINATOR_LEASE_BUCKET: `leases_bench_${randomBytes(4).toString("hex")}`,
      NFSE_SYNC_INTERVAL_SECONDS: "1",
      // Reconciliation (single-NSU back-fill of hidden NSUs) is a separate, budgeted path: not measured here.
      NFSE_RECONCILIATION_INTERVAL_SECONDS: "86400",
      ...opts.coordinatorEnv,
      ...opts.serviceEnv?.coordinator,
    });
    started.push(coordinator);
    const storeClient = createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
    const theDb = db;
    return {
      sim,
      db: theDb,
      services: { store, "adn-gateway": gateway, coordinator },
      storeClient,
      municipalities,
      async registerAll() {
        for (const m of municipalities) {
          await storeClient.registerMunicipality({
            ibge: m.ibge,
            name: m.name,
            uf: m.uf,
            active: true,
            feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
          });
        }
      },
      async stop() {
        // Coordinator first (it calls the others), then gateway and store.
        for (const p of [coordinator, gateway, store]) await stopGracefully(p);
        await sim.close();
        await theDb.drop();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    for (const p of started) p.kill("SIGKILL");
    await sim.close();
    await db?.drop();
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
}

async function stopGracefully(p: ServiceProcess): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  p.kill("SIGTERM");
  const timer = setTimeout(() => p.kill("SIGKILL"), 30_000);
  await p.exited;
  clearTimeout(timer);
}
