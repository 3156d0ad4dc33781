// Validation of every caller-supplied string that reaches a storage key, a SQL row or an HTTP header.
// Refuse, never rewrite: a silently "fixed" name would make two different names collide.
import { invalidJobId, invalidName, invalidTenant, badRequest } from "./errors.js";

const SEGMENT = /^[A-Za-z0-9._-]+$/;
export const MAX_NAME_CHARS = 255;
export const MAX_TENANT_CHARS = 64;
export const MAX_JOB_ID_CHARS = 128;
export const MAX_CONTENT_TYPE_CHARS = 255;

/** A dot-only segment ("." / "..", or "..." which some filesystems and URL normalisers treat alike). */
const isDotSegment = (s: string) => /^\.+$/.test(s);

/** 1–64 of [A-Za-z0-9._-], not dot-only: the tenant is a directory of the disk backend. */
export function checkTenant(tenant: string): string {
  if (tenant === "") throw invalidTenant(tenant, "required");
  if (tenant.length > MAX_TENANT_CHARS) throw invalidTenant(tenant, `longer than ${MAX_TENANT_CHARS} characters`);
  if (!SEGMENT.test(tenant)) throw invalidTenant(tenant, "only A-Z, a-z, 0-9, '.', '_' and '-' are allowed");
  if (isDotSegment(tenant)) throw invalidTenant(tenant, "'.'-only values are not allowed");
  return tenant;
}

/** Relative path of [A-Za-z0-9._-] segments joined by "/", ≤ 255 characters, no empty or dot-only segment. */
export function checkName(name: string): string {
  if (name === "") throw invalidName(name, "required");
  if (name.length > MAX_NAME_CHARS) throw invalidName(name, `longer than ${MAX_NAME_CHARS} characters`);
  if (name.startsWith("/")) throw invalidName(name, "absolute paths are not allowed");
  for (const segment of name.split("/")) {
    if (segment === "") throw invalidName(name, "empty path segment");
    if (isDotSegment(segment)) throw invalidName(name, "'.' and '..' segments are not allowed");
    if (!SEGMENT.test(segment)) {
      throw invalidName(name, "only A-Z, a-z, 0-9, '.', '_', '-' and '/' between segments are allowed");
    }
  }
  return name;
}

/** Empty (tenant-level artifact) or 1–128 of [A-Za-z0-9._-]. */
export function checkJobId(jobId: string): string {
  if (jobId === "") return jobId;
  if (jobId.length > MAX_JOB_ID_CHARS) throw invalidJobId(jobId, `longer than ${MAX_JOB_ID_CHARS} characters`);
  if (!SEGMENT.test(jobId)) throw invalidJobId(jobId, "only A-Z, a-z, 0-9, '.', '_' and '-' are allowed");
  return jobId;
}

/** type/subtype with optional parameters, printable ASCII only: it is sent back as an HTTP header. */
export function checkContentType(value: string): string {
  if (value === "") throw badRequest("content_type is required");
  if (value.length > MAX_CONTENT_TYPE_CHARS) throw badRequest(`content_type is longer than ${MAX_CONTENT_TYPE_CHARS} characters`);
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+(\s*;[\x20-\x7e]*)?$/.test(value)) {
    throw badRequest("content_type must be a MIME type like application/pdf (printable ASCII)");
  }
  return value;
}

/** Artifact ids are ours: anything else cannot exist, and is answered like a missing one. */
export const ARTIFACT_ID = /^art_[0-9a-f]{32}$/;
