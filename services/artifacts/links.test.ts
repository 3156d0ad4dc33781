import { describe, expect, it } from "vitest";
import { LinkSigner } from "./links.js";

const signer = new LinkSigner(Buffer.from("k".repeat(32)));
const id = `art_${"ab".repeat(16)}`;
const claims = { tenant: "acme", id, expiresSec: 1_900_000_000 };

describe("signed links", () => {
  it("verifies its own links and returns their claims", () => {
    expect(signer.verify(signer.pathFor(claims))).toEqual(claims);
  });

  it("refuses a link signed with another key", () => {
    const other = new LinkSigner(Buffer.from("j".repeat(32)));
    expect(signer.verify(other.pathFor(claims))).toBeUndefined();
  });

  it("refuses any change to tenant, id, expiry or signature", () => {
    const path = signer.pathFor(claims);
    const sig = new URLSearchParams(path.slice(path.indexOf("?") + 1)).get("signature")!;
    const variants = [
      path.replace("/acme/", "/acmf/"),
      path.replace(id, `art_${"ac".repeat(16)}`),
      path.replace("expires=1900000000", "expires=1900000001"),
      path.replace(sig, sig.slice(0, -1) + (sig.endsWith("A") ? "B" : "A")),
      path.replace(sig, sig.slice(0, -1)),
      `${path}&signature=${sig}`,
      path.replace("?", "/?"),
      path.replace("/acme/", "/%61cme/"),
      path.split("?")[0]!,
    ];
    for (const v of variants) expect(signer.verify(v), v).toBeUndefined();
  });

  it("does not accept base64url aliases of the signature (unused trailing bits)", () => {
    const path = signer.pathFor(claims);
    const sig = new URLSearchParams(path.slice(path.indexOf("?") + 1)).get("signature")!;
    // The 43rd character carries 2 unused bits: flipping them decodes to the same bytes.
    const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    const last = alphabet.indexOf(sig.at(-1)!);
    const alias = sig.slice(0, -1) + alphabet[last ^ 1]!;
    expect(Buffer.from(alias, "base64url").equals(Buffer.from(sig, "base64url"))).toBe(true);
    expect(signer.verify(path.replace(sig, alias))).toBeUndefined();
  });

  it("refuses to sign a malformed id", () => {
    expect(() => signer.pathFor({ ...claims, id: "../etc" })).toThrow();
  });
});
