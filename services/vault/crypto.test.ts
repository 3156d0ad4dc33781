import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AuthenticationError, Keyring, KeyUnavailableError, type SealContext } from "./crypto.js";

const k1 = randomBytes(32);
const k2 = randomBytes(32);
const ring = new Keyring({
  activeKeyId: "k1",
  keys: new Map([
    ["k1", k1],
    ["k2", k2],
  ]),
});
const ctx: SealContext = { fingerprint: "ab".repeat(32), ibge: "3550308", field: "password" };
const plaintext = Buffer.from("senha do certificado");

describe("Keyring", () => {
  it("round-trips under the active key with a fresh nonce each time, and never stores the plaintext", () => {
    const one = ring.seal(plaintext, ctx);
    const two = ring.seal(plaintext, ctx);
    expect(one.nonce.equals(two.nonce)).toBe(false);
    expect(one.ciphertext.includes(plaintext)).toBe(false);
    expect(ring.open(one, ctx, "k1", "aes-256-gcm").equals(plaintext)).toBe(true);
    expect(ring.open(ring.seal(plaintext, ctx, "k2"), ctx, "k2", "aes-256-gcm").equals(plaintext)).toBe(true);
  });

  it("fails authentication for tampered bytes, another row, another column, another key id or algorithm", () => {
    const sealed = ring.seal(plaintext, ctx);
    const flip = (b: Buffer) => Buffer.from(b.map((x, i) => (i === 0 ? x ^ 1 : x)));
    const attempts: [string, () => unknown][] = [
      ["ciphertext", () => ring.open({ ...sealed, ciphertext: flip(sealed.ciphertext) }, ctx, "k1", "aes-256-gcm")],
      ["tag", () => ring.open({ ...sealed, tag: flip(sealed.tag) }, ctx, "k1", "aes-256-gcm")],
      ["nonce", () => ring.open({ ...sealed, nonce: flip(sealed.nonce) }, ctx, "k1", "aes-256-gcm")],
      ["other row", () => ring.open(sealed, { ...ctx, fingerprint: "cd".repeat(32) }, "k1", "aes-256-gcm")],
      ["other municipality", () => ring.open(sealed, { ...ctx, ibge: "3304557" }, "k1", "aes-256-gcm")],
      ["other column", () => ring.open(sealed, { ...ctx, field: "private_key" }, "k1", "aes-256-gcm")],
      ["relabelled key id", () => ring.open(sealed, ctx, "k2", "aes-256-gcm")],
      ["other algorithm", () => ring.open(sealed, ctx, "k1", "aes-128-gcm")],
      ["short tag", () => ring.open({ ...sealed, tag: sealed.tag.subarray(0, 8) }, ctx, "k1", "aes-256-gcm")],
    ];
    for (const [name, attempt] of attempts) {
      expect(attempt, name).toThrow(AuthenticationError);
      expect(attempt, name).toThrow(/^the (password|private_key) ciphertext failed authentication$/);
    }
  });

  it("names a missing key id, and check values identify keys without being them", () => {
    const other = new Keyring({ activeKeyId: "k3", keys: new Map([["k3", randomBytes(32)]]) });
    expect(() => other.open(ring.seal(plaintext, ctx), ctx, "k1", "aes-256-gcm")).toThrow(KeyUnavailableError);
    expect(() => other.open(ring.seal(plaintext, ctx), ctx, "k1", "aes-256-gcm")).toThrow("master key 'k1' is not configured");
    expect(ring.checkValue("k1")).toMatch(/^[0-9a-f]{64}$/);
    expect(ring.checkValue("k1")).not.toBe(ring.checkValue("k2"));
    expect(ring.checkValue("k1")).not.toContain(k1.toString("hex").slice(0, 16));
  });
});
