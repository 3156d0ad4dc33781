// Which billing tenants an operator may see and act for: the users file's `tenants=` field intersected with
// the tenants the console is configured for. Every billing route asks here before it calls billing, so a
// tenant out of scope is refused by the console itself, whatever billing would answer.
import { HttpError } from "./http-kit.js";
import { TENANT, type Operator } from "./users.js";

export function visibleTenants(op: Pick<Operator, "tenants">, configured: readonly string[]): string[] {
  if (op.tenants === undefined) return [];
  if (op.tenants === "*") return [...configured];
  const mine = new Set(op.tenants);
  return configured.filter((t) => mine.has(t));
}

/**
 * The tenant named in a request, if the operator may see it. Out of scope is NOT_FOUND, the same answer as
 * an unknown tenant, so a tenant's existence is not revealed to operators of other tenants.
 */
export function requireTenant(op: Pick<Operator, "tenants">, configured: readonly string[], tenant: string): string {
  if (!TENANT.test(tenant)) throw new HttpError(400, "INVALID_ARGUMENT", "tenant must be 1-64 of A-Z a-z 0-9 . _ -");
  if (!visibleTenants(op, configured).includes(tenant)) throw new HttpError(404, "NOT_FOUND", `no billing tenant ${tenant}`);
  return tenant;
}
