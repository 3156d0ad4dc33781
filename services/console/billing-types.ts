// The Cobrança pages' JSON API, shared by the server (routes/billing.ts) and the web app (web/billing-*.tsx).
// Timestamps are ISO-8601 strings; every answer is already limited to the tenants the operator may see.

export type JobKindName = "boleto" | "remessa" | "retorno";
export type JobStateName = "received" | "validating" | "processing" | "completed" | "partially_completed" | "failed";
export type ItemStateName = "pending" | "validating" | "rendering" | "completed" | "failed" | "skipped";
export type DeliveryStateName = "pending" | "retrying" | "succeeded" | "dead_lettered" | "skipped";
export type EnvironmentName = "production" | "sandbox";

export const JOB_KINDS: readonly JobKindName[] = ["boleto", "remessa", "retorno"];
export const JOB_STATES: readonly JobStateName[] = ["received", "validating", "processing", "completed", "partially_completed", "failed"];
export const DELIVERY_STATES: readonly DeliveryStateName[] = ["pending", "retrying", "succeeded", "dead_lettered", "skipped"];

export interface BillingAccess {
  /** False when the console has no billing tenants configured (CONSOLE_BILLING_TENANTS_FILE). */
  configured: boolean;
  /** The tenants this operator may see, in the configured order. */
  tenants: string[];
  canAct: boolean;
}

export interface Counters {
  total: number;
  pending: number;
  inProgress: number;
  completed: number;
  failed: number;
  skipped: number;
}

export interface StateCount {
  kind: JobKindName;
  state: JobStateName;
  count: number;
}

/** One hour of finished jobs (by the hour they finished). */
export interface ThroughputBucket {
  /** Start of the hour. */
  hour: string;
  jobs: number;
  /** Items (títulos, occurrences) of those jobs. */
  items: number;
  /** From creation to the final state. */
  latencyP50Ms?: number;
  latencyP95Ms?: number;
}

export interface TenantProblem {
  tenant: string;
  message: string;
}

export interface OverviewResponse {
  tenants: string[];
  /** Summed over the tenants. */
  counts: StateCount[];
  byTenant: { tenant: string; counts: StateCount[] }[];
  hours: number;
  throughput: ThroughputBucket[];
  /** Tenants whose numbers could not be read (billing unavailable, token refused). */
  problems: TenantProblem[];
  at: string;
}

export interface JobSummaryView {
  tenant: string;
  jobId: string;
  kind: JobKindName;
  state: JobStateName;
  counters: Counters;
  idempotencyKey: string;
  requestedBy: string;
  environment: EnvironmentName;
  createdAt?: string;
  finishedAt?: string;
}

export interface JobsQuery {
  tenant?: string;
  kind?: JobKindName;
  state?: JobStateName;
  jobId?: string;
  idempotencyKey?: string;
  externalId?: string;
  /** Created at or after this day (YYYY-MM-DD, UTC). */
  from?: string;
  /** Created on or before this day (YYYY-MM-DD, UTC). */
  to?: string;
}

export interface JobsResponse {
  jobs: JobSummaryView[];
  /** True when some tenant had more jobs than shown. */
  truncated: boolean;
  problems: TenantProblem[];
}

export interface ItemErrorView {
  code: string;
  field: string;
  message: string;
  retryable: boolean;
}

export interface AttemptView {
  number: number;
  state: ItemStateName;
  startedAt?: string;
  finishedAt?: string;
  errors: ItemErrorView[];
}

export interface ItemView {
  itemId: string;
  position: number;
  state: ItemStateName;
  errors: ItemErrorView[];
  attemptCount: number;
  nossoNumero?: string;
  /** Every attempt, for items that failed or were retried (a bounded number of them). */
  attempts?: AttemptView[];
}

export interface SubloteView {
  subloteId: string;
  banco: string;
  convenio: string;
  carteira: string;
  titulos: number;
  state: "pending" | "generating" | "completed" | "failed";
  errors: ItemErrorView[];
  attemptCount: number;
  fileName?: string;
}

export interface RetornoView {
  fileName: string;
  banco: string;
  occurrences: number;
  duplicates: number;
  summary: { state: string; count: number }[];
  issues: { lineNumber: number; severity: string; code: string; message: string }[];
}

export interface JobDetail extends JobSummaryView {
  startedAt?: string;
  retryRounds: number;
  durationMs?: number;
  items: ItemView[];
  /** More items exist than listed. */
  itemsTruncated: boolean;
  sublotes?: SubloteView[];
  retorno?: RetornoView;
  /** Failed items (or sub-batches) whose last error is retryable, and the job is finished. */
  retryable: number;
}

export interface LinkView {
  name: string;
  url: string;
  sizeBytes: number;
  sha256: string;
  linkExpiresAt?: string;
}

export interface DownloadsResponse {
  links: LinkView[];
  expiresAt?: string;
}

export interface RetryResult {
  requeued: number;
  state: JobStateName;
  skippedItemIds: string[];
}

export interface DeliveryView {
  deliveryId: string;
  eventType: string;
  jobId: string;
  jobKind: JobKindName;
  state: DeliveryStateName;
  attempts: number;
  lastHttpStatus: number;
  lastError: string;
  nextAttemptAt?: string;
  createdAt?: string;
  deliveredAt?: string;
}

export interface WebhookResponse {
  endpoint?: { url: string; enabled: boolean; eventTypes: string[]; secretHint: string; updatedAt?: string };
  deliveries: DeliveryView[];
}
