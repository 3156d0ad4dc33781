// The decision the authentication interceptor makes for each call, as a function of its credentials, so
// every outcome is testable without a socket (docs/decisions/0022-authentication-interceptor.md).
import { Code, ConnectError } from "@connectrpc/connect";
import type { PeerIdentity } from "../context.js";
import type { AccessRule, MethodAccess } from "./access.js";
import { type Caller, type CallerKind, callerName } from "./caller.js";

/** What a call presents: its headers and, under mTLS, the verified client certificate. */
export interface CallCredentials {
  header: Headers;
  peer: PeerIdentity | undefined;
}

/** undefined: the call carries no credential of the resolver's kind; `rejected`: it carries a wrong one. */
export type Resolution = { caller: Caller } | { rejected: string } | undefined;

export interface CallerResolver {
  readonly kind: CallerKind;
  /** How a caller proves this kind to a method with `rule`, for refusals: "the x-… header (SETTING)". */
  proof(rule: AccessRule): string;
  resolve(call: CallCredentials): Resolution;
}

/** A service's ways to authenticate callers. */
export interface CallerAuth {
  /**
   * Every one is asked: a wrong credential refuses the call, and the first caller the method admits is
   * the call's (an operator's tool may send an admin secret and a mesh secret alike).
   */
  resolvers: readonly CallerResolver[];
  /** Why no resolver of a kind is configured: the refusal of a method only that kind may call says it. */
  unconfigured?: Partial<Record<CallerKind, string>>;
}

const PHRASE: Record<CallerKind, (rule: AccessRule) => string> = {
  tenant: () => "a tenant's call",
  admin: () => "an administrative call",
  meshPeer: (rule) => `a call for the mesh peer ${rule.kind === "meshPeer" ? rule.names.map(quote).join(" or ") : ""}`,
};

/**
 * The caller of a call to `method` (its proto name), or undefined for a public method; throws
 * PERMISSION_DENIED when no caller kind the method admits is configured (nobody may call it) or the
 * caller is of a kind the method does not admit, UNAUTHENTICATED when the call carries no credential
 * or a wrong one.
 */
export function authorize(method: string, access: MethodAccess, auth: CallerAuth, call: CallCredentials): Caller | undefined {
  if (access === "public") return undefined;
  const usable = access.filter((rule) => auth.resolvers.some((r) => r.kind === rule.kind));
  if (usable.length === 0) {
    const reasons = unique(access.map((rule) => auth.unconfigured?.[rule.kind] ?? `this service authenticates no ${rule.kind} caller`));
    throw new ConnectError(`${method} is disabled: ${reasons.join("; ")}`, Code.PermissionDenied);
  }
  const what = `${method} is ${unique(access.map((rule) => PHRASE[rule.kind](rule))).join(" or ")}`;
  const callers: Caller[] = [];
  for (const resolver of auth.resolvers) {
    const found = resolver.resolve(call);
    if (found === undefined) continue;
    if ("rejected" in found) throw new ConnectError(`${what}: ${found.rejected}`, Code.Unauthenticated);
    callers.push(found.caller);
  }
  const needs = unique(usable.flatMap((rule) => auth.resolvers.filter((r) => r.kind === rule.kind).map((r) => r.proof(rule))));
  const refusal = `${what} and needs ${needs.join(" or ")}; the caller is`;
  if (callers.length === 0)
    throw new ConnectError(`${refusal} '${printable(call.peer?.subjectCommonName ?? "no client certificate")}'`, Code.Unauthenticated);
  const admitted = callers.find((caller) => access.some((rule) => admits(rule, caller)));
  if (admitted === undefined) throw new ConnectError(`${refusal} '${printable(callerName(callers[0]!))}'`, Code.PermissionDenied);
  return admitted;
}

function admits(rule: AccessRule, caller: Caller): boolean {
  if (rule.kind !== caller.kind) return false;
  return rule.kind !== "meshPeer" || (caller.kind === "meshPeer" && rule.names.includes(caller.name));
}

const unique = (items: string[]): string[] => [...new Set(items)];
const quote = (name: string) => `'${name}'`;

/** Names from certificates and headers go into messages and logs: printable ASCII, bounded. */
export const printable = (text: string): string => text.replace(/[^\x20-\x7e]/g, "?").slice(0, 128);
