// Wiring only: config, the operators file, session signing, gRPC clients for the coordinator, the store, the
// vault and billing, and the HTTP server of the web app and its API. The gRPC listener runtime gives us serves only
// health.
import { BillingService } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { ConfigError } from "../../libs/config/env.js";
import { peerClient } from "../../libs/rpc/peers.js";
import { runService } from "../../libs/rpc/run.js";
import { readBillingTenants } from "./billing-config.js";
import { createBillingView } from "./billing-view.js";
import { createCertificateExpiry } from "./certificate-expiry.js";
import { createCertificatesView } from "./certificates-view.js";
import { readConsoleConfig } from "./config.js";
import { createDocumentsView } from "./documents-view.js";
import { createFeedDetailView } from "./feed-view.js";
import { startConsoleServer, type ConsoleServer } from "./http.js";
import { createMunicipioDirectory } from "./municipios.js";
import { billingRoutes } from "./routes/billing.js";
import { certificateRoutes } from "./routes/certificates.js";
import { documentRoutes } from "./routes/documents.js";
import { feedRoutes } from "./routes/feeds.js";
import { municipioRoutes } from "./routes/municipios.js";
import { syncRoutes } from "./routes/sync.js";
import { SessionSigner } from "./session.js";
import { createSyncView } from "./sync-view.js";
import { OperatorDirectory } from "./users.js";

await runService("console", async ({ env, log }) => {
  const config = readConsoleConfig(env);
  let operators: OperatorDirectory;
  try {
    operators = new OperatorDirectory(config.usersFile, (err) =>
      log.error({ err: err.message }, "users file not reloaded; keeping the previous list"),
    );
  } catch (err) {
    throw new ConfigError("CONSOLE_USERS_FILE", (err as Error).message);
  }
  const coordinator = peerClient(env, "coordinator", CoordinatorService, { defaultTimeoutMs: 10_000 });
  const store = peerClient(env, "store", StoreService, { defaultTimeoutMs: 10_000 });
  const vault = peerClient(env, "vault", VaultService, { defaultTimeoutMs: 10_000 });
  const sessions = new SessionSigner(config.sessionSecret, config.sessionTtlMs);
  // Billing only when the console is told which tenants it shows (billing has no tenant listing).
  const billingTenants = readBillingTenants(env, log);
  const billing = billingTenants ? peerClient(env, "billing", BillingService, { defaultTimeoutMs: 10_000 }) : undefined;
  const billingView = billing && billingTenants ? createBillingView({ billing: billing.client, tenants: billingTenants }) : undefined;
  const municipios = createMunicipioDirectory(store.client);
  const certificates = createCertificateExpiry(vault.client);
  const deps = { coordinator: coordinator.client, store: store.client, municipios, certificates };
  const routes = [
    ...syncRoutes(createSyncView(deps)),
    ...feedRoutes(createFeedDetailView(deps)),
    ...municipioRoutes(municipios),
    ...documentRoutes(createDocumentsView(store.client)),
    ...certificateRoutes(createCertificatesView(vault.client, config.vaultAdminSecret, log)),
    ...billingRoutes(billingView, billingTenants),
  ];
  let http: ConsoleServer | undefined;
  return {
    services: [],
    async ready() {
      http = await startConsoleServer({ config, operators, sessions, routes, log }, config.httpHost, config.httpPort);
      log.info(
        {
          httpPort: http.port,
          staticDir: config.staticDir,
          proxyUserHeader: config.trustProxyUserHeader,
          proxyFrom: config.trustProxyFrom?.cidrs,
          certificateImport: config.vaultAdminSecret !== undefined,
        },
        "console listening",
      );
    },
    async close() {
      await http?.close();
      coordinator.close();
      store.close();
      vault.close();
      billing?.close();
    },
  };
});
