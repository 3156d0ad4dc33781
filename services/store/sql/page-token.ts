// Opaque page tokens for keyset pagination. A token names the method, a fingerprint of the request's
// filters and the sort key of the last row returned; it is HMAC-signed so a client can neither forge a
// position nor reuse a token with other filters (both are INVALID_PAGE_TOKEN).
import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { invalidPageToken } from "../errors.js";

export interface PageTokenCodec {
  encode(method: string, filters: unknown, key: string[]): string;
  /** The key of the last row seen, or undefined for an empty token (first page). */
  decode(method: string, filters: unknown, token: string): string[] | undefined;
}

interface Payload {
  m: string;
  f: string;
  k: string[];
}

/** Canonical JSON (sorted keys; bigint as string) hashed, so the same filters always match. */
export function filterFingerprint(filters: unknown): string {
  const canon = (v: unknown): unknown => {
    if (typeof v === "bigint") return `${v}n`;
    if (v instanceof Date) return v.toISOString();
    if (v instanceof Uint8Array) return Buffer.from(v).toString("base64");
    if (Array.isArray(v)) return v.map(canon);
    if (v && typeof v === "object") {
      return Object.fromEntries(
        Object.keys(v)
          .filter((k) => k !== "$typeName" && (v as Record<string, unknown>)[k] !== undefined)
          .sort()
          .map((k) => [k, canon((v as Record<string, unknown>)[k])]),
      );
    }
    return v;
  };
  return createHash("sha256")
    .update(JSON.stringify(canon(filters)))
    .digest("base64url")
    .slice(0, 22);
}

export function createPageTokenCodec(secret: Buffer): PageTokenCodec {
  const mac = (body: string) => createHmac("sha256", secret).update(body).digest().subarray(0, 16);
  return {
    encode(method, filters, key) {
      const payload: Payload = { m: method, f: filterFingerprint(filters), k: key };
      const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
      return `${body}.${mac(body).toString("base64url")}`;
    },
    decode(method, filters, token) {
      if (token === "") return undefined;
      const [body, sig, extra] = token.split(".");
      if (!body || !sig || extra !== undefined) throw invalidPageToken("malformed");
      const given = Buffer.from(sig, "base64url");
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw invalidPageToken("signature mismatch (tampered, or issued by another store configuration)");
      }
      let payload: Payload;
      try {
        payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload;
      } catch {
        throw invalidPageToken("malformed");
      }
      if (payload.m !== method) throw invalidPageToken(`issued for ${payload.m}, not ${method}`);
      if (payload.f !== filterFingerprint(filters)) throw invalidPageToken("the filters changed since the token was issued");
      if (!Array.isArray(payload.k) || !payload.k.every((v) => typeof v === "string")) throw invalidPageToken("malformed");
      return payload.k;
    },
  };
}

/** page_size → limit: 0 means the default; anything larger than max is clamped; negative is refused. */
export function pageSize(requested: number, def: number, max: number): number {
  if (requested < 0) throw invalidPageToken("page_size must not be negative");
  if (requested === 0) return def;
  return Math.min(requested, max);
}
