// The browser side of the Cobrança API (services/console/routes/billing.ts).
import type {
  BillingAccess,
  DeliveryStateName,
  DeliveryView,
  DownloadsResponse,
  JobDetail,
  JobKindName,
  JobsQuery,
  JobsResponse,
  OverviewResponse,
  RetryResult,
  WebhookResponse,
} from "../billing-types.js";
import { call } from "./api.js";

const enc = encodeURIComponent;
const job = (tenant: string, kind: JobKindName, jobId: string) => `/api/billing/tenants/${enc(tenant)}/jobs/${enc(kind)}/${enc(jobId)}`;

function query(params: object): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (typeof v === "string" && v !== "") q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

export const billingApi = {
  access: () => call<BillingAccess>("GET", "/api/billing/access"),
  overview: (hours: number) => call<OverviewResponse>("GET", `/api/billing/overview?hours=${hours}`),
  jobs: (q: JobsQuery) => call<JobsResponse>("GET", `/api/billing/jobs${query(q)}`),
  job: (tenant: string, kind: JobKindName, jobId: string) => call<JobDetail>("GET", job(tenant, kind, jobId)),
  downloads: (tenant: string, kind: JobKindName, jobId: string) => call<DownloadsResponse>("GET", `${job(tenant, kind, jobId)}/downloads`),
  retry: (tenant: string, kind: JobKindName, jobId: string) => call<RetryResult>("POST", `${job(tenant, kind, jobId)}/retry`),
  webhook: (tenant: string, state: DeliveryStateName | "") =>
    call<WebhookResponse>("GET", `/api/billing/tenants/${enc(tenant)}/webhook${query({ state })}`),
  redeliver: (tenant: string, deliveryId: string) =>
    call<DeliveryView>("POST", `/api/billing/tenants/${enc(tenant)}/webhook/deliveries/${enc(deliveryId)}/redeliver`),
};

export const jobHref = (tenant: string, kind: JobKindName, jobId: string) => `/cobranca/${enc(tenant)}/${kind}/${enc(jobId)}`;
export const webhookHref = (tenant: string) => `/cobranca/${enc(tenant)}/webhook`;
