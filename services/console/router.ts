// Routes of the console's JSON API. Each route module (routes/*.ts) returns a list of these; main.ts picks the
// modules and http.ts dispatches. A route names the role its method needs, so no handler can forget the check.
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../../libs/log/logger.js";
import type { Role } from "./api-types.js";
import type { Operator } from "./users.js";

export interface RouteContext {
  req: IncomingMessage;
  res: ServerResponse;
  /** The path's captured groups, percent-decoded. */
  params: string[];
  query: URLSearchParams;
  /** The signed-in operator, already checked against the route's role. */
  op: Operator;
  log: Logger;
}

export interface Route {
  method: "GET" | "POST";
  /** Matched against the whole decoded path, e.g. /^\/api\/municipios\/([^/]+)\/sync$/. */
  path: RegExp;
  /** The least role that may call it: "read-only" (any signed-in user), "operator" or "admin". */
  role: Role;
  /** For the refusal's message and log: "sync a municipality". */
  action?: string;
  handle(ctx: RouteContext): Promise<void>;
}

const RANK: Record<Role, number> = { "read-only": 0, operator: 1, admin: 2 };

export const hasRole = (op: Operator, least: Role): boolean => RANK[op.role] >= RANK[least];

export const get = (path: RegExp, handle: Route["handle"], role: Role = "read-only"): Route => ({ method: "GET", path, role, handle });

export const post = (path: RegExp, role: Role, action: string, handle: Route["handle"]): Route => ({
  method: "POST",
  path,
  role,
  action,
  handle,
});
