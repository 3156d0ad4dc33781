// Wiring only. The vault keeps ICP-Brasil A1 certificates encrypted at rest (AES-256-GCM under master
// keys that never enter the database) and hands decrypted client credentials to the ADN gateway alone.
import { createMysqlPool } from "../../libs/db/pool.js";
import { ensureSchema } from "../../libs/db/schema-ready.js";
import { VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";
import { servicePageTokens } from "../../libs/rpc/page-token.js";
import { runService } from "../../libs/rpc/run.js";
import { serve } from "../../libs/rpc/server.js";
import { vaultAccess, vaultCallers } from "./authorization.js";
import { readVaultConfig } from "./config.js";
import { Keyring } from "./crypto.js";
import { VAULT_ERROR_DOMAIN } from "./errors.js";
import { createVaultHandlers } from "./handlers.js";
import { registerCertificateMetrics } from "./metrics.js";
import { CertificateRepository } from "./repository.js";
import { reportAtStart } from "./start-report.js";
import { Vault } from "./vault.js";

await runService("vault", ({ env, config: runtime, log, metrics }) => {
  const config = readVaultConfig(env, runtime);
  const pool = createMysqlPool(config.mysqlUrl, { connectionLimit: config.mysqlConnectionLimit });
  const repo = new CertificateRepository(pool);
  const keyring = new Keyring(config.masterKeys);
  const vault = new Vault(repo, keyring, log, servicePageTokens(config.pageTokenSecret, VAULT_ERROR_DOMAIN, log));
  registerCertificateMetrics(metrics.registry, repo, config.expiringSoonDays);
  return {
    services: [serve(VaultService, createVaultHandlers({ vault, repo, keyring }), vaultAccess(config.credentialsAuth))],
    auth: vaultCallers(config.credentialsAuth, config.adminAuth),
    async ready() {
      await ensureSchema(pool, config, log);
      await reportAtStart({
        repo,
        keyring,
        log,
        credentialsAuth: config.credentialsAuth,
        adminAuth: config.adminAuth,
        expiringSoonDays: config.expiringSoonDays,
      });
    },
    close: () => pool.end(),
  };
});
