// Wiring only: configuration, the credential source (vault by default, a PEM directory when
// ADN_CREDENTIALS_DIR is set), the ADN HTTP client, the store client DeliverFeeds applies pages with
// (STORE_URL) and the handlers.
import { AdnHttpClient } from "../../libs/adn/http.js";
import { batchSizeObservers } from "../../libs/batching/metrics.js";
import { AdnGatewayService } from "../../libs/gen/malha/adn/v1/adn_gateway_pb.js";
import { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { peerClient } from "../../libs/rpc/peers.js";
import { peerUrlVariable, MESH } from "../../libs/rpc/mesh.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { gatewayAccess } from "./access.js";
import { readGatewayConfig } from "./config.js";
import { Cooldowns } from "./cooldown.js";
import { DirectoryCredentialSource } from "./credentials-dir.js";
import { VaultCredentialSource } from "./credentials-vault.js";
import type { CredentialSource } from "./credentials.js";
import { AdnGateway } from "./gateway.js";
import { createHandlers } from "./handlers.js";
import { createAdnMetrics, registerPoolGauges } from "./metrics.js";
import { batchedPageApply, PAGE_BATCHING } from "./page-apply.js";

await runService("adn-gateway", ({ env, log, metrics }) => {
  const config = readGatewayConfig(env);
  const credentials: CredentialSource =
    config.credentials.kind === "dir"
      ? new DirectoryCredentialSource(config.credentials.dir, { refreshMs: config.credentials.refreshMs })
      : new VaultCredentialSource(peerClient(env, "vault", VaultService), {
          ...(config.credentials.secret ? { secret: config.credentials.secret } : {}),
          refreshMs: config.credentials.refreshMs,
          url: env.optionalString(peerUrlVariable("vault")) ?? `http://127.0.0.1:${MESH.vault.port}`,
        });
  const http = new AdnHttpClient({
    ...(config.trustedCa ? { trustedCa: config.trustedCa } : {}),
    maxResponseBytes: config.maxResponseBytes,
    idlePoolMs: config.idlePoolMs,
    maxTlsContexts: config.maxTlsContexts,
  });
  const adnMetrics = createAdnMetrics(metrics.registry);
  registerPoolGauges(metrics.registry, http);
  const store = peerClient(env, "store", StoreService);
  const pages = batchedPageApply(store.client, PAGE_BATCHING, batchSizeObservers(metrics.registry)("ApplyBatches"));
  const gateway = new AdnGateway({
    config,
    credentials,
    http,
    cooldowns: new Cooldowns(config.rateLimitCooldownMs),
    metrics: adnMetrics,
    log,
  });
  if (config.credentials.kind === "vault" && !config.credentials.secret && !env.optionalString("MESH_TLS_CERT_FILE")) {
    log.warn("neither VAULT_CREDENTIALS_SECRET nor MESH_TLS_CERT_FILE is set: the vault will refuse to hand out ADN credentials");
  }
  log.info(
    {
      credentials: credentials.description,
      producao: config.baseUrlProducao,
      producaoRestrita: config.baseUrlProducaoRestrita,
      trustedCa: Boolean(config.trustedCa),
      idlePoolSeconds: config.idlePoolMs / 1000,
      maxTlsContexts: config.maxTlsContexts,
    },
    "ADN gateway configured",
  );
  return {
    services: [serve(AdnGatewayService, createHandlers(gateway, pages, adnMetrics, log), gatewayAccess)],
    async close() {
      credentials.close();
      await pages.close();
      store.close();
      await http.close();
    },
  };
});
