import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { newSecret, sign, signatureHeaders, verify } from "./signing.js";

describe("Standard Webhooks signing", () => {
  const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
  const body = '{"test": 2432232314}';

  it("matches the specification's reference example", () => {
    // standard-webhooks spec example: msg_p5jXN8AQM9LWM0D4loKWxJek, timestamp 1614265330
    expect(sign(secret, "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body)).toBe("v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
  });

  it("verifies over the raw bytes; a mutated body, an old timestamp or another secret fail", () => {
    const now = 1_700_000_000;
    const h = signatureHeaders(secret, "msg_1", now, body);
    const hdr = { id: h["webhook-id"]!, timestamp: h["webhook-timestamp"]!, signature: h["webhook-signature"]! };
    expect(verify(secret, hdr, body, now)).toBe(true);
    expect(verify(secret, hdr, body.replace("2432", "2433"), now)).toBe(false);
    expect(verify(secret, hdr, body, now + 301)).toBe(false);
    expect(verify(newSecret(), hdr, body, now)).toBe(false);
    // During a rotation two signatures are listed; either verifies.
    expect(verify(secret, { ...hdr, signature: `v1,${createHmac("sha256", "x").digest("base64")} ${hdr.signature}` }, body, now)).toBe(
      true,
    );
  });

  it("issues whsec_ secrets of 24 random bytes", () => {
    const s = newSecret();
    expect(s).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(newSecret()).not.toBe(s);
  });
});
