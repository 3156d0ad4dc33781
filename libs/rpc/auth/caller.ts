// Who is calling, as the authentication interceptor resolved it (docs/decisions/0022-authentication-interceptor.md).
import { type ContextValues, createContextKey } from "@connectrpc/connect";

/**
 * The kinds of caller the mesh knows. `tenant`: a billing client acting for one tenant (its API token),
 * or for any tenant it names when the deployment's network vouches for callers (`tenant: null`).
 * `admin`: an operator allowed to change what a service holds. `meshPeer`: another service of the mesh,
 * by the name its client certificate or shared secret proves.
 */
export type Caller =
  | { kind: "tenant"; tenant: string | null; proof: string }
  | { kind: "admin"; name: string; proof: string }
  | { kind: "meshPeer"; name: string; proof: string };

export type CallerKind = Caller["kind"];

/** Set by the interceptor before the handler runs; unset on public methods. */
export const callerKey = createContextKey<Caller | undefined>(undefined, { description: "the authenticated caller" });

/** The caller the interceptor resolved for this call (handlers: `callerOf(ctx.values)`). */
export const callerOf = (values: ContextValues): Caller | undefined => values.get(callerKey);

/** How messages and logs name a caller. */
export function callerName(caller: Caller): string {
  if (caller.kind !== "tenant") return caller.name;
  return caller.tenant === null ? "a caller the network vouches for" : `tenant ${caller.tenant}`;
}
