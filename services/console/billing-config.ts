// The billing tenants the console shows, from CONSOLE_BILLING_TENANTS_FILE, one per line:
//   <tenant> [<bapi_ token>]
// Billing answers only the tenant a token belongs to, so with billing's tokens file each tenant needs its
// own token here; with BILLING_TRUST_NETWORK=true the tenant alone is enough. The file holds credentials:
// keep it readable by the console only. Billing has no "list tenants" call, hence the list.
import { readFileSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { ConfigError, type EnvReader } from "../../libs/config/env.js";
import { TENANT } from "./users.js";

const TOKEN = /^bapi_[A-Za-z0-9_-]{43}$/;

export interface BillingTenants {
  /** In the file's order. */
  names: string[];
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

/** Undefined when CONSOLE_BILLING_TENANTS_FILE is unset: the console then shows no Cobrança data. */
export function readBillingTenants(env: EnvReader): BillingTenants | undefined {
  const path = env.optionalString("CONSOLE_BILLING_TENANTS_FILE");
  if (path === undefined) return undefined;
  const file = isAbsolute(path) ? path : resolve(path);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new ConfigError(
      "CONSOLE_BILLING_TENANTS_FILE",
      `cannot be read (${(err as NodeJS.ErrnoException).code ?? "unreadable"}: ${file})`,
    );
  }
  try {
    return parseBillingTenants(text);
  } catch (err) {
    throw new ConfigError("CONSOLE_BILLING_TENANTS_FILE", `is malformed: ${(err as Error).message}`);
  }
}
