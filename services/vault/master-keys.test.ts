import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../libs/config/env.js";
import { readMasterKeys } from "./master-keys.js";

const a = randomBytes(32);
const b = randomBytes(32);
const dir = mkdtempSync(join(tmpdir(), "malha-keys-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const read = (env: Record<string, string>) => readMasterKeys((name) => env[name]?.trim() || undefined);
function configError(env: Record<string, string>): string {
  try {
    read(env);
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as Error).message;
  }
  throw new Error("expected a ConfigError");
}

describe("readMasterKeys", () => {
  it("takes NFSE_MASTER_KEY as the active key under the id 'default', or under NFSE_MASTER_KEY_ID", () => {
    const one = read({ NFSE_MASTER_KEY: a.toString("base64") });
    expect(one.activeKeyId).toBe("default");
    expect(one.keys.get("default")?.equals(a)).toBe(true);
    expect(read({ NFSE_MASTER_KEY: a.toString("base64"), NFSE_MASTER_KEY_ID: "2026-11" }).activeKeyId).toBe("2026-11");
  });

  it("reads a key file holding base64 text or the 32 raw bytes", () => {
    const text = join(dir, "text");
    const raw = join(dir, "raw");
    writeFileSync(text, `${a.toString("base64")}\n`);
    writeFileSync(raw, b);
    expect(read({ NFSE_MASTER_KEY_FILE: text }).keys.get("default")?.equals(a)).toBe(true);
    expect(read({ NFSE_MASTER_KEY_FILE: raw }).keys.get("default")?.equals(b)).toBe(true);
  });

  it("combines NFSE_MASTER_KEYS (and its file) with the active key for rotation", () => {
    const file = join(dir, "keys");
    writeFileSync(file, `old:${a.toString("base64")}\n`);
    const keys = read({ NFSE_MASTER_KEYS_FILE: file, NFSE_MASTER_KEYS: `new:${b.toString("base64")}`, NFSE_MASTER_KEY_ID: "new" });
    expect(keys.activeKeyId).toBe("new");
    expect([...keys.keys.keys()].sort()).toEqual(["new", "old"]);
    const mixed = read({
      NFSE_MASTER_KEY: b.toString("base64"),
      NFSE_MASTER_KEY_ID: "new",
      NFSE_MASTER_KEYS: `old:${a.toString("base64")}`,
    });
    expect(mixed.activeKeyId).toBe("new");
    expect(mixed.keys.get("old")?.equals(a)).toBe(true);
    expect(read({ NFSE_MASTER_KEYS: `only:${a.toString("base64")}` }).activeKeyId).toBe("only");
  });

  it("refuses bad configurations in one line naming the variable, never showing key material", () => {
    const secretish = `${a.toString("base64").slice(0, 30)}`;
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /^config error: NFSE_MASTER_KEY is required/],
      [{ NFSE_MASTER_KEY: secretish }, /^config error: NFSE_MASTER_KEY is invalid: must be base64 of exactly 32 random bytes/],
      [{ NFSE_MASTER_KEY: randomBytes(16).toString("base64") }, /^config error: NFSE_MASTER_KEY is invalid/],
      [{ NFSE_MASTER_KEY: a.toString("base64"), NFSE_MASTER_KEY_FILE: "/x" }, /^config error: NFSE_MASTER_KEY_FILE cannot be combined/],
      [{ NFSE_MASTER_KEY_FILE: join(dir, "missing") }, /^config error: NFSE_MASTER_KEY_FILE names a file that cannot be read \(ENOENT/],
      [
        { NFSE_MASTER_KEYS: `x:${a.toString("base64")},y:${b.toString("base64")}` },
        /^config error: NFSE_MASTER_KEY_ID is required when NFSE_MASTER_KEYS holds several keys/,
      ],
      [{ NFSE_MASTER_KEYS: `x:${a.toString("base64")}`, NFSE_MASTER_KEY_ID: "z" }, /^config error: NFSE_MASTER_KEY_ID names key 'z'/],
      [{ NFSE_MASTER_KEYS: `x:${secretish}`, NFSE_MASTER_KEY_ID: "x" }, /^config error: NFSE_MASTER_KEYS key 'x' is invalid/],
      [{ NFSE_MASTER_KEYS: secretish }, /^config error: NFSE_MASTER_KEYS entry 1 is malformed \(expected keyId:base64\)/],
      [{ NFSE_MASTER_KEYS: `bad id:${a.toString("base64")}` }, /^config error: NFSE_MASTER_KEYS entry 1 has a malformed key id/],
      [
        { NFSE_MASTER_KEY: a.toString("base64"), NFSE_MASTER_KEY_ID: "k", NFSE_MASTER_KEYS: `k:${b.toString("base64")}` },
        /^config error: NFSE_MASTER_KEYS key 'k' has a different value than NFSE_MASTER_KEY$/,
      ],
      [{ NFSE_MASTER_KEY: a.toString("base64"), NFSE_MASTER_KEY_ID: "no spaces" }, /^config error: NFSE_MASTER_KEY_ID is malformed/],
    ];
    for (const [env, expected] of cases) {
      const message = configError(env);
      expect(message).toMatch(expected);
      expect(message).not.toContain("\n");
      for (const key of [a, b]) {
        expect(message).not.toContain(key.toString("base64").slice(0, 12));
      }
      expect(message).not.toContain(secretish.slice(0, 12));
    }
  });
});
