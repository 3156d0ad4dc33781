// The billing path as separate processes on real sockets: a throwaway MariaDB database, the artifacts
// service on a temporary directory and any number of billing processes sharing JetStream queues on the
// stack's NATS under a prefix of their own (so parallel test files never share queues).
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createClient, type Client } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect } from "@nats-io/transport-node";
import { ArtifactsService } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";
import { BillingService } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { createThrowawayDatabase, externalDatabase, type ThrowawayDatabase } from "./mysql.js";
import { startService, type ServiceProcess } from "./service-process.js";

export interface BillingMesh {
  db: ThrowawayDatabase;
  artifacts: ServiceProcess;
  billing: ServiceProcess[];
  prefix: string;
  billingClient(p?: ServiceProcess): Client<typeof BillingService>;
  artifactsClient: Client<typeof ArtifactsService>;
  startBilling(extraEnv?: Record<string, string>, spawn?: { preload?: string[] }): Promise<ServiceProcess>;
  /** The last `n` log lines of every process, labelled: what a failed test prints to say why. */
  logTail(n?: number): string;
  stop(): Promise<void>;
}

export async function startBillingMesh(
  opts: {
    billingEnv?: Record<string, string>;
    artifactsEnv?: Record<string, string>;
    processes?: number;
    compiled?: boolean;
    natsUrl?: string;
    mysqlUrl?: string;
  } = {},
): Promise<BillingMesh> {
  // A private server (test/support/nats-server.ts) for tests that restart it; the stack's otherwise.
  const natsUrl = opts.natsUrl ?? process.env.NATS_URL;
  if (!natsUrl) throw new Error("NATS_URL is not set: run `bash scripts/stack.sh start` and export its env");
  const dir = mkdtempSync(join(tmpdir(), "malha-billing-"));
  const db = opts.mysqlUrl ? externalDatabase(opts.mysqlUrl) : await createThrowawayDatabase();
  const artifacts = await startService(
    "artifacts",
    {
      MYSQL_URL: db.url,
      ARTIFACT_DIR: join(dir, "artifacts"),
      ARTIFACT_LINK_SECRET: "billing-test-only-link-secret-0123456789abcdef",
      ARTIFACT_HTTP_PORT: "0",
      ARTIFACT_HTTP_HOST: "127.0.0.1",
      ...opts.artifactsEnv,
    },
    { compiled: opts.compiled ?? false },
  );
  const prefix = `bt${randomBytes(5).toString("hex")}`;
  const billing: ServiceProcess[] = [];
  const prefixes = new Set([prefix]);
  // extraEnv may name another BILLING_NATS_PREFIX: a billing process with its own queues (other settings).
  const startBilling = async (extraEnv: Record<string, string> = {}, spawn: { preload?: string[] } = {}) => {
    if (extraEnv.BILLING_NATS_PREFIX) prefixes.add(extraEnv.BILLING_NATS_PREFIX);
    const env: Record<string, string> = {
      MYSQL_URL: db.url,
      NATS_URL: natsUrl,
      ARTIFACTS_URL: artifacts.baseUrl,
      BILLING_NATS_PREFIX: prefix,
      // Shared by every billing replica of the mesh, as in production: page tokens work across them.
      BILLING_PAGE_TOKEN_SECRET: "billing-test-only-page-token-secret",
      BILLING_RENDER_CONCURRENCY: "4",
      BILLING_RENDER_THREADS: "2",
      BILLING_ACK_WAIT_SECONDS: "5",
      BILLING_RECONCILE_SECONDS: "1",
      ...opts.billingEnv,
      ...extraEnv,
    };
    // Billing's behaviour is tested as a trusted caller sees it, unless a test hands it a tokens file;
    // webhook receivers in tests listen on loopback, which production refuses (webhook-address.test.ts).
    if (env.BILLING_TENANT_TOKENS_FILE === undefined) env.BILLING_TRUST_NETWORK ??= "true";
    env.BILLING_WEBHOOK_ALLOW_PRIVATE ??= "true";
    const b = await startService("billing", env, { compiled: opts.compiled ?? false, ...spawn });
    billing.push(b);
    return b;
  };
  for (let i = 0; i < (opts.processes ?? 1); i++) await startBilling();
  const artifactsClient = createClient(ArtifactsService, createGrpcTransport({ baseUrl: artifacts.baseUrl }));
  return {
    db,
    artifacts,
    billing,
    prefix,
    // The newest process by default: after a kill and restart, calls go to the survivor.
    billingClient: (p = billing.at(-1)!) => createClient(BillingService, createGrpcTransport({ baseUrl: p.baseUrl })),
    artifactsClient,
    startBilling,
    logTail(n = 40) {
      const procs: [string, ServiceProcess][] = [
        ["artifacts", artifacts],
        ...billing.map((b, i): [string, ServiceProcess] => [`billing#${i + 1}`, b]),
      ];
      return procs.map(([name, p]) => `--- ${name} (last ${n} lines)\n${p.lines.slice(-n).join("\n")}`).join("\n");
    },
    async stop() {
      for (const p of [...billing, artifacts]) p.kill("SIGKILL");
      await Promise.all([...billing, artifacts].map((p) => p.exited));
      await db.drop();
      rmSync(dir, { recursive: true, force: true });
      // The queues belong to this mesh only.
      const nc = await connect({ servers: natsUrl });
      try {
        const jsm = await jetstreamManager(nc);
        for (const p of prefixes)
          for (const s of [`${p}_boleto`, `${p}_cnab`, `${p}_retorno`, `${p}_dlq`]) await jsm.streams.delete(s).catch(() => undefined);
      } finally {
        await nc.close();
      }
    },
  };
}
