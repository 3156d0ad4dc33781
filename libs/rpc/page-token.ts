// The page tokens of every List RPC (docs/decisions/0021-api-conventions.md). A token carries the
// method, a digest of the request's filters and the keyset position of the last row returned, and is
// HMAC-signed with the service's configured secret: a client can neither forge a position nor reuse a
// token with another method or other filters, and any replica sharing the secret accepts it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { Code, type ConnectError } from "@connectrpc/connect";
import { ConfigError, type EnvReader } from "../config/env.js";
import type { Logger } from "../log/logger.js";
import { reasonedError } from "./errors.js";

/** The ErrorInfo reason of every refused token, in each service's domain (the services' error lists name it). */
export const INVALID_PAGE_TOKEN = "INVALID_PAGE_TOKEN";

/** Longer tokens are refused before any decoding: ours stay well under it (a few keys of a row). */
export const MAX_PAGE_TOKEN_CHARS = 1024;
const MIN_SECRET_CHARS = 16;

/** One keyset value: integers travel as numbers, everything else (ids, dates as text) as strings. */
export type PositionValue = string | number;
/** The expected kinds of a position's values, checked on decode ("int": a safe integer). */
export type PositionShape = readonly ("string" | "int")[];
export type PositionOf<S extends PositionShape> = { -readonly [I in keyof S]: S[I] extends "int" ? number : string };

export interface PageTokens {
  encode(method: string, filter: unknown, position: readonly PositionValue[]): string;
  /** The position of the last row seen, or undefined for "" (the first page). */
  decode<const S extends PositionShape>(method: string, filter: unknown, token: string, shape: S): PositionOf<S> | undefined;
}

export interface PageTokenOptions {
  secret: Uint8Array;
  /** The ErrorInfo domain of the service's refusals (reason INVALID_PAGE_TOKEN). */
  errorDomain: string;
}

interface Payload {
  /** Method name. */
  m: string;
  /** filterDigest of the request's filters. */
  f: string;
  /** Keyset position. */
  k: PositionValue[];
}

/** Canonical JSON (sorted keys, bigint/Date/bytes as text, no $typeName) hashed: equal filters, equal digest. */
export function filterDigest(filter: unknown): string {
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
    .update(JSON.stringify(canon(filter)) ?? "null")
    .digest("base64url")
    .slice(0, 22);
}

export function createPageTokens({ secret, errorDomain }: PageTokenOptions): PageTokens {
  const mac = (body: string) => createHmac("sha256", secret).update(body).digest().subarray(0, 16);
  const refuse = (why: string): ConnectError =>
    reasonedError(errorDomain, `invalid page_token: ${why}`, Code.InvalidArgument, INVALID_PAGE_TOKEN);
  return {
    encode(method, filter, position) {
      const payload: Payload = { m: method, f: filterDigest(filter), k: [...position] };
      const body = Buffer.from(JSON.stringify(payload)).toString("base64url");
      return `${body}.${mac(body).toString("base64url")}`;
    },
    decode(method, filter, token, shape) {
      if (token === "") return undefined;
      if (token.length > MAX_PAGE_TOKEN_CHARS) throw refuse(`longer than ${MAX_PAGE_TOKEN_CHARS} characters`);
      const [body, sig, extra] = token.split(".");
      if (!body || !sig || extra !== undefined) throw refuse("malformed (not a token this service issued)");
      const given = Buffer.from(sig, "base64url");
      const expected = mac(body);
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        throw refuse("signature mismatch (tampered, or issued by another service or secret)");
      }
      let payload: Payload;
      try {
        payload = JSON.parse(Buffer.from(body, "base64url").toString("utf8")) as Payload;
      } catch {
        throw refuse("malformed");
      }
      if (payload.m !== method) throw refuse(`issued for ${payload.m}, not ${method}`);
      if (payload.f !== filterDigest(filter)) throw refuse("issued for other filters; repeat the same filters or start over");
      const k = payload.k;
      const fits =
        Array.isArray(k) &&
        k.length === shape.length &&
        shape.every((kind, i) => (kind === "int" ? Number.isSafeInteger(k[i]) : typeof k[i] === "string"));
      if (!fits) throw refuse("malformed position");
      return k as never;
    },
  };
}

export interface PageTokenSecret {
  secret: Buffer;
  /** Made up at start-up because the variable is unset: tokens then work on this process only. */
  generated: boolean;
  /** The environment variable it was read from, for the start-up line that says it is unset. */
  variable: string;
}

/**
 * The service's page-token secret from `variable`. Unset, a random one is made (development: one process,
 * tokens die with it); replicas behind one address must share a configured one.
 */
export function readPageTokenSecret(env: EnvReader, variable: string): PageTokenSecret {
  const text = env.optionalString(variable);
  if (text === undefined) return { secret: randomBytes(32), generated: true, variable };
  if (text.length < MIN_SECRET_CHARS) throw new ConfigError(variable, `must be at least ${MIN_SECRET_CHARS} characters`);
  return { secret: Buffer.from(text, "utf8"), generated: false, variable };
}

/**
 * A service's page tokens under its configured secret. A made-up secret is said once, at start-up: an
 * operator who runs replicas must know that a token from one is refused by the others.
 */
export function servicePageTokens(secret: PageTokenSecret, errorDomain: string, log: Pick<Logger, "info">): PageTokens {
  if (secret.generated) log.info(`${secret.variable} unset: page tokens are valid for this process only`);
  return createPageTokens({ secret: secret.secret, errorDomain });
}
