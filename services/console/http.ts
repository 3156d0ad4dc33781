// The console over plain HTTP/1.1: the built web app, and a small JSON API under /api/ for it.
// Every API call needs a session (or a user header set by a trusted identity-aware proxy); every POST needs
// the CSRF header and, except signing in, the role its route names. The routes come from routes/*.ts.
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { extname, join, normalize, sep } from "node:path";
import { ConnectError } from "@connectrpc/connect";
import type { Logger } from "../../libs/log/logger.js";
import { CSRF_HEADER, type Me, type SignInRequest } from "./api-types.js";
import type { ConsoleConfig } from "./config.js";
import { apiError, fromConnect, HttpError, json, readJson, SECURITY_HEADERS } from "./http-kit.js";
import { hasRole, type Route } from "./router.js";
import { COOKIE_NAME, readCookie, SessionSigner } from "./session.js";
import type { Operator, OperatorDirectory } from "./users.js";

export interface ConsoleDeps {
  config: Pick<ConsoleConfig, "staticDir" | "cookieSecure" | "trustProxyUserHeader" | "trustProxyFrom">;
  operators: OperatorDirectory;
  sessions: SessionSigner;
  /** The API beyond signing in: every route module's list, e.g. [...syncRoutes(sync)]. */
  routes: Route[];
  log: Logger;
}

export interface ConsoleServer {
  port: number;
  close(): Promise<void>;
}

function parseSignIn(body: unknown): SignInRequest {
  const b = body as Partial<Record<keyof SignInRequest, unknown>> | null;
  if (typeof b?.user !== "string" || b.user === "") throw new HttpError(400, "INVALID_ARGUMENT", "user is required");
  if (typeof b.token !== "string" || b.token === "") throw new HttpError(400, "INVALID_ARGUMENT", "token is required");
  if (b.token.length > 512) throw new HttpError(400, "INVALID_ARGUMENT", "token is longer than 512 characters");
  return { user: b.user, token: b.token };
}

const CONTENT_TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".json": "application/json; charset=utf-8",
  ".woff2": "font/woff2",
};

export function consoleHandler(deps: ConsoleDeps) {
  const { operators, sessions, log, config, routes } = deps;

  /** Who is calling: the proxy's header when trusted, else the session cookie; the role always from the file. */
  function caller(req: IncomingMessage): Operator | undefined {
    if (config.trustProxyUserHeader) {
      const header = req.headers[config.trustProxyUserHeader];
      if (typeof header === "string" && header !== "") {
        if (!config.trustProxyFrom || config.trustProxyFrom.allows(req.socket.remoteAddress)) return operators.get(header);
        // Someone reached the console past the proxy and named a user: ignored, and worth a line.
        log.warn(
          { remote: req.socket.remoteAddress, header: config.trustProxyUserHeader },
          "console proxy user header from an untrusted address ignored",
        );
      }
    }
    const claims = sessions.verify(readCookie(req.headers.cookie, COOKIE_NAME));
    return claims ? operators.get(claims.user) : undefined;
  }

  function requireCaller(req: IncomingMessage): Operator {
    const op = caller(req);
    if (!op) throw new HttpError(401, "UNAUTHENTICATED", "sign in first");
    return op;
  }

  const me = (op: Operator): Me => ({
    user: op.user,
    role: op.role,
    canAct: hasRole(op, "operator"),
    canAdmin: hasRole(op, "admin"),
  });

  async function api(req: IncomingMessage, res: ServerResponse, path: string, query: URLSearchParams): Promise<void> {
    const method = req.method ?? "GET";
    if (method === "POST" && req.headers[CSRF_HEADER] !== "1") {
      throw new HttpError(403, "CSRF", `POST requests need the header ${CSRF_HEADER}: 1`);
    }
    if (path === "/api/session" && method === "POST") {
      const { user, token } = parseSignIn(await readJson(req));
      const op = operators.authenticate(user, token);
      if (!op) {
        log.warn({ actor: user }, "console sign-in refused");
        throw new HttpError(401, "UNAUTHENTICATED", "unknown user or wrong token");
      }
      log.info({ actor: op.user, role: op.role }, "console sign-in");
      json(res, 200, me(op), { "Set-Cookie": sessions.cookie(sessions.issue(op.user), config.cookieSecure) });
      return;
    }
    if (path === "/api/session/end" && method === "POST") {
      json(res, 200, {}, { "Set-Cookie": SessionSigner.clearCookie(config.cookieSecure) });
      return;
    }
    if (path === "/api/me" && method === "GET") {
      json(res, 200, me(requireCaller(req)));
      return;
    }
    for (const route of routes) {
      if (route.method !== method) continue;
      const m = route.path.exec(path);
      if (!m) continue;
      const op = requireCaller(req);
      if (!hasRole(op, route.role)) {
        const action = route.action ?? `${method} ${path}`;
        log.warn({ actor: op.user, role: op.role, action }, `console action refused: role ${op.role}`);
        const who = route.role === "admin" ? "administrators" : "operators";
        throw new HttpError(403, "PERMISSION_DENIED", `role ${op.role} cannot ${action}; only ${who} can`);
      }
      await route.handle({ req, res, params: m.slice(1), query, op, log });
      return;
    }
    throw new HttpError(404, "NOT_FOUND", `no ${method} ${path}`);
  }

  async function staticFile(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    if (req.method !== "GET" && req.method !== "HEAD") throw new HttpError(405, "METHOD_NOT_ALLOWED", "only GET and HEAD");
    const rel = normalize(path).replace(/^([/\\])+/, "");
    let file = join(config.staticDir, rel);
    if (!file.startsWith(config.staticDir + sep) && file !== config.staticDir) throw new HttpError(404, "NOT_FOUND", "not found");
    let info = await stat(file).catch(() => undefined);
    // Client-side routes (no extension) get the app; a missing asset is a plain 404.
    if (!info?.isFile()) {
      if (extname(rel) !== "") throw new HttpError(404, "NOT_FOUND", "not found");
      file = join(config.staticDir, "index.html");
      info = await stat(file);
    }
    const hashed = rel.startsWith("assets/");
    res.writeHead(200, {
      ...SECURITY_HEADERS,
      "Content-Type": CONTENT_TYPES[extname(file)] ?? "application/octet-stream",
      "Content-Length": String(info.size),
      "Cache-Control": hashed ? "public, max-age=31536000, immutable" : "no-cache",
    });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    createReadStream(file).pipe(res);
  }

  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    try {
      let path: string;
      const url = new URL(req.url ?? "/", "http://console");
      try {
        path = decodeURIComponent(url.pathname);
      } catch {
        throw new HttpError(400, "INVALID_ARGUMENT", "the request path is not valid percent-encoding");
      }
      if (path === "/api" || path.startsWith("/api/")) await api(req, res, path, url.searchParams);
      else await staticFile(req, res, path);
    } catch (err) {
      const e = err instanceof HttpError ? err : err instanceof ConnectError ? fromConnect(err) : undefined;
      if (!e) log.error({ err, url: req.url }, "console request failed");
      else if (e.status >= 500) log.warn({ url: req.url, code: e.code, message: e.message }, "console request failed upstream");
      if (res.headersSent) {
        res.destroy();
        return;
      }
      json(res, e?.status ?? 500, apiError(e?.code ?? "INTERNAL", e?.message ?? "internal error"));
    }
  };
}

export async function startConsoleServer(deps: ConsoleDeps, host: string, port: number): Promise<ConsoleServer> {
  const handler = consoleHandler(deps);
  const server: Server = createServer({ requestTimeout: 30_000, headersTimeout: 10_000 }, (req, res) => void handler(req, res));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
