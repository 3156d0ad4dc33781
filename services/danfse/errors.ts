// DANFSe errors: every refusal carries a malha.common.v1.ErrorInfo (domain "malha.danfse"), reasons as
// danfse.proto lists them. A note the renderer cannot draw is the data's fault, never INTERNAL.
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorInfoSchema } from "../../libs/gen/malha/common/v1/common_pb.js";
import { reasonedError } from "../../libs/rpc/errors.js";

export const DANFSE_ERROR_DOMAIN = "malha.danfse";

export type DanfseErrorReason =
  | "INVALID_IBGE"
  | "INVALID_CHAVE"
  | "INVALID_RANGE"
  | "DOCUMENT_NOT_FOUND"
  | "MUNICIPALITY_NOT_FOUND"
  | "NOT_RENDERABLE"
  | "TOO_MANY_NOTES"
  | "EXPORT_NOT_FOUND";

export function danfseError(message: string, code: Code, reason?: DanfseErrorReason, metadata: Record<string, string> = {}): ConnectError {
  return reasonedError(DANFSE_ERROR_DOMAIN, message, code, reason, metadata);
}

/** A value a caller typed, JSON-quoted and cut short: it may be anything, including SQL. */
export const quote = (value: string) => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);

export const invalidRange = (message: string) => danfseError(message, Code.InvalidArgument, "INVALID_RANGE");

export const documentNotFound = (ibge: string, chave: string) =>
  danfseError(`note ${chave} is not stored in municipality ${ibge}`, Code.NotFound, "DOCUMENT_NOT_FOUND", { ibge, chave });

export const notRenderable = (chave: string, field: string, reason: string) =>
  danfseError(`note ${chave} cannot be rendered as a DANFSe: ${field} ${reason}`, Code.FailedPrecondition, "NOT_RENDERABLE", {
    chave,
    field,
  });

export const tooManyNotes = (count: string, max: number) =>
  danfseError(
    `the export would hold ${count} notes, more than DANFSE_EXPORT_MAX_NOTES (${max}): narrow the range or split the chaves`,
    Code.ResourceExhausted,
    "TOO_MANY_NOTES",
    { max: String(max) },
  );

export const exportNotFound = (id: string) => danfseError(`export ${quote(id)} not found`, Code.NotFound, "EXPORT_NOT_FOUND");

/**
 * A store refusal as the danfse contract names it: its NOT_FOUND says whether the municipality or the
 * note is missing, its INVALID_ARGUMENT (an IBGE code with an unknown UF prefix) keeps the store's
 * words; transport trouble stays what it is (UNAVAILABLE, DEADLINE_EXCEEDED…).
 */
export function fromStore(err: unknown, ibge: string, chave?: string): unknown {
  if (!(err instanceof ConnectError)) return err;
  const reason = err.findDetails(ErrorInfoSchema)[0]?.reason;
  if (err.code === Code.NotFound && reason === "MUNICIPALITY_NOT_FOUND")
    return danfseError(`municipality ${ibge} is not registered`, Code.NotFound, "MUNICIPALITY_NOT_FOUND", { ibge });
  if (err.code === Code.NotFound && chave !== undefined) return documentNotFound(ibge, chave);
  if (err.code === Code.InvalidArgument && reason === "INVALID_IBGE")
    return danfseError(err.rawMessage, Code.InvalidArgument, "INVALID_IBGE", { field: "ibge" });
  if (err.code === Code.Unavailable || err.code === Code.DeadlineExceeded || err.code === Code.Canceled) return err;
  // Anything else from the store is our bug (we validated first): it must not look like the caller's fault.
  return new ConnectError(`the store refused a request it should not have: ${err.rawMessage}`, Code.Internal);
}
