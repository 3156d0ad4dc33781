import { join } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { MYSQL_URL_FORMAT, parseMysqlUrl } from "../../libs/db/pool.js";
import { readPageTokenSecret, type PageTokenSecret } from "../../libs/rpc/page-token.js";
import type { RuntimeConfig } from "../../libs/rpc/runtime-config.js";
import { adminAuth, secretAuth, type AdminAuth, type CredentialsAuth } from "./authorization.js";
import { readMasterKeys, readSecretFile, type MasterKeys } from "./master-keys.js";

export const DEFAULT_GATEWAY_IDENTITY = "adn-gateway";
export const MIN_SECRET_LENGTH = 16;

export interface VaultConfig {
  mysqlUrl: string;
  /** Apply pending migrations before SERVING (same runner and server lock as the store). */
  migrateOnStart: boolean;
  migrationsDir: string;
  mysqlConnectionLimit: number;
  masterKeys: MasterKeys;
  credentialsAuth: CredentialsAuth;
  adminAuth: AdminAuth;
  /** Window of the "expiring soon" gauge and start-up warning. */
  expiringSoonDays: number;
  /** HMAC key of ListCertificates page tokens; replicas behind one address must share it. */
  pageTokenSecret: PageTokenSecret;
}

export function readVaultConfig(env: EnvReader, runtime: RuntimeConfig): VaultConfig {
  return {
    mysqlUrl: env.parse("MYSQL_URL", (url) => (parseMysqlUrl(url), url), { hint: MYSQL_URL_FORMAT }),
    migrateOnStart: env.bool("VAULT_MIGRATE_ON_START", { default: true }),
    migrationsDir: env.string("MIGRATIONS_DIR", { default: join(projectRoot(), "migrations") }),
    mysqlConnectionLimit: env.int("MYSQL_CONNECTION_LIMIT", { default: 5, min: 1, max: 1000 }),
    masterKeys: readMasterKeys((name) => env.optionalString(name)),
    ...readCallerAuth(env, runtime),
    expiringSoonDays: env.int("VAULT_EXPIRING_SOON_DAYS", { default: 30, min: 1, max: 3650 }),
    pageTokenSecret: readPageTokenSecret(env, "VAULT_PAGE_TOKEN_SECRET"),
  };
}

function readCallerAuth(env: EnvReader, runtime: RuntimeConfig): { credentialsAuth: CredentialsAuth; adminAuth: AdminAuth } {
  const gatewayIdentity = env.string("VAULT_ADN_GATEWAY_IDENTITY", { default: DEFAULT_GATEWAY_IDENTITY });
  const credentialsSecret = readSecret(env, "VAULT_CREDENTIALS_SECRET");
  const credentialsAuth: CredentialsAuth = runtime.tls?.clientCa
    ? { mode: "mtls", identity: gatewayIdentity }
    : credentialsSecret !== undefined
      ? secretAuth(credentialsSecret)
      : { mode: "closed" };

  const adminSecret = readSecret(env, "VAULT_ADMIN_SECRET");
  // The gateway holds the credentials secret and faces the internet: it must not be able to administer.
  if (adminSecret !== undefined && adminSecret === credentialsSecret) {
    throw new ConfigError("VAULT_ADMIN_SECRET", "must differ from VAULT_CREDENTIALS_SECRET (the ADN gateway knows that one)");
  }
  const identities = (env.optionalString("VAULT_ADMIN_IDENTITIES") ?? "")
    .split(",")
    .map((i) => i.trim())
    .filter((i) => i !== "");
  if (identities.length > 0 && !runtime.tls?.clientCa) {
    throw new ConfigError(
      "VAULT_ADMIN_IDENTITIES",
      "needs mTLS (TLS_CLIENT_CA_FILE): without client certificates there is no identity to check",
    );
  }
  if (identities.includes(gatewayIdentity)) {
    throw new ConfigError(
      "VAULT_ADMIN_IDENTITIES",
      `must not name the ADN gateway's identity '${gatewayIdentity}' (VAULT_ADN_GATEWAY_IDENTITY)`,
    );
  }
  return { credentialsAuth, adminAuth: adminAuth(identities, adminSecret) };
}

/** NAME or NAME_FILE (not both), at least MIN_SECRET_LENGTH characters. */
function readSecret(env: EnvReader, name: string): string | undefined {
  const value = env.optionalString(name);
  const file = env.optionalString(`${name}_FILE`);
  if (value !== undefined && file !== undefined) throw new ConfigError(`${name}_FILE`, `cannot be combined with ${name} (set only one)`);
  const secret = file !== undefined ? readSecretFile(`${name}_FILE`, file).toString("utf8").trim() : value;
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(file !== undefined ? `${name}_FILE` : name, `must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  return secret;
}
