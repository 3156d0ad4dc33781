import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../gen/malha/common/v1/common_pb.js";

/**
 * What leaves the server for a failed call. A ConnectError thrown on purpose keeps its code and
 * message; anything else is a bug or an infrastructure fault, so the caller gets INTERNAL with the
 * request id to quote, and the details (stack, SQL, paths) stay in our logs.
 */
export function toWireError(err: unknown, requestId: string): ConnectError {
  // connect sends only code, message, details and metadata of a ConnectError, never its cause or stack.
  if (err instanceof ConnectError) return err;
  if (isAbort(err)) return new ConnectError("the call was cancelled", Code.Canceled);
  return new ConnectError(`internal error (request id ${requestId})`, Code.Internal);
}

/**
 * How loudly a failed call is logged: "error" (with the stack) for bugs and infrastructure faults,
 * "warn" for DATA_LOSS (tampered or corrupted data deserves attention, but it was detected on
 * purpose), "info" for deliberate refusals such as INVALID_ARGUMENT or NOT_FOUND.
 */
export function logLevelOf(err: unknown): "error" | "warn" | "info" {
  if (!(err instanceof ConnectError)) return isAbort(err) ? "info" : "error";
  if (err.code === Code.Internal || err.code === Code.Unknown) return "error";
  return err.code === Code.DataLoss ? "warn" : "info";
}

function isAbort(err: unknown): boolean {
  return err instanceof Error && (err.name === "AbortError" || err.name === "TimeoutError");
}

/** Shorthands that read like the contract's comments. */
export const invalidArgument = (msg: string) => new ConnectError(msg, Code.InvalidArgument);
export const notFound = (msg: string) => new ConnectError(msg, Code.NotFound);
export const failedPrecondition = (msg: string) => new ConnectError(msg, Code.FailedPrecondition);
export const alreadyExists = (msg: string) => new ConnectError(msg, Code.AlreadyExists);
export const permissionDenied = (msg: string) => new ConnectError(msg, Code.PermissionDenied);
export const resourceExhausted = (msg: string) => new ConnectError(msg, Code.ResourceExhausted);
export const unavailable = (msg: string) => new ConnectError(msg, Code.Unavailable);

/**
 * A refusal with a machine-readable reason: a malha.common.v1.ErrorInfo detail (reason, domain,
 * metadata) so callers switch on the reason, never on the message, plus any typed details.
 */
export function reasonedError(
  domain: string,
  message: string,
  code: Code,
  reason: string | undefined,
  metadata: Record<string, string> = {},
  extra: ConnectError["details"] = [],
): ConnectError {
  const details = reason ? [{ desc: ErrorInfoSchema, value: { reason, domain, metadata } }] : [];
  return new ConnectError(message, code, undefined, [...details, ...extra] as never);
}

/** The ErrorInfo of a refusal by a server that is shutting down (serverClosingKey): domain and reason. */
export const SERVER_CLOSING = { domain: "malha.rpc", reason: "SERVER_CLOSING" } as const;

/** UNAVAILABLE: this server is closing and takes no new work; the same request may go to a new connection. */
export function serverClosing(message: string): ConnectError {
  return reasonedError(SERVER_CLOSING.domain, message, Code.Unavailable, SERVER_CLOSING.reason);
}

/** Whether an error is a ConnectError of `code` whose ErrorInfo names this domain and reason. */
export function hasErrorReason(err: unknown, code: Code, { domain, reason }: { domain: string; reason: string }): boolean {
  return (
    err instanceof ConnectError &&
    err.code === code &&
    err.findDetails(ErrorInfoSchema).some((i) => i.domain === domain && i.reason === reason)
  );
}

/** Whether an error is serverClosing's refusal (nothing was done: it is safe to send the request again). */
export function isServerClosing(err: ConnectError): boolean {
  return hasErrorReason(err, Code.Unavailable, SERVER_CLOSING);
}
