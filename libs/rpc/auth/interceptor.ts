import type { Interceptor } from "@connectrpc/connect";
import { permissionDenied } from "../errors.js";
import { peerIdentityKey } from "../context.js";
import type { MethodAccess } from "./access.js";
import { authorize, type CallerAuth } from "./authorize.js";
import { callerKey } from "./caller.js";

/** Access tables by service type name (`malha.vault.v1.VaultService`). */
export type AccessTables = ReadonlyMap<string, Readonly<Record<string, MethodAccess | undefined>>>;

/**
 * The one authentication step of every call, unary or streaming: it looks the method up in its service's
 * access table, resolves the caller from the headers and the client certificate, refuses what the table
 * does not admit, and leaves the caller in the call's context values for the handler (`callerOf`).
 * Requests are never rewritten. docs/decisions/0022-authentication-interceptor.md.
 */
export function authInterceptor(tables: AccessTables, auth: CallerAuth): Interceptor {
  return (next) => async (req) => {
    const access = tables.get(req.service.typeName)?.[req.method.localName];
    // Unreachable when the server was built from checked tables; refused rather than let through.
    if (access === undefined) throw permissionDenied(`${req.method.name} has no entry in the access table of ${req.service.typeName}`);
    const caller = authorize(req.method.name, access, auth, { header: req.header, peer: req.contextValues.get(peerIdentityKey) });
    if (caller !== undefined) req.contextValues.set(callerKey, caller);
    return next(req);
  };
}
