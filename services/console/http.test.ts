// The HTTP layer on a real socket with a stand-in for the coordinator-backed view: who may call what.
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "../../libs/log/logger.js";
import { CSRF_HEADER } from "./api-types.js";
import { startConsoleServer, type ConsoleServer } from "./http.js";
import { certificateRoutes } from "./routes/certificates.js";
import { syncRoutes } from "./routes/sync.js";
import type { CertificatesView } from "./certificates-view.js";
import { SessionSigner } from "./session.js";
import type { SyncView } from "./sync-view.js";
import { OperatorDirectory, tokenDigest } from "./users.js";

const dir = mkdtempSync(join(tmpdir(), "malha-console-http-"));
const staticDir = join(dir, "app");
const logLines: string[] = [];
const calls: string[] = [];
let server: ConsoleServer;
let base: string;

const sync: SyncView = {
  listFeeds: async () => ({ feeds: [], at: "2026-12-01T12:00:00.000Z" }),
  syncAll: async (actor) => (calls.push(`all ${actor}`), { accepted: 1, skipped: 0, decisions: [] }),
  syncNow: async (actor, ibge) => {
    calls.push(`now ${actor} ${ibge}`);
    if (ibge === "9999999") throw new ConnectError("municipality 9999999 is not registered", Code.NotFound);
    return { accepted: 0, skipped: 1, decisions: [] };
  },
  cancel: async (actor, feed) => (calls.push(`cancel ${actor} ${feed.ibge}`), { dequeued: true, nothingToCancel: false }),
};

const certificates: CertificatesView = {
  list: async () => ({ certificates: [] }),
  import: async (actor, ibge, pfx, password) => {
    calls.push(`import ${actor} ${ibge} ${pfx.toString()} ${password.length}`);
    const certificate = {
      id: "c1",
      ibge,
      cnpj: "",
      subject: "",
      issuer: "",
      serialNumber: "",
      status: "active" as const,
      fingerprint: "f",
    };
    return { certificate, created: true, activated: true };
  },
};

