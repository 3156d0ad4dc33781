// Wiring only: config, the operators file, session signing, gRPC clients for the coordinator and the store,
// and the HTTP server of the web app and its API. The gRPC listener runtime gives us serves only health.
import { BillingService } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { ConfigError } from "../../libs/config/env.js";
import { peerClient } from "../../libs/rpc/peers.js";
import { runService } from "../../libs/rpc/run.js";
import { readBillingTenants } from "./billing-config.js";
import { createBillingView } from "./billing-view.js";
import { readConsoleConfig } from "./config.js";
import { startConsoleServer, type ConsoleServer } from "./http.js";
import { billingRoutes } from "./routes/billing.js";
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
  const sessions = new SessionSigner(config.sessionSecret, config.sessionTtlMs);
  const sync = createSyncView({ coordinator: coordinator.client, store: store.client });
  // Billing only when the console is told which tenants it shows (billing has no tenant listing).
  const billingTenants = readBillingTenants(env);
  const billing = billingTenants ? peerClient(env, "billing", BillingService, { defaultTimeoutMs: 10_000 }) : undefined;
  const billingView = billing && billingTenants ? createBillingView({ billing: billing.client, tenants: billingTenants }) : undefined;
  let http: ConsoleServer | undefined;
  return {
    services: [],
    async ready() {
      http = await startConsoleServer(
        { config, operators, sessions, routes: [...syncRoutes(sync), ...billingRoutes(billingView, billingTenants)], log },
        config.httpHost,
        config.httpPort,
      );
      log.info({ httpPort: http.port, staticDir: config.staticDir, proxyUserHeader: config.trustProxyUserHeader }, "console listening");
    },
    async close() {
      await http?.close();
      coordinator.close();
      store.close();
      billing?.close();
    },
  };
});
