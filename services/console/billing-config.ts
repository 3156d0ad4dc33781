// The billing tenants the console shows, from CONSOLE_BILLING_TENANTS_FILE, one per line:
//   <tenant> [<bapi_ token>]
// Billing answers only the tenant a token belongs to, so with billing's tokens file each tenant needs its
// own token here; with BILLING_TRUST_NETWORK=true the tenant alone is enough. The file holds credentials:
// keep it readable by the console only. Billing has no "list tenants" call, hence the list.
import { isAbsolute, resolve } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { WatchedFile } from "../../libs/config/watched-file.js";
import type { Logger } from "../../libs/log/logger.js";
import { TENANT } from "./users.js";

const TOKEN = /^bapi_[A-Za-z0-9_-]{43}$/;

export interface BillingTenants {
  /** In the file's order, as of the file's last good version. */
  readonly names: string[];
  /** The tenant's API token, when billing checks tokens. */
  token(tenant: string): string | undefined;
}

export function parseBillingTenants(text: string): BillingTenants {
  const tokens = new Map<string, string | undefined>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") return;
    const fields = line.split(/\s+/);
    const [tenant, token] = fields as [string, string | undefined];
    if (fields.length > 2) throw new Error(`line ${i + 1}: expected "<tenant> [<bapi_ token>]", found ${fields.length} fields`);
    if (!TENANT.test(tenant)) throw new Error(`line ${i + 1}: tenant must be 1-64 of A-Z a-z 0-9 . _ -`);
    // The token itself is never repeated in a message.
    if (token !== undefined && !TOKEN.test(token))
      throw new Error(`line ${i + 1}: the token must be a bapi_ token (malha billing tokens new)`);
    if (tokens.has(tenant)) throw new Error(`line ${i + 1}: tenant "${tenant}" is listed twice`);
    tokens.set(tenant, token);
  });
  return { names: [...tokens.keys()], token: (t) => tokens.get(t) };
}

/**
 * The file, re-read when it changes like billing's tokens file (a tenant or token added or revoked takes
 * effect within `checkMs`, no restart); an edit that does not parse keeps the last good list and is logged.
 */
export function watchBillingTenants(path: string, log?: Logger, checkMs = 2_000): BillingTenants {
  const file = new WatchedFile(path, parseBillingTenants, {
    checkMs,
    onReload: (next) => log?.info({ tenants: next.names.length }, "billing tenants file reloaded"),
    onError: (err) =>
      log?.error({ err: err.message }, "billing tenants file (CONSOLE_BILLING_TENANTS_FILE) unreadable: keeping the tenants loaded before"),
  });
  return {
    get names() {
      return file.current().names;
    },
    token: (tenant) => file.current().token(tenant),
  };
}

/** Undefined when CONSOLE_BILLING_TENANTS_FILE is unset: the console then shows no Cobrança data. */
export function readBillingTenants(env: EnvReader, log?: Logger): BillingTenants | undefined {
  const path = env.optionalString("CONSOLE_BILLING_TENANTS_FILE");
  if (path === undefined) return undefined;
  const file = isAbsolute(path) ? path : resolve(path);
  try {
    return watchBillingTenants(file, log);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(
      "CONSOLE_BILLING_TENANTS_FILE",
      code ? `cannot be read (${code}: ${file})` : `is malformed: ${(err as Error).message}`,
    );
  }
}
