// Billing errors: every refusal carries a malha.common.v1.ErrorInfo (domain "malha.billing"), reasons as
// billing.proto lists them. Messages are precise and never carry a stack or another tenant's data.
import { Code, type ConnectError } from "@connectrpc/connect";
import { reasonedError } from "../../libs/rpc/errors.js";
import type { INVALID_PAGE_TOKEN } from "../../libs/rpc/page-token.js";
import { isTenantName, TENANT_RULE } from "./auth/tenant-name.js";

export const BILLING_ERROR_DOMAIN = "malha.billing";

export type BillingErrorReason =
  | "INVALID_TENANT"
  | "NO_ITEMS"
  | "FILE_TOO_LARGE"
  | "TOO_MANY_ITEMS"
  | "IDEMPOTENCY_KEY_REUSED"
  | "JOB_NOT_FOUND"
  | "ITEM_NOT_FOUND"
  | "JOB_NOT_FINISHED"
  | "ARTIFACTS_EXPIRED"
  | typeof INVALID_PAGE_TOKEN
  | "WEBHOOK_NOT_CONFIGURED"
  | "INVALID_WEBHOOK_URL"
  | "DELIVERY_NOT_FOUND";

export function billingError(
  message: string,
  code: Code,
  reason?: BillingErrorReason,
  metadata: Record<string, string> = {},
): ConnectError {
  return reasonedError(BILLING_ERROR_DOMAIN, message, code, reason, metadata);
}

const quote = (value: string) => JSON.stringify(value.length > 64 ? `${value.slice(0, 64)}…` : value);

export const badRequest = (message: string) => billingError(message, Code.InvalidArgument);
export const invalidTenant = (value: string, why: string) =>
  billingError(`invalid tenant ${quote(value)}: ${why}`, Code.InvalidArgument, "INVALID_TENANT");

/** The request's tenant, or INVALID_ARGUMENT naming the rule. */
export function checkTenant(tenant: string): string {
  if (!isTenantName(tenant)) throw invalidTenant(tenant, tenant === "" ? "required" : TENANT_RULE);
  return tenant;
}
export const noItems = () => billingError("a job needs at least one item", Code.InvalidArgument, "NO_ITEMS");
export const tooManyItems = (n: number, max: number) =>
  billingError(`${n} items exceed JOB_MAX_ITENS (${max})`, Code.ResourceExhausted, "TOO_MANY_ITEMS", {
    max: String(max),
    items: String(n),
  });
export const keyReused = (key: string) =>
  billingError(
    `idempotency key ${quote(key)} was already used with a different request`,
    Code.FailedPrecondition,
    "IDEMPOTENCY_KEY_REUSED",
  );
/** The same answer for "missing" and "another tenant's": ids cannot be probed across tenants. */
export const jobNotFound = (id: string) => billingError(`job ${quote(id)} not found`, Code.NotFound, "JOB_NOT_FOUND");
export const itemNotFound = (jobId: string, itemId: string) =>
  billingError(`item ${quote(itemId)} not found in job ${quote(jobId)}`, Code.NotFound, "ITEM_NOT_FOUND");
export const jobNotFinished = (id: string, state: string) =>
  billingError(`job ${id} is ${state}; wait until it finishes`, Code.FailedPrecondition, "JOB_NOT_FINISHED");
