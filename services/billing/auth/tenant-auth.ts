// Who may act for a tenant. With a tokens file every call carries `authorization: Bearer bapi_…` (the
// seed's bapi_ token) and may only name the tenant its token belongs to; the file holds the tokens'
// SHA-256, never the tokens. Without it the deployment says explicitly that its network authenticates
// callers (BILLING_TRUST_NETWORK=true); neither is a configuration error (fail closed).
// docs/decisions/0013-tenant-api-tokens.md.
import { createHash, randomBytes } from "node:crypto";
import { readFileSync, statSync } from "node:fs";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import type { DescService } from "@bufbuild/protobuf";
import { ConfigError } from "../../../libs/config/env.js";
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
  private byDigest: Map<string, string>;
  private stamp: string;
  private checkedAt = 0;

  constructor(
    private readonly path: string,
    private readonly log?: Logger,
    private readonly checkMs = 2_000,
  ) {
    this.stamp = this.stat();
    this.byDigest = parseTokensFile(readFileSync(path, "utf8"));
  }

  get size(): number {
    return this.byDigest.size;
  }

  private stat(): string {
    const s = statSync(this.path);
    return `${s.mtimeMs}:${s.size}:${s.ino}`;
  }

  private refresh(): void {
    const now = Date.now();
    if (now - this.checkedAt < this.checkMs) return;
    this.checkedAt = now;
    try {
      const stamp = this.stat();
      if (stamp === this.stamp) return;
      const next = parseTokensFile(readFileSync(this.path, "utf8"));
      this.byDigest = next;
      this.stamp = stamp;
      this.log?.info({ tokens: next.size }, "tenant tokens file reloaded");
    } catch (err) {
      this.log?.error({ err: (err as Error).message }, "tenant tokens file unreadable: keeping the tokens loaded before");
    }
  }

  tenantOf(token: string): string | undefined {
    this.refresh();
    return this.byDigest.get(tokenDigest(token));
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

const unauthenticated = (why: string) => new ConnectError(why, Code.Unauthenticated);

/** The tenant the caller's token grants; throws UNAUTHENTICATED without a known token. */
export function callerTenant(tokens: TenantTokens, headers: Headers): string {
  const header = headers.get("authorization");
  if (header === null || header === "") throw unauthenticated("billing needs the tenant's API token: send authorization: Bearer bapi_…");
  const m = /^Bearer\s+(\S+)$/i.exec(header);
  if (!m || !TOKEN.test(m[1]!)) throw unauthenticated("the authorization header must be Bearer followed by a bapi_ token");
  const tenant = tokens.tenantOf(m[1]!);
  if (tenant === undefined) throw unauthenticated("unknown or revoked API token");
  return tenant;
}

type UnaryWithTenant = (req: { tenant?: string }, ctx: HandlerContext) => unknown;

/**
 * Every method of `impl` behind the token check: the request's tenant must be the token's (an empty one
 * is filled in from it), else PERMISSION_DENIED. Every billing request names its tenant; the check reads
 * it from the request, so only unary methods can be guarded (refused at wiring otherwise).
 */
export function requireTenantTokens<S extends DescService>(
  service: S,
  impl: Partial<ServiceImpl<S>>,
  tokens: TenantTokens,
): Partial<ServiceImpl<S>> {
  const streaming = service.methods.filter((m) => m.methodKind !== "unary").map((m) => m.name);
  if (streaming.length > 0) throw new Error(`tenant tokens guard unary methods only; ${service.typeName} streams ${streaming.join(", ")}`);
  const guarded: Record<string, unknown> = {};
  for (const [name, method] of Object.entries(impl as unknown as Record<string, UnaryWithTenant>)) {
    guarded[name] = (req: { tenant?: string }, ctx: HandlerContext) => {
      const tenant = callerTenant(tokens, ctx.requestHeader);
      if (req.tenant === undefined || req.tenant === "") req.tenant = tenant;
      else if (req.tenant !== tenant)
        throw new ConnectError(`this API token acts for tenant ${tenant}, not for the tenant the request names`, Code.PermissionDenied);
      return method.call(impl, req, ctx);
    };
  }
  return guarded as Partial<ServiceImpl<S>>;
}
