import { join } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { projectRoot } from "../../libs/config/paths.js";
import { MYSQL_URL_FORMAT, parseMysqlUrl } from "../../libs/db/pool.js";
import type { RuntimeConfig } from "../../libs/rpc/runtime-config.js";
import { secretAuth, type CredentialsAuth } from "./authorization.js";
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
  /** Window of the "expiring soon" gauge and start-up warning. */
  expiringSoonDays: number;
}

export function readVaultConfig(env: EnvReader, runtime: RuntimeConfig): VaultConfig {
  return {
    mysqlUrl: env.parse("MYSQL_URL", (url) => (parseMysqlUrl(url), url), { hint: MYSQL_URL_FORMAT }),
    migrateOnStart: env.bool("VAULT_MIGRATE_ON_START", { default: true }),
    migrationsDir: env.string("MIGRATIONS_DIR", { default: join(projectRoot(), "migrations") }),
    mysqlConnectionLimit: env.int("MYSQL_CONNECTION_LIMIT", { default: 5, min: 1, max: 1000 }),
    masterKeys: readMasterKeys((name) => env.optionalString(name)),
    credentialsAuth: readCredentialsAuth(env, runtime),
    expiringSoonDays: env.int("VAULT_EXPIRING_SOON_DAYS", { default: 30, min: 1, max: 3650 }),
  };
}

function readCredentialsAuth(env: EnvReader, runtime: RuntimeConfig): CredentialsAuth {
  const identity = env.string("VAULT_ADN_GATEWAY_IDENTITY", { default: DEFAULT_GATEWAY_IDENTITY });
  const value = env.optionalString("VAULT_CREDENTIALS_SECRET");
  const file = env.optionalString("VAULT_CREDENTIALS_SECRET_FILE");
  if (value !== undefined && file !== undefined) {
    throw new ConfigError("VAULT_CREDENTIALS_SECRET_FILE", "cannot be combined with VAULT_CREDENTIALS_SECRET (set only one)");
  }
  const secret = file !== undefined ? readSecretFile("VAULT_CREDENTIALS_SECRET_FILE", file).toString("utf8").trim() : value;
  if (secret !== undefined && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError(file !== undefined ? "VAULT_CREDENTIALS_SECRET_FILE" : "VAULT_CREDENTIALS_SECRET", `must be at least ${MIN_SECRET_LENGTH} characters`);
  }
  if (runtime.tls?.clientCa) return { mode: "mtls", identity };
  if (secret !== undefined) return secretAuth(secret);
  return { mode: "closed" };
}
