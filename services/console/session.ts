// The console's session cookie: `<base64url JSON {u, exp}>.<base64url HMAC-SHA256>`. It names the user
// only; the role is looked up in the users file on every request, so a demotion takes effect at once.
import { createHmac, timingSafeEqual } from "node:crypto";

export const COOKIE_NAME = "malha_console";

export interface SessionClaims {
  user: string;
  /** Expiry, ms since the epoch. */
  exp: number;
}

export class SessionSigner {
  constructor(
    private readonly secret: Buffer,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  issue(user: string): string {
    const payload = Buffer.from(JSON.stringify({ u: user, exp: this.now() + this.ttlMs })).toString("base64url");
    return `${payload}.${this.mac(payload)}`;
  }

  verify(value: string | undefined): SessionClaims | undefined {
    if (!value || value.length > 1024) return undefined;
    const dot = value.indexOf(".");
    if (dot <= 0) return undefined;
    const payload = value.slice(0, dot);
    const given = Buffer.from(value.slice(dot + 1), "base64url");
    const expected = Buffer.from(this.mac(payload), "base64url");
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const { u, exp } = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { u?: unknown; exp?: unknown };
      if (typeof u !== "string" || typeof exp !== "number" || exp <= this.now()) return undefined;
      return { user: u, exp };
    } catch {
      return undefined;
    }
  }

  cookie(value: string, secure: boolean): string {
    return `${COOKIE_NAME}=${value}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(this.ttlMs / 1000)}${secure ? "; Secure" : ""}`;
  }

  static clearCookie(secure: boolean): string {
    return `${COOKIE_NAME}=; Path=/; HttpOnly; SameSite=Strict; Max-Age=0${secure ? "; Secure" : ""}`;
  }

  private mac(payload: string): string {
    return createHmac("sha256", this.secret).update(payload).digest("base64url");
  }
}

/** The value of one cookie from a Cookie header. */
export function readCookie(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}
