// Wiring only: NATS (leases), clients for the store, the ADN gateway and the vault, the scheduler with
// its two pools, and the RPC handlers. Behaviour lives in the modules beside this file.
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { CertificateStatus, VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { defaultHolderId, KvLeaseManager } from "../../libs/leases/nats-kv-leases.js";
import { KvSlots } from "../../libs/leases/slots.js";
import { connectNats } from "../../libs/nats/connect.js";
import { peerClient } from "../../libs/rpc/peers.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { coordinatorAccess } from "./access.js";
import { ActiveCertificates } from "./certificates.js";
import { readCoordinatorConfig } from "./config.js";
import { createCoordinatorMetrics } from "./metrics.js";
import { batchSizeObservers } from "../../libs/batching/metrics.js";
import { coordinatorHandlers } from "./handlers.js";
import { batchedRunCalls, RUN_BATCHING } from "./run-calls.js";
import { FeedDeliveries } from "./feed-delivery.js";
import { FeedRunner } from "./runner.js";
import { reconciliationSpacingMs, Scheduler } from "./scheduler.js";

await runService("coordinator", async ({ env, log, metrics: serviceMetrics }) => {
  const config = readCoordinatorConfig(env);
  const metrics = createCoordinatorMetrics(serviceMetrics.registry);
  const store = peerClient(env, "store", StoreService);
  const gateway = peerClient(env, "adn-gateway", AdnGatewayService, { defaultTimeoutMs: 10 * 60_000 });
  const vault = peerClient(env, "vault", VaultService);
  const holder = env.string("COORDINATOR_HOLDER_ID", { default: defaultHolderId() });
  const nc = await connectNats(config.natsUrl, holder);
  const leases = await KvLeaseManager.open(nc, {
    bucket: config.leaseBucket,
    ttlMs: config.leaseTtlMs,
    replicas: config.natsReplicas,
    holder,
    onRenewError: (key, err) => log.warn({ key, err }, "lease renewal failed; retrying until the deadline"),
  });
  const reconciliationSlots =
    config.reconciliationBudgetPerHour > 0
      ? await KvSlots.open(nc, {
          bucketPrefix: `${config.leaseBucket}_lookups`,
          periodMs: reconciliationSpacingMs(config),
          replicas: config.natsReplicas,
          holder,
        })
      : undefined;
  const now = () => Date.now();
  const certificates = new ActiveCertificates({
    listActive: (pageToken, ibge = "") =>
      vault.client.listCertificates({ ibge, status: CertificateStatus.ACTIVE, pageSize: 500, pageToken }),
    refreshMs: config.certificateRefreshMs,
    now,
    log,
  });
  const runs = batchedRunCalls(store.client, RUN_BATCHING, batchSizeObservers(serviceMetrics.registry));
  const deliveries = new FeedDeliveries(gateway.client);
  const runner = new FeedRunner(leases, { store: runs, deliveries, now }, config, log, metrics);
  const scheduler = new Scheduler({
    store: store.client,
    gateway: gateway.client,
    leases,
    runner,
    config,
    log,
    now,
    metrics,
    ...(reconciliationSlots ? { reconciliationSlots } : {}),
    hasActiveCertificate: (ibge) => certificates.has(ibge),
  });
  return {
    services: [
      serve(
        CoordinatorService,
        coordinatorHandlers({
          store: store.client,
          leases,
          scheduler,
          config,
          now,
          hasActiveCertificate: (ibge) => certificates.has(ibge),
        }),
        coordinatorAccess,
      ),
    ],
    async ready() {
      scheduler.start();
    },
    async close() {
      await scheduler.stop();
      deliveries.close();
      await runs.close();
      await leases.close();
      await nc.drain();
      for (const c of [store, gateway, vault]) c.close();
    },
  };
});
