// The console's HTTP vocabulary, shared by the dispatcher (http.ts) and the route modules (routes/): one
// typed error, JSON and file answers with the security headers, bounded JSON bodies, gRPC codes as statuses.
import type { IncomingMessage, ServerResponse } from "node:http";
import { Code, type ConnectError } from "@connectrpc/connect";
import type { ApiError } from "./api-types.js";

export const MAX_BODY_BYTES = 16 * 1024;
export const IBGE = /^[0-9]{7}$/;

export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export const badRequest = (message: string): HttpError => new HttpError(400, "INVALID_ARGUMENT", message);

export const SECURITY_HEADERS = {
  "Content-Security-Policy": "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "X-Frame-Options": "DENY",
};

export function json(res: ServerResponse, status: number, body: unknown, extra: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...SECURITY_HEADERS,
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": String(Buffer.byteLength(text)),
    "Cache-Control": "no-store",
    ...extra,
  });
  res.end(text);
}

/** A download: always an attachment, so a stored XML is never rendered by the browser as a page. */
export function attachment(res: ServerResponse, body: Buffer, filename: string, contentType: string): void {
  res.writeHead(200, {
    ...SECURITY_HEADERS,
    "Content-Type": contentType,
    "Content-Length": String(body.length),
    "Content-Disposition": `attachment; filename="${filename.replace(/[^A-Za-z0-9._-]/g, "_")}"`,
    "Cache-Control": "no-store",
  });
  res.end(body);
}

export const apiError = (code: string, message: string): ApiError => ({ error: { code, message } });

/** The coordinator's and store's gRPC codes as HTTP statuses; their messages already name the field. */
export function fromConnect(err: ConnectError): HttpError {
  const status: Partial<Record<Code, number>> = {
    [Code.InvalidArgument]: 400,
    [Code.NotFound]: 404,
    [Code.FailedPrecondition]: 409,
    [Code.AlreadyExists]: 409,
    [Code.PermissionDenied]: 403,
    [Code.ResourceExhausted]: 429,
    [Code.Unavailable]: 503,
    [Code.DeadlineExceeded]: 504,
  };
  const name = (Code[err.code] ?? "Unknown").replace(/([a-z])([A-Z])/g, "$1_$2").toUpperCase();
  return new HttpError(status[err.code] ?? 502, name, err.rawMessage);
}

export async function readJson(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new HttpError(413, "TOO_LARGE", `body larger than ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return {};
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new HttpError(400, "INVALID_JSON", "body is not valid JSON");
  }
}

export function requireIbge(value: string): string {
  if (!IBGE.test(value)) throw badRequest("ibge must be 7 digits");
  return value;
}
