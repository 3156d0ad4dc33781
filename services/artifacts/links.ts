// Signed download links: /v1/artifacts/<tenant>/<id>?expires=<unix s>&signature=<base64url HMAC-SHA256>.
// The MAC covers tenant, id and expiry under a versioned prefix, so no field can be swapped or extended
// and a future format cannot be confused with this one. Verification compares in constant time.
import { createHmac, timingSafeEqual } from "node:crypto";
import { ARTIFACT_ID } from "./names.js";

const PREFIX = "malha.artifacts.link.v1";
const PATH = /^\/v1\/artifacts\/([A-Za-z0-9._-]{1,64})\/(art_[0-9a-f]{32})$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

export interface LinkClaims {
  tenant: string;
  id: string;
  /** Unix seconds after which the link no longer works. */
  expiresSec: number;
}

export class LinkSigner {
  constructor(private readonly secret: Buffer) {}

  private mac(c: LinkClaims): Buffer {
    return createHmac("sha256", this.secret).update(`${PREFIX}\n${c.tenant}\n${c.id}\n${c.expiresSec}`).digest();
  }

  /** Path and query of the link; the caller prefixes its public base URL. */
  pathFor(c: LinkClaims): string {
    if (!ARTIFACT_ID.test(c.id) || !Number.isSafeInteger(c.expiresSec)) throw new Error("refusing to sign a malformed link");
    return `/v1/artifacts/${c.tenant}/${c.id}?expires=${c.expiresSec}&signature=${this.mac(c).toString("base64url")}`;
  }

  /**
   * The claims of a well-formed link whose signature is ours, or undefined. The expiry is returned, not
   * judged: the server answers an expired artifact (410) differently from an expired link (403).
   */
  verify(rawUrl: string): LinkClaims | undefined {
    // Matched on the raw request target, never on a decoded one: "%2e%2e" and "%2f" simply do not match.
    const q = rawUrl.indexOf("?");
    const path = PATH.exec(q < 0 ? rawUrl : rawUrl.slice(0, q));
    if (!path || q < 0) return undefined;
    const query = new URLSearchParams(rawUrl.slice(q + 1));
    const expires = query.getAll("expires");
    const signature = query.getAll("signature");
    if (expires.length !== 1 || signature.length !== 1) return undefined;
    if (!/^\d{1,12}$/.test(expires[0]!) || !SIGNATURE.test(signature[0]!)) return undefined;
    const claims: LinkClaims = { tenant: path[1]!, id: path[2]!, expiresSec: Number(expires[0]) };
    // Compared as text: base64url strings differing only in unused trailing bits decode to the same bytes.
    const given = Buffer.from(signature[0]!, "ascii");
    const expected = Buffer.from(this.mac(claims).toString("base64url"), "ascii");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    return claims;
  }
}
