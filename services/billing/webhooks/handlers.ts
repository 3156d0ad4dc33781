// Webhook endpoint and delivery-log RPCs. The secret is returned once, when created or rotated.
import { create, fromJsonString } from "@bufbuild/protobuf";
import type { Duration } from "@bufbuild/protobuf/wkt";
import { durationMsOf } from "../../../libs/rpc/duration.js";
import { Code, type ServiceImpl } from "@connectrpc/connect";
import type { BillingService } from "../../../libs/gen/malha/billing/v1/billing_pb.js";
import { pageSizeOf } from "../../../libs/rpc/page-size.js";
import type { PageTokens } from "../../../libs/rpc/page-token.js";
import { WebhookDeliverySchema, WebhookEndpointSchema, WebhookEventSchema } from "../../../libs/gen/malha/billing/v1/webhook_pb.js";
import { badRequest, billingError } from "../errors.js";
import { actingTenant } from "../auth/acting-tenant.js";
import { ts } from "../jobs/to-proto.js";
import type { DeliveryRow, EndpointRow, WebhookRepo } from "./repo.js";
import type { WebhookSender } from "./sender.js";
import { literalAddressProblem } from "./address.js";
import { newSecret, secretHint } from "./signing.js";

export interface WebhookHandlerDeps {
  repo: WebhookRepo;
  sender: WebhookSender;
  allowHttp: boolean;
  allowPrivate: boolean;
  maxAttempts: number;
  pageTokens: PageTokens;
}

const EVENT_TYPE = /^job\.[a-z_]+\.[a-z_]+$/;

const notConfigured = (tenant: string) => billingError(`tenant ${tenant} has no webhook endpoint`, Code.NotFound, "WEBHOOK_NOT_CONFIGURED");
const invalidUrl = (why: string) => billingError(`invalid webhook url: ${why}`, Code.InvalidArgument, "INVALID_WEBHOOK_URL");
const deliveryNotFound = (id: string) =>
  billingError(`delivery ${JSON.stringify(id.slice(0, 64))} not found`, Code.NotFound, "DELIVERY_NOT_FOUND");

function checkUrl(raw: string, allowHttp: boolean, allowPrivate: boolean): string {
  if (raw === "") throw invalidUrl("required");
  if (raw.length > 2048) throw invalidUrl("longer than 2048 characters");
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalidUrl("not a URL");
  }
  if (u.protocol !== "https:" && !(allowHttp && u.protocol === "http:"))
    throw invalidUrl(allowHttp ? "must be http or https" : "must be https");
  if (u.hash !== "") throw invalidUrl("must not have a fragment");
  // A name is checked again at every delivery, after DNS; an address can be refused right away.
  const literal = allowPrivate ? undefined : literalAddressProblem(raw);
  if (literal) throw invalidUrl(literal);
  return raw;
}

export const DEFAULT_PREVIOUS_SECRET_GRACE_MS = 24 * 3600_000;
const MAX_PREVIOUS_SECRET_GRACE_MS = 7 * 24 * 3600_000;

/** How long a rotated-out secret keeps signing: unset = 24 h, zero = not at all, at most 7 days. */
function previousSecretGraceMs(grace: Duration | undefined, rotating: boolean): number {
  if (grace !== undefined && !rotating) throw badRequest("previous_secret_grace applies only with rotate_secret");
  return durationMsOf("previous_secret_grace", grace, {
    defaultMs: DEFAULT_PREVIOUS_SECRET_GRACE_MS,
    maxMs: MAX_PREVIOUS_SECRET_GRACE_MS,
    minMs: 0,
  });
}

const endpointOf = (e: EndpointRow, now = new Date()) => {
  const previous =
    e.previousSecret && e.previousSecretUntil && e.previousSecretUntil > now
      ? { previousSecretHint: secretHint(e.previousSecret), previousSecretExpiresAt: ts(e.previousSecretUntil) }
      : {};
  return create(WebhookEndpointSchema, {
    tenant: e.tenant,
    url: e.url,
    eventTypes: e.eventTypes,
    enabled: e.enabled,
    secretHint: secretHint(e.secret),
    ...previous,
    createdAt: ts(e.createdAt),
    updatedAt: ts(e.updatedAt),
  });
};

const deliveryOf = (d: DeliveryRow) =>
  create(WebhookDeliverySchema, {
    deliveryId: d.id,
    tenant: d.tenant,
    eventType: d.eventType,
    jobId: d.jobId,
    state: d.state,
    attempts: d.attempts,
    lastHttpStatus: d.lastHttpStatus,
    lastError: d.lastError,
    nextAttemptAt: ts(d.nextAttemptAt),
    createdAt: ts(d.createdAt),
    deliveredAt: ts(d.deliveredAt),
    event: fromJsonString(WebhookEventSchema, d.body),
  });

export function webhookHandlers(d: WebhookHandlerDeps): Partial<ServiceImpl<typeof BillingService>> {
  return {
    async setWebhookEndpoint(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const url = checkUrl(req.url, d.allowHttp, d.allowPrivate);
      for (const t of req.eventTypes)
        if (!EVENT_TYPE.test(t)) throw badRequest(`event type ${JSON.stringify(t.slice(0, 64))} is not of the form job.<kind>.<state>`);
      const graceMs = previousSecretGraceMs(req.previousSecretGrace, req.rotateSecret);
      const existing = await d.repo.endpoint(tenant);
      const secret = !existing || req.rotateSecret ? newSecret() : undefined;
      await d.repo.upsertEndpoint({
        tenant,
        url,
        eventTypes: [...new Set(req.eventTypes)],
        enabled: req.enabled,
        ...(secret ? { secret, previousGraceMs: graceMs } : {}),
      });
      const saved = await d.repo.endpoint(tenant);
      return { endpoint: endpointOf(saved!), secret: secret ?? "" };
    },

    async getWebhookEndpoint(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const e = await d.repo.endpoint(tenant);
      if (!e) throw notConfigured(tenant);
      return { endpoint: endpointOf(e) };
    },

    async deleteWebhookEndpoint(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      if (!(await d.repo.deleteEndpoint(tenant))) throw notConfigured(tenant);
      return {};
    },

    async listWebhookDeliveries(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      const size = pageSizeOf(req.pageSize);
      const filter = { tenant: tenant, jobId: req.jobId, state: req.state };
      const before = d.pageTokens.decode("ListWebhookDeliveries", filter, req.pageToken, ["int", "string"]);
      const rows = await d.repo.list(tenant, {
        ...(req.jobId ? { jobId: req.jobId } : {}),
        ...(req.state ? { state: req.state } : {}),
        ...(before ? { before } : {}),
        limit: size + 1,
      });
      const page = rows.slice(0, size);
      const last = page.at(-1);
      return {
        deliveries: page.map(deliveryOf),
        nextPageToken:
          rows.length > size && last ? d.pageTokens.encode("ListWebhookDeliveries", filter, [last.createdAt.getTime(), last.id]) : "",
      };
    },

    async redeliverWebhook(req, ctx) {
      const tenant = actingTenant(ctx, req.tenant);
      if (!(await d.repo.get(tenant, req.deliveryId))) throw deliveryNotFound(req.deliveryId);
      if (!(await d.repo.endpoint(tenant))) throw notConfigured(tenant);
      await d.repo.redeliver(tenant, req.deliveryId, d.maxAttempts);
      const row = await d.repo.get(tenant, req.deliveryId);
      d.sender.wake();
      return { delivery: deliveryOf(row!) };
    },
  };
}
