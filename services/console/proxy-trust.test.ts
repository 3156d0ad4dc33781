// The proxy's user header counts only from the proxy's addresses once CONSOLE_TRUST_PROXY_CIDRS is set.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, describe, expect, it } from "vitest";
import { EnvReader } from "../../libs/config/env.js";
import { createLogger } from "../../libs/log/logger.js";
import { readConsoleConfig } from "./config.js";
import { startConsoleServer } from "./http.js";
import { parseProxyCidrs } from "./proxy-trust.js";
import { SessionSigner } from "./session.js";
import { OperatorDirectory } from "./users.js";

const dir = mkdtempSync(join(tmpdir(), "malha-console-proxy-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("trusted proxy addresses", () => {
  it("matches IPv4 and IPv6 CIDRs, single hosts, and IPv4 clients seen on a dual-stack socket", () => {
    const p = parseProxyCidrs(" 10.0.0.0/8, 192.168.1.10 ,fd00::/8");
    expect(["10.1.2.3", "::ffff:10.9.9.9", "192.168.1.10", "fd12::1"].map((a) => p.allows(a))).toEqual([true, true, true, true]);
    expect(["11.0.0.1", "192.168.1.11", "::1", "127.0.0.1", undefined].map((a) => p.allows(a))).toEqual([
      false,
      false,
      false,
      false,
      false,
    ]);
  });

  it.each([
    ["10.0.0.0/33", /"10.0.0.0\/33", not an address or CIDR/],
    ["proxy.internal", /"proxy.internal", not an address or CIDR/],
    ["10.0.0.0/8/1", /not an address or CIDR/],
    [" , ", /lists no address/],
  ])("refuses %j naming the entry", (value, message) => {
    expect(() => parseProxyCidrs(value)).toThrow(message);
  });

  it("is configuration only together with the header it guards", () => {
    mkdirSync(join(dir, "app"), { recursive: true });
    writeFileSync(join(dir, "app", "index.html"), "<!doctype html>");
    const env = { CONSOLE_STATIC_DIR: join(dir, "app"), CONSOLE_USERS_FILE: join(dir, "users"), CONSOLE_SESSION_SECRET: "k".repeat(32) };
    expect(() => readConsoleConfig(new EnvReader({ ...env, CONSOLE_TRUST_PROXY_CIDRS: "10.0.0.0/8" }))).toThrow(
      "CONSOLE_TRUST_PROXY_CIDRS needs CONSOLE_TRUST_PROXY_USER_HEADER",
    );
    expect(() =>
      readConsoleConfig(new EnvReader({ ...env, CONSOLE_TRUST_PROXY_USER_HEADER: "X-User", CONSOLE_TRUST_PROXY_CIDRS: "nope" })),
    ).toThrow(/CONSOLE_TRUST_PROXY_CIDRS.*"nope", not an address or CIDR/);
    const c = readConsoleConfig(
      new EnvReader({ ...env, CONSOLE_TRUST_PROXY_USER_HEADER: "X-User", CONSOLE_TRUST_PROXY_CIDRS: "127.0.0.0/8" }),
    );
    expect(c.trustProxyFrom?.cidrs).toEqual(["127.0.0.0/8"]);
  });

  it("ignores the header from an address outside the list, and logs it", async () => {
    writeFileSync(join(dir, "users"), "sso@x operator -\n");
    const lines: string[] = [];
    const start = (cidrs: string) =>
      startConsoleServer(
        {
          config: {
            staticDir: join(dir, "app"),
            cookieSecure: false,
            trustProxyUserHeader: "x-user",
            trustProxyFrom: parseProxyCidrs(cidrs),
          },
          operators: new OperatorDirectory(join(dir, "users")),
          sessions: new SessionSigner(Buffer.alloc(32, 1), 60_000),
          routes: [],
          log: createLogger({ service: "console", destination: new Writable({ write: (c, _e, cb) => (lines.push(String(c)), cb()) }) }),
        },
        "127.0.0.1",
        0,
      );
    const elsewhere = await start("10.0.0.0/8");
    const loopback = await start("127.0.0.1");
    try {
      const me = (port: number) => fetch(`http://127.0.0.1:${port}/api/me`, { headers: { "x-user": "sso@x" } });
      expect((await me(elsewhere.port)).status).toBe(401);
      expect(lines.join("")).toContain("console proxy user header from an untrusted address ignored");
      expect(await (await me(loopback.port)).json()).toMatchObject({ user: "sso@x", role: "operator" });
    } finally {
      await elsewhere.close();
      await loopback.close();
    }
  });
});
