// The NFS-e sync path as separate processes on real sockets: the ADN simulator (HTTPS + mTLS, test CA),
// the store on a throwaway MariaDB database, the ADN gateway (credentials from a directory of test
// e-CNPJ certificates) and any number of coordinators sharing leases on the stack's NATS.
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { Ambiente, TipoNsu } from "../../libs/gen/malha/nfse/v1/feed_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { startAdnSimulator, type AdnSimulator } from "../../tools/adn-sim/server.js";
import type { SimSwitches } from "../../tools/adn-sim/switches.js";
import { completeCnpj } from "../../libs/tax-id/index.js";
import { UF_BY_PREFIX } from "../../services/store/ibge.js";
import { createTestRoot, issueEcnpj, issueServer } from "../../tools/adn-sim/icp-brasil.js";
import { createThrowawayDatabase, externalDatabase, type ThrowawayDatabase } from "./mysql.js";
import { startService, type ServiceProcess } from "./service-process.js";

/** Real IBGE codes of capitals (UF prefix valid): the first five are the demo/test municipalities. */
export const CAPITALS = [
  { ibge: "3550308", name: "São Paulo", uf: "SP" },
  { ibge: "3304557", name: "Rio de Janeiro", uf: "RJ" },
  { ibge: "4106902", name: "Curitiba", uf: "PR" },
  { ibge: "5300108", name: "Brasília", uf: "DF" },
  { ibge: "2304400", name: "Fortaleza", uf: "CE" },
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
export const DEMO_MUNICIPALITIES = CAPITALS.slice(0, 5);

/**
 * `n` municipalities: the capitals first, then made-up codes under every UF's prefix in turn (suffixes from
 * 90000, which no capital has), for fleet-sized meshes (bench/fleet.ts).
 */
export function meshMunicipalities(n: number): { ibge: string; name: string; uf: string }[] {
  const out: { ibge: string; name: string; uf: string }[] = CAPITALS.slice(0, n).map((m) => ({ ...m }));
  const prefixes = Object.entries(UF_BY_PREFIX);
  for (let i = 0; out.length < n; i++) {
    const [prefix, uf] = prefixes[i % prefixes.length]!;
    const ibge = `${prefix}${90_000 + Math.floor(i / prefixes.length)}`;
    out.push({ ibge, name: `Município ${ibge}`, uf });
  }
  return out;
}

/** A CNPJ with valid check digits built from a 12-character base (digits, or [0-9A-Z] since 2026). */
export function cnpjFrom(base12: string): string {
  return completeCnpj(base12);
}

export interface NfseMeshOptions {
  municipalities: number;
  feedSize: number;
  coordinators: number;
  switches?: Partial<SimSwitches>;
  coordinatorEnv?: Record<string, string>;
  /** Coordinators use this NATS instead of the stack's (e.g. a private one the test restarts). */
  natsUrl?: string;
  /** The store uses this database instead of a throwaway one on the stack (e.g. a private server). */
  mysqlUrl?: string;
  /** Extra env of the store / gateway processes (e.g. NODE_OPTIONS for profiling). */
  serviceEnv?: { store?: Record<string, string>; "adn-gateway"?: Record<string, string> };
  /** Run the services compiled from dist/ (after `npm run build`), as they are deployed, not under tsx. */
  compiled?: boolean;
  /**
   * How the gateway trusts the simulator's CA: `ADN_CA_FILE` (default: only that CA, parsed into each
   * certificate's TLS context), or `NODE_EXTRA_CA_CERTS` (added once to Node's bundle, which every context
   * shares — how a deployment adds a CA, so the fleet bench's gateway pays what production pays).
   */
  simulatorCa?: "ca-file" | "extra-ca-certs";
}

export interface NfseMesh {
  sim: AdnSimulator;
  db: ThrowawayDatabase;
  store: ServiceProcess;
  gateway: ServiceProcess;
  coordinators: ServiceProcess[];
  /** The coordinators' NATS KV lease bucket (its stream is `KV_<leaseBucket>`). */
  leaseBucket: string;
  storeClient: Client<typeof StoreService>;
  municipalities: { ibge: string; cnpj: string; name: string; uf: string }[];
  /** Coordinators talk to `gateway` unless started with ADN_GATEWAY_URL set to another replica's. */
  startCoordinator(extraEnv?: Record<string, string>): Promise<ServiceProcess>;
  /** Another gateway replica with the same credentials and settings (in-memory cool-downs of its own). */
  startGateway(): Promise<ServiceProcess>;
  /**
   * Registers every municipality, or those of `only` (`concurrency` at a time, default 1; `active` default
   * true).
   */
  registerAll(opts?: { concurrency?: number; active?: boolean; only?: readonly { ibge: string }[] }): Promise<void>;
  /** SIGKILL by default; `graceful` sends SIGTERM (coordinators first) and waits, so exit hooks run. */
  stop(opts?: { graceful?: boolean }): Promise<void>;
}

export async function startNfseMesh(opts: NfseMeshOptions): Promise<NfseMesh> {
  const natsUrl = opts.natsUrl ?? process.env.NATS_URL;
  if (!natsUrl) throw new Error("NATS_URL is not set: run `bash scripts/stack.sh start` and export its env");
  if (opts.municipalities > 270_000) throw new Error("at most 270,000 municipalities");
  const dir = mkdtempSync(join(tmpdir(), "malha-mesh-"));
  const root = createTestRoot();
  const server = issueServer(root);
  const municipalities = meshMunicipalities(opts.municipalities).map((m, i) => ({
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
  const db = opts.mysqlUrl ? externalDatabase(opts.mysqlUrl) : await createThrowawayDatabase();
  const spawnOpts = { compiled: opts.compiled ?? false };
  const store = await startService("store", { MYSQL_URL: db.url, ...opts.serviceEnv?.store }, spawnOpts);
  const gateways: ServiceProcess[] = [];
  const startGateway = async () => {
    const g = await startService(
      "adn-gateway",
      {
        ADN_CREDENTIALS_DIR: credentials,
        ...(opts.simulatorCa === "extra-ca-certs" ? { NODE_EXTRA_CA_CERTS: caFile } : { ADN_CA_FILE: caFile }),
        STORE_URL: store.baseUrl,
        ADN_BASE_URL_PRODUCAO: sim.url,
        ADN_BASE_URL_PRODUCAO_RESTRITA: sim.url,
        NFSE_REQUEST_TIMEOUT_SECONDS: "5",
        NFSE_RETRY_BACKOFF_BASE_SECONDS: "0.05",
        NFSE_RETRY_BACKOFF_MAX_SECONDS: "0.5",
        ...opts.serviceEnv?.["adn-gateway"],
      },
      spawnOpts,
    );
    gateways.push(g);
    return g;
  };
  // The gateway applies a run's pages to the store itself (decision 0020): the store comes first.
  const gateway = await startGateway();
  const bucket = `leases_e2e_${randomBytes(4).toString("hex")}`;
  const coordinators: ServiceProcess[] = [];
  const spawnCoordinator = (extraEnv: Record<string, string> = {}) =>
    startService(
      "coordinator",
      {
        NATS_URL: natsUrl,
        STORE_URL: store.baseUrl,
        ADN_GATEWAY_URL: gateway.baseUrl,
        // No vault in this mesh: the certificate check is skipped when the vault cannot be reached.
        VAULT_URL: "http://127.0.0.1:1",
        COORDINATOR_LEASE_BUCKET: bucket,
        COORDINATOR_LEASE_TTL_SECONDS: "3",
        NFSE_SYNC_INTERVAL_SECONDS: "1",
        ...opts.coordinatorEnv,
        ...extraEnv,
      },
      spawnOpts,
    );
  const startCoordinator = async (extraEnv: Record<string, string> = {}) => {
    const c = await spawnCoordinator(extraEnv);
    coordinators.push(c);
    return c;
  };
  // Started together (their start-up is mostly waiting), kept in a fixed order for the tests that pick one.
  coordinators.push(...(await Promise.all(Array.from({ length: opts.coordinators }, () => spawnCoordinator()))));
  const storeClient = createClient(StoreService, createGrpcTransport({ baseUrl: store.baseUrl }));
  return {
    sim,
    db,
    store,
    gateway,
    coordinators,
    leaseBucket: bucket,
    storeClient,
    municipalities,
    startCoordinator,
    startGateway,
    async registerAll({ concurrency = 1, active = true, only } = {}) {
      const chosen = only ? new Set(only.map((m) => m.ibge)) : undefined;
      const list = chosen ? municipalities.filter((m) => chosen.has(m.ibge)) : municipalities;
      let next = 0;
      const worker = async () => {
        while (next < list.length) {
          const m = list[next++]!;
          await storeClient.registerMunicipality({
            ibge: m.ibge,
            name: m.name,
            uf: m.uf,
            active,
            feeds: [{ ambiente: Ambiente.PRODUCAO_RESTRITA, tipoNsu: TipoNsu.DISTRIBUICAO }],
          });
        }
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    },
    async stop({ graceful = false } = {}) {
      // Coordinators first: they call the others.
      for (const p of [...coordinators, ...gateways, store]) {
        if (graceful) await stopGracefully(p);
        else p.kill("SIGKILL");
      }
      await sim.close();
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A database the test owns elsewhere: same shape as a throwaway one, dropping it only closes pools. */
async function stopGracefully(p: ServiceProcess): Promise<void> {
  if (p.proc.exitCode !== null || p.proc.signalCode !== null) return;
  p.kill("SIGTERM");
  const timer = setTimeout(() => p.kill("SIGKILL"), 30_000);
  await p.exited;
  clearTimeout(timer);
}