beforeAll(async () => {
  mkdirSync(join(staticDir, "assets"), { recursive: true });
  writeFileSync(join(staticDir, "index.html"), "<!doctype html><title>app</title>");
  writeFileSync(join(staticDir, "assets", "a.js"), "export {};");
  writeFileSync(join(dir, "secret.txt"), "outside");
  const users = join(dir, "users");
  writeFileSync(
    users,
    `ana operator ${tokenDigest("tok-ana").toString("hex")}\nleo read-only ${tokenDigest("tok-leo").toString("hex")}\nsso@x operator -\nada admin ${tokenDigest("tok-ada").toString("hex")}\n`,
  );
  const log = createLogger({ service: "console", destination: new Writable({ write: (c, _e, cb) => (logLines.push(String(c)), cb()) }) });
  server = await startConsoleServer(
    {
      config: { staticDir, cookieSecure: false, trustProxyUserHeader: "x-forwarded-user" },
      operators: new OperatorDirectory(users),
      sessions: new SessionSigner(Buffer.alloc(32, 3), 3_600_000),
      routes: [...syncRoutes(sync), ...certificateRoutes(certificates)],
      log,
    },
    "127.0.0.1",
    0,
  );
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(() => server?.close());

const post = (path: string, init: { cookie?: string; body?: unknown; csrf?: boolean; headers?: Record<string, string> } = {}) =>
  fetch(`${base}${path}`, {
    method: "POST",
    headers: {
      ...(init.csrf === false ? {} : { [CSRF_HEADER]: "1" }),
      ...(init.cookie ? { cookie: init.cookie } : {}),
      "content-type": "application/json",
      ...init.headers,
    },
    ...(init.body !== undefined ? { body: JSON.stringify(init.body) } : {}),
  });

async function signIn(user: string, token: string): Promise<string> {
  const res = await post("/api/session", { body: { user, token } });
  expect(res.status).toBe(200);
  const cookie = res.headers.get("set-cookie")!;
  expect(cookie).toMatch(/^malha_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=3600$/);
  return cookie.split(";")[0]!;
}

describe("console HTTP API", () => {
  it("signs in with a token and refuses a wrong one or a proxy-only user, naming the missing field", async () => {
    const cookie = await signIn("ana", "tok-ana");
    expect(await (await fetch(`${base}/api/me`, { headers: { cookie } })).json()).toEqual({
      user: "ana",
      role: "operator",
      canAct: true,
      canAdmin: false,
    });
    expect((await post("/api/session", { body: { user: "ana", token: "nope" } })).status).toBe(401);
    expect((await post("/api/session", { body: { user: "sso@x", token: "-" } })).status).toBe(401);
    const missing = await post("/api/session", { body: { user: "ana" } });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: { code: "INVALID_ARGUMENT", message: "token is required" } });
    expect(logLines.join("")).not.toContain("tok-ana");
  });

  it("lets operators press buttons, refuses read-only with 403 and any POST without the CSRF header", async () => {
    const ana = await signIn("ana", "tok-ana");
    const leo = await signIn("leo", "tok-leo");
    expect((await post("/api/sync-all", { cookie: ana })).status).toBe(200);
    expect((await post("/api/sync-all", { cookie: leo })).status).toBe(403);
    expect((await post("/api/sync-all", { cookie: ana, csrf: false })).status).toBe(403);
    expect((await post("/api/municipios/3550308/sync", { cookie: leo })).status).toBe(403);
    expect(calls).toEqual(["all console:ana"]);
    expect((await fetch(`${base}/api/feeds`, { headers: { cookie: leo } })).status).toBe(200);
    expect((await fetch(`${base}/api/feeds`)).status).toBe(401);
  });

  it("validates the ibge and passes the coordinator's NOT_FOUND through as 404 with its message", async () => {
    const ana = await signIn("ana", "tok-ana");
    const bad = await post("/api/municipios/35503/sync", { cookie: ana });
    expect([bad.status, await bad.json()]).toEqual([400, { error: { code: "INVALID_ARGUMENT", message: "ibge must be 7 digits" } }]);
    const unknown = await post("/api/municipios/9999999/sync", { cookie: ana });
    expect([unknown.status, await unknown.json()]).toEqual([
      404,
      { error: { code: "NOT_FOUND", message: "municipality 9999999 is not registered" } },
    ]);
  });

  it("lets only administrators import a certificate; read-only and operators get 403 and are logged", async () => {
    const [ana, leo, ada] = await Promise.all([signIn("ana", "tok-ana"), signIn("leo", "tok-leo"), signIn("ada", "tok-ada")]);
    expect(await (await fetch(`${base}/api/me`, { headers: { cookie: ada } })).json()).toEqual({
      user: "ada",
      role: "admin",
      canAct: true,
      canAdmin: true,
    });
    const body = { pfxBase64: Buffer.from("PFX").toString("base64"), password: "senha-secreta" };
    for (const cookie of [ana, leo]) {
      const refused = await post("/api/municipios/3550308/certificados", { cookie, body });
      expect(refused.status).toBe(403);
      expect(((await refused.json()) as { error: { message: string } }).error.message).toMatch(/only administrators can$/);
    }
    calls.length = 0;
    const ok = await post("/api/municipios/3550308/certificados", { cookie: ada, body });
    expect(ok.status).toBe(200);
    expect(calls).toEqual(["import console:ada 3550308 PFX 13"]);
    const bad = await post("/api/municipios/3550308/certificados", { cookie: ada, body: { pfxBase64: "%%%", password: "" } });
    expect([bad.status, await bad.json()]).toEqual([400, { error: { code: "INVALID_ARGUMENT", message: "pfxBase64 is not base64" } }]);
    const logs = logLines.join("");
    expect(logs).toMatch(/"actor":"ana","role":"operator","action":"import a certificate".*"msg":"console action refused: role operator"/);
    expect(logs).toMatch(/"actor":"ada","action":"import-certificate","ibge":"3550308","certificateId":"c1"/);
    expect(logs).not.toContain("senha-secreta");
  });

  it("checks the feed list's filters and Cancelar's feed before calling the coordinator", async () => {
    const leo = await signIn("leo", "tok-leo");
    const ana = await signIn("ana", "tok-ana");
    const badState = await fetch(`${base}/api/feeds?state=sleeping`, { headers: { cookie: leo } });
    expect(badState.status).toBe(400);
    expect(((await badState.json()) as { error: { message: string } }).error.message).toMatch(/^state must be one of idle, queued/);
    expect((await fetch(`${base}/api/feeds?uf=sp`, { headers: { cookie: leo } })).status).toBe(400);
    expect((await fetch(`${base}/api/feeds?pageSize=5000`, { headers: { cookie: leo } })).status).toBe(400);
    expect((await post("/api/feeds/3550308/producao/distribuicao/cancel", { cookie: leo })).status).toBe(403);
    const badFeed = await post("/api/feeds/3550308/homologacao/distribuicao/cancel", { cookie: ana });
    expect([badFeed.status, ((await badFeed.json()) as { error: { message: string } }).error.message]).toEqual([
      400,
      "ambiente must be one of producao, producao_restrita",
    ]);
    calls.length = 0;
    expect((await post("/api/feeds/3550308/producao/distribuicao/cancel", { cookie: ana })).status).toBe(200);
    expect(calls).toEqual(["cancel console:ana 3550308"]);
  });

  it("trusts the proxy's user header for listed users only", async () => {
    const me = await fetch(`${base}/api/me`, { headers: { "x-forwarded-user": "sso@x" } });
    expect(await me.json()).toEqual({ user: "sso@x", role: "operator", canAct: true, canAdmin: false });
    expect((await fetch(`${base}/api/me`, { headers: { "x-forwarded-user": "mallory" } })).status).toBe(401);
    expect((await post("/api/sync-all", { headers: { "x-forwarded-user": "sso@x" } })).status).toBe(200);
    expect(logLines.join("")).toMatch(/"actor":"sso@x","action":"sync-all"/);
  });

  it("serves the app with a strict CSP, client routes as index.html, and nothing outside its directory", async () => {
    const index = await fetch(`${base}/`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-security-policy")).toContain("default-src 'self'");
    expect(await (await fetch(`${base}/feeds/3550308`)).text()).toContain("<title>app</title>");
    expect((await fetch(`${base}/assets/a.js`)).headers.get("cache-control")).toContain("immutable");
    expect((await fetch(`${base}/assets/missing.js`)).status).toBe(404);
    expect((await fetch(`${base}/..%2fsecret.txt`)).status).toBe(404);
    expect((await fetch(`${base}/api/nothing`)).status).toBe(404);
    expect((await fetch(`${base}/%E0%A4%A`)).status).toBe(400);
  });
});
