// The tenant a billing call acts for, from the caller the authentication interceptor resolved
// (docs/decisions/0022-authentication-interceptor.md): handlers call this first, before reading anything
// else of the request, and use its answer instead of `req.tenant`.
import { Code, ConnectError, type HandlerContext } from "@connectrpc/connect";
import { callerOf } from "../../../libs/rpc/auth/caller.js";
import { checkTenant } from "../errors.js";

/**
 * With an API token the request may name the token's tenant or none, which means the token's
 * (PERMISSION_DENIED for another); on a network that vouches for callers it must name a valid tenant.
 */
export function actingTenant(ctx: HandlerContext, named: string): string {
  const caller = callerOf(ctx.values);
  // The access table admits tenants only; anything else here is a wiring defect, refused rather than let through.
  if (caller?.kind !== "tenant") throw new ConnectError("billing resolved no tenant caller for this call", Code.Internal);
  if (caller.tenant === null) return checkTenant(named);
  if (named !== "" && named !== caller.tenant)
    throw new ConnectError(`this API token acts for tenant ${caller.tenant}, not for the tenant the request names`, Code.PermissionDenied);
  return caller.tenant;
}
