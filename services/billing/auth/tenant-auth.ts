// Who may act for a tenant. With a tokens file every call carries `authorization: Bearer bapi_…` (the
// seed's bapi_ token) and may only name the tenant its token belongs to; the file holds the tokens'
// SHA-256, never the tokens. Without it the deployment says explicitly that its network authenticates
// callers (BILLING_TRUST_NETWORK=true); neither is a configuration error (fail closed).
// docs/decisions/0013-tenant-api-tokens.md; the interceptor that applies it: 0022.
import { createHash, randomBytes } from "node:crypto";
import type { BillingService } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import { type AccessTable, tenantCaller } from "../../../libs/rpc/auth/access.js";
import type { CallerResolver } from "../../../libs/rpc/auth/authorize.js";
import { ConfigError } from "../../../libs/config/env.js";
import { WatchedFile } from "../../../libs/config/watched-file.js";
import type { Logger } from "../../../libs/log/logger.js";
import { isTenantName, TENANT_RULE } from "./tenant-name.js";

export const TOKEN_PREFIX = "bapi_";
const TOKEN = /^bapi_[A-Za-z0-9_-]{43}$/;
const DIGEST = /^[0-9a-f]{64}$/;

/** A new API token: 32 random bytes, base64url, behind the prefix that makes a leaked one easy to spot. */
export const newTenantToken = () => `${TOKEN_PREFIX}${randomBytes(32).toString("base64url")}`;

export const tokenDigest = (token: string) => createHash("sha256").update(token, "utf8").digest("hex");

/** The line that grants `token` to `tenant` in the tokens file. */
export const tokensFileLine = (tenant: string, token: string) => `${tenant} ${tokenDigest(token)}`;

/** `<tenant> <sha256 hex of the token>` per line; `#` starts a comment. Throws naming the line. */
export function parseTokensFile(text: string): Map<string, string> {
  const byDigest = new Map<string, string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*$/, "").trim();
    if (line === "") return;
    const [tenant, digest, extra] = line.split(/\s+/);
    if (extra !== undefined || !tenant || !digest) throw new Error(`line ${i + 1}: expected "<tenant> <sha256 of the token>"`);
    if (!isTenantName(tenant)) throw new Error(`line ${i + 1}: tenant must be ${TENANT_RULE}`);
    if (!DIGEST.test(digest))
      throw new Error(`line ${i + 1}: the token's SHA-256 must be 64 lowercase hex digits (malha billing tokens new prints the line)`);
    if (byDigest.has(digest)) throw new Error(`line ${i + 1}: the same token is listed twice`);
    byDigest.set(digest, tenant);
  });
  return byDigest;
}

/**
 * The tokens file, re-read when it changes (checked at most every `checkMs`), so granting or revoking a
 * token needs no restart. A file that stops parsing keeps the last good set and is logged.
 */
export class TenantTokens {
  private readonly file: WatchedFile<Map<string, string>>;

  constructor(path: string, log?: Logger, checkMs = 2_000) {
    this.file = new WatchedFile(path, parseTokensFile, {
      checkMs,
      onReload: (next) => log?.info({ tokens: next.size }, "tenant tokens file reloaded"),
      onError: (err) => log?.error({ err: err.message }, "tenant tokens file unreadable: keeping the tokens loaded before"),
    });
  }

  get size(): number {
    return this.file.current().size;
  }

  tenantOf(token: string): string | undefined {
    return this.file.current().get(tokenDigest(token));
  }
}

/** The tokens file at start: unreadable or malformed stops the process with one line (exit 78). */
export function loadTenantTokens(path: string, log: Logger): TenantTokens {
  let tokens: TenantTokens;
  try {
    tokens = new TenantTokens(path, log);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError("BILLING_TENANT_TOKENS_FILE", code ? `cannot be read (${code})` : `is malformed: ${(err as Error).message}`);
  }
  if (tokens.size === 0) log.warn("the tenant tokens file lists no token yet: every billing call is refused until one is added");
  return tokens;
}

/**
 * Callers by their tenant's API token: `authorization: Bearer bapi_…`. No header is no credential; a
 * malformed, unknown or revoked token is a wrong one (UNAUTHENTICATED).
 */
export function tenantTokenResolver(tokens: TenantTokens): CallerResolver {
  return {
    kind: "tenant",
    proof: () => "the tenant's API token (authorization: Bearer bapi_…)",
    resolve({ header }) {
      const value = header.get("authorization");
      if (value === null || value === "") return undefined;
      const m = /^Bearer\s+(\S+)$/i.exec(value);
      if (!m || !TOKEN.test(m[1]!)) return { rejected: "the authorization header must be Bearer followed by a bapi_ token" };
      const tenant = tokens.tenantOf(m[1]!);
      if (tenant === undefined) return { rejected: "unknown or revoked API token" };
      return { caller: { kind: "tenant", tenant, proof: "API token" } };
    },
  };
}

/**
 * BILLING_TRUST_NETWORK=true: whoever reaches billing was authenticated in front of it and may act for
 * the tenant its request names.
 */
export function trustedNetworkResolver(): CallerResolver {
  return {
    kind: "tenant",
    proof: () => "a network that authenticates callers (BILLING_TRUST_NETWORK)",
    resolve: () => ({ caller: { kind: "tenant", tenant: null, proof: "BILLING_TRUST_NETWORK" } }),
  };
}

/** Every billing method is a tenant's; handlers take the tenant they act for from `actingTenant`. */
export const billingAccess: AccessTable<typeof BillingService> = {
  createBoletoJob: [tenantCaller],
  getBoletoJob: [tenantCaller],
  listBoletoJobItems: [tenantCaller],
  getBoletoJobItem: [tenantCaller],
  getBoletoJobArtifacts: [tenantCaller],
  retryFailedItems: [tenantCaller],
  createRemessaJob: [tenantCaller],
  getRemessaJob: [tenantCaller],
  listRemessaTitulos: [tenantCaller],
  listRemessaFiles: [tenantCaller],
  retryRemessaSublotes: [tenantCaller],
  createRetornoJob: [tenantCaller],
  getRetornoJob: [tenantCaller],
  listRetornoOccurrences: [tenantCaller],
  listJobs: [tenantCaller],
  countJobs: [tenantCaller],
  setWebhookEndpoint: [tenantCaller],
  getWebhookEndpoint: [tenantCaller],
  deleteWebhookEndpoint: [tenantCaller],
  listWebhookDeliveries: [tenantCaller],
  redeliverWebhook: [tenantCaller],
};
