// Artifacts errors: every refusal carries a malha.common.v1.ErrorInfo (domain "malha.artifacts") so that
// callers switch on the reason, never on the message (artifacts.proto lists the reasons and their codes).
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, type ConnectError } from "@connectrpc/connect";
import { reasonedError } from "../../libs/rpc/errors.js";
import type { INVALID_PAGE_TOKEN } from "../../libs/rpc/page-token.js";
import { ArtifactExpiredSchema } from "../../libs/gen/malha/artifacts/v1/artifacts_pb.js";

export const ARTIFACTS_ERROR_DOMAIN = "malha.artifacts";

export type ArtifactsErrorReason =
  | "INVALID_TENANT"
  | "INVALID_NAME"
  | "INVALID_JOB_ID"
  | "ARTIFACT_NOT_FOUND"
  | "ARTIFACT_EXPIRED"
  | "NAME_TAKEN"
  | "CHECKSUM_MISMATCH"
  | "SIZE_MISMATCH"
  | "TOO_LARGE"
  | "STORAGE_FULL"
  | typeof INVALID_PAGE_TOKEN;

function artifactsError(
  message: string,
  code: Code,
  reason: ArtifactsErrorReason | undefined,
  metadata: Record<string, string> = {},
  extra: ConnectError["details"] = [],
): ConnectError {
  return reasonedError(ARTIFACTS_ERROR_DOMAIN, message, code, reason, metadata, extra);
}

/** A caller's value in a message: JSON-quoted and cut short, since it may be anything a caller typed. */
const quote = (value: string) => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);

/** INVALID_ARGUMENT for a malformed request (stream order, content type, expiry…). */
export const badRequest = (message: string) => artifactsError(message, Code.InvalidArgument, undefined);

export const invalidTenant = (value: string, why: string) =>
  artifactsError(`invalid tenant ${quote(value)}: ${why}`, Code.InvalidArgument, "INVALID_TENANT");

export const invalidName = (value: string, why: string) =>
  artifactsError(`invalid artifact name ${quote(value)}: ${why}`, Code.InvalidArgument, "INVALID_NAME");

export const invalidJobId = (value: string, why: string) =>
  artifactsError(`invalid job_id ${quote(value)}: ${why}`, Code.InvalidArgument, "INVALID_JOB_ID");

/** The same answer for "missing" and "another tenant's", so ids cannot be probed across tenants. */
export const artifactNotFound = (id: string) => artifactsError(`artifact ${quote(id)} not found`, Code.NotFound, "ARTIFACT_NOT_FOUND");

export function artifactExpired(id: string, expiredAt: Date): ConnectError {
  return artifactsError(
    `artifact ${id} expired at ${expiredAt.toISOString()}; its content is no longer served`,
    Code.FailedPrecondition,
    "ARTIFACT_EXPIRED",
    { artifact_id: id, expired_at: expiredAt.toISOString() },
    [
      { desc: ArtifactExpiredSchema, value: create(ArtifactExpiredSchema, { artifactId: id, expiredAt: timestampFromDate(expiredAt) }) },
    ] as never,
  );
}

export const nameTaken = (name: string, existingId: string) =>
  artifactsError(
    `artifact name ${quote(name)} is already taken by ${existingId} with different content; nothing was stored`,
    Code.AlreadyExists,
    "NAME_TAKEN",
    { artifact_id: existingId },
  );

export const checksumMismatch = (expected: string, actual: string) =>
  artifactsError(
    `sha256 mismatch: expected ${expected}, received content hashes to ${actual}; nothing was stored`,
    Code.DataLoss,
    "CHECKSUM_MISMATCH",
    { expected_sha256: expected, actual_sha256: actual },
  );

export const sizeMismatch = (expected: bigint, actual: bigint) =>
  artifactsError(`size mismatch: expected ${expected} bytes, received ${actual}; nothing was stored`, Code.DataLoss, "SIZE_MISMATCH", {
    expected_size_bytes: String(expected),
    actual_size_bytes: String(actual),
  });

export const tooLarge = (maxBytes: number) =>
  artifactsError(`artifact exceeds the maximum size of ${maxBytes} bytes; nothing was stored`, Code.ResourceExhausted, "TOO_LARGE", {
    max_bytes: String(maxBytes),
  });

export const storageFull = () => artifactsError("artifact storage is full; nothing was stored", Code.ResourceExhausted, "STORAGE_FULL");

export const unavailable = (message: string) => artifactsError(message, Code.Unavailable, undefined);

/** Content missing behind a live row: the storage lost data we acknowledged. */
export const contentMissing = (id: string) => artifactsError(`content of artifact ${id} is missing from storage`, Code.DataLoss, undefined);
