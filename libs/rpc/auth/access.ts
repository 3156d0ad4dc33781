// The per-method access table every served service declares (docs/decisions/0022-authentication-interceptor.md).
import type { DescService } from "@bufbuild/protobuf";

/** One kind of caller a method admits; a mesh peer only by one of the names listed. */
export type AccessRule = { kind: "tenant" } | { kind: "admin" } | { kind: "meshPeer"; names: readonly string[] };

/** `public`: no credential is read (health-like reads open to the mesh); else the kinds admitted. */
export type MethodAccess = "public" | readonly [AccessRule, ...AccessRule[]];

/** Every method of `S` by its local name (the handler's name): a method left out does not compile. */
export type AccessTable<S extends DescService> = { readonly [K in keyof S["method"]]: MethodAccess };

export const tenantCaller: AccessRule = { kind: "tenant" };
export const adminCaller: AccessRule = { kind: "admin" };
export const meshPeerCaller = (...names: [string, ...string[]]): AccessRule => ({ kind: "meshPeer", names });

/**
 * Refuses a table that does not name every method of the service exactly once with a non-empty rule
 * (fail closed): a method added to the proto is refused at start until someone decides who may call it.
 * Types catch this too; this catches tables built at run time or cast.
 */
export function checkAccessTable(service: DescService, table: Readonly<Record<string, MethodAccess | undefined>>): void {
  const problems: string[] = [];
  const names = new Set(service.methods.map((m) => m.localName));
  for (const m of service.methods) {
    const access = table[m.localName];
    if (access === undefined) problems.push(`${m.name} has no entry`);
    else if (access !== "public" && (!Array.isArray(access) || access.length === 0)) problems.push(`${m.name} admits nobody`);
    else if (access !== "public" && access.some((r) => r.kind === "meshPeer" && r.names.length === 0))
      problems.push(`${m.name} admits mesh peers without naming one`);
  }
  for (const key of Object.keys(table)) if (!names.has(key)) problems.push(`${key} is not a method of the service`);
  if (problems.length > 0) throw new Error(`the access table of ${service.typeName} is incomplete: ${problems.join("; ")}`);
}

/** Every method public: for the services the server adds itself (health, reflection). */
export function publicTable(service: DescService): Record<string, MethodAccess> {
  return Object.fromEntries(service.methods.map((m) => [m.localName, "public" as const]));
}
