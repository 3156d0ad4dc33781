// Standard Webhooks 1.0 signing: "v1," + Base64(HMAC-SHA256(key, "{id}.{timestamp}.{body}")) over the
// raw body bytes, where key is the Base64 part of the "whsec_…" secret.
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

export const newSecret = () => `whsec_${randomBytes(24).toString("base64")}`;

export const secretHint = (secret: string) => secret.slice(-4);

function key(secret: string): Buffer {
  if (!secret.startsWith("whsec_")) throw new Error("webhook secret must start with whsec_");
  return Buffer.from(secret.slice("whsec_".length), "base64");
}

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  return `v1,${createHmac("sha256", key(secret)).update(`${id}.${timestampSeconds}.`).update(body, "utf8").digest("base64")}`;
}

/** Headers of one delivery, with one signature per secret (space-separated, as the specification lists them). */
export function signatureHeaders(
  secrets: string | readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Record<string, string> {
  return {
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": (typeof secrets === "string" ? [secrets] : secrets).map((s) => sign(s, id, timestampSeconds, body)).join(" "),
  };
}

/** The secrets that sign now: the current one, and a rotated-out one until its grace period ends. */
export function signingSecrets(
  e: { secret: string; previousSecret?: string | undefined; previousSecretUntil?: Date | undefined },
  now: Date,
): string[] {
  return e.previousSecret && e.previousSecretUntil && e.previousSecretUntil.getTime() > now.getTime()
    ? [e.secret, e.previousSecret]
    : [e.secret];
}

/**
 * The receiver's side (used by tests and documented for consumers): any listed v1 signature matches,
 * and the timestamp is within `toleranceSeconds` of now (replays of old deliveries are refused).
 */
export function verify(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(sign(secret, headers.id, ts, body));
  return headers.signature.split(" ").some((s) => {
    const got = Buffer.from(s);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}
