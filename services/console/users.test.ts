import { mkdtempSync, writeFileSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { OperatorDirectory, parseUsers, tokenDigest, UsersFileError } from "./users.js";
import { readCookie, SessionSigner } from "./session.js";

const hex = (token: string) => tokenDigest(token).toString("hex");

describe("operators file", () => {
  it("reads users, roles and digests, skipping comments and blank lines", () => {
    const users = parseUsers(
      `# who may sign in\n\nana operator ${hex("a")}\nleo read-only ${hex("b")}\nsso@x.gov.br operator -\n`,
      "users",
    );
    expect([...users.values()].map((u) => [u.user, u.role, u.tokenDigest !== undefined])).toEqual([
      ["ana", "operator", true],
      ["leo", "read-only", true],
      ["sso@x.gov.br", "operator", false],
    ]);
  });

  it("reads the billing tenants a user may see: a list, every one (*), or none when absent", () => {
    const users = parseUsers(
      `ana operator ${hex("a")} tenants=acme,beta,acme\nbia admin - tenants=*\nleo read-only ${hex("b")}\n`,
      "users",
    );
    expect(users.get("ana")?.tenants).toEqual(["acme", "beta"]);
    expect(users.get("bia")?.tenants).toBe("*");
    expect(users.get("leo")?.tenants).toBeUndefined();
  });

  it.each([
    ["ana operator", /line 1: expected "<user> <role> <sha256 of token> \[tenants=…\]", found 2 fields/],
    [`ana operator ${hex("a")} acme`, /line 1: the fourth field must be tenants=/],
    [`ana operator ${hex("a")} tenants=acme,a/b`, /line 1: tenant "a\/b" must be/],
    [`ana operator ${hex("a")} tenants=`, /line 1: tenant "" must be/],
    [`ana root ${hex("a")}`, /line 1: role must be one of read-only, operator, admin, found "root"/],
    ["ana operator abc", /line 1: token digest must be 64 lowercase hex digits/],
    [`ana operator ${hex("a")}\nana read-only ${hex("b")}`, /line 2: user "ana" is listed twice/],
    [`a'b operator ${hex("a")}`, /line 1: user must be/],
  ])("refuses %j naming the line", (text, message) => {
    expect(() => parseUsers(text, "users")).toThrow(UsersFileError);
    expect(() => parseUsers(text, "users")).toThrow(message);
  });

  it("authenticates by token, never a proxy-only user, and sees a changed file without a restart", () => {
    const path = join(mkdtempSync(join(tmpdir(), "malha-users-")), "users");
    writeFileSync(path, `ana operator ${hex("secret-a")}\nsso read-only -\n`);
    const errors: Error[] = [];
    const dir = new OperatorDirectory(path, (e) => errors.push(e));
    expect(dir.authenticate("ana", "secret-a")?.role).toBe("operator");
    expect(dir.authenticate("ana", "wrong")).toBeUndefined();
    expect(dir.authenticate("sso", "")).toBeUndefined();
    writeFileSync(path, `ana read-only ${hex("secret-a")}\n`);
    utimesSync(path, new Date(), new Date(Date.now() + 5000));
    expect(dir.get("ana")?.role).toBe("read-only");
    expect(dir.get("sso")).toBeUndefined();
    // A broken edit keeps the last good list and is reported.
    writeFileSync(path, "garbage\n");
    utimesSync(path, new Date(), new Date(Date.now() + 10_000));
    expect(dir.get("ana")?.role).toBe("read-only");
    expect(errors[0]?.message).toMatch(/line 1/);
  });
});

describe("session cookie", () => {
  const secret = Buffer.alloc(32, 1);

  it("round-trips, and refuses a tampered, foreign or expired one", () => {
    let now = 1_000_000;
    const signer = new SessionSigner(secret, 60_000, () => now);
    const value = signer.issue("ana");
    expect(signer.verify(value)).toEqual({ user: "ana", exp: 1_060_000 });
    const [payload, mac] = value.split(".") as [string, string];
    const forged = Buffer.from(JSON.stringify({ u: "root", exp: 9e15 })).toString("base64url");
    expect(signer.verify(`${forged}.${mac}`)).toBeUndefined();
    expect(new SessionSigner(Buffer.alloc(32, 2), 60_000, () => now).verify(value)).toBeUndefined();
    expect(signer.verify(`${payload}.`)).toBeUndefined();
    now += 60_000;
    expect(signer.verify(value)).toBeUndefined();
  });

  it("is HttpOnly and SameSite=Strict, Secure when asked", () => {
    const signer = new SessionSigner(secret, 3_600_000);
    expect(signer.cookie("v", false)).toBe("malha_console=v; Path=/; HttpOnly; SameSite=Strict; Max-Age=3600");
    expect(signer.cookie("v", true)).toMatch(/; Secure$/);
    expect(readCookie("a=1; malha_console=x.y; b=2", "malha_console")).toBe("x.y");
  });
});
