// `billing webhooks set|show|delete|deliveries|redeliver`: a tenant's completion-webhook endpoint, its
// signing secret (shown once, when created or rotated) and the delivery log.
import type { WebhookDelivery, WebhookEndpoint } from "../libs/gen/malha/billing/v1/webhook_pb.js";
import { DeliveryState } from "../libs/gen/malha/billing/v1/webhook_pb.js";
import { billing, enumFlag, tenantOf, tenantOption } from "./billing-common.js";
import { str, type Command } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { allPages, enumName, iso, json, keyValueLines, when } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 };

/** "24h", "90m", "0s", "3600" (seconds) → seconds. */
export function parseDurationSeconds(text: string, what: string): number {
  const m = /^(\d+)([smhd]?)$/.exec(text.trim());
  if (!m) throw new UsageError(`${what} must be a whole number of seconds or end in s, m, h or d (e.g. 24h, 0s)`);
  return Number(m[1]) * UNITS[m[2] || "s"]!;
}

function endpointRow(e: WebhookEndpoint) {
  return {
    tenant: e.tenant,
    url: e.url,
    eventTypes: e.eventTypes,
    enabled: e.enabled,
    secretHint: e.secretHint,
    previousSecretHint: e.previousSecretHint || null,
    previousSecretExpiresAt: iso(e.previousSecretExpiresAt),
    updatedAt: iso(e.updatedAt),
  };
}

function endpointText(e: WebhookEndpoint): string {
  const lines: [string, string][] = [
    ["url", e.url],
    ["events", e.eventTypes.length ? e.eventTypes.join(", ") : "all"],
    ["enabled", e.enabled ? "yes" : "no"],
    ["secret", `…${e.secretHint}`],
    ["previous secret", e.previousSecretHint ? `…${e.previousSecretHint}, signs until ${when(e.previousSecretExpiresAt)}` : "-"],
    ["updated", when(e.updatedAt)],
  ];
  return keyValueLines(lines);
}

export const billingWebhooksSet: Command = {
  usage: "billing webhooks set --url <url> [--events <a,b>] [--disabled] [--rotate [--grace <24h|0s>]]",
  summary:
    "create or change the tenant's webhook endpoint; a new endpoint or --rotate prints the signing secret once (--grace: how long the previous one keeps signing, 0s if it leaked)",
  options: {
    ...tenantOption,
    url: { type: "string" },
    events: { type: "string" },
    disabled: { type: "boolean" },
    rotate: { type: "boolean" },
    grace: { type: "string" },
  },
  positionals: [0, 0],
  async run(ctx) {
    const url = str(ctx.values, "url");
    if (!url) throw new UsageError("--url is required");
    const grace = str(ctx.values, "grace");
    if (grace !== undefined && !ctx.values.rotate) throw new UsageError("--grace goes with --rotate");
    const events = str(ctx.values, "events");
    const res = await billing(ctx).setWebhookEndpoint({
      tenant: tenantOf(ctx),
      url,
      eventTypes: events
        ? events
            .split(",")
            .map((e) => e.trim())
            .filter((e) => e !== "")
        : [],
      enabled: !ctx.values.disabled,
      rotateSecret: ctx.values.rotate === true,
      ...(grace !== undefined ? { previousSecretGrace: { seconds: BigInt(parseDurationSeconds(grace, "--grace")), nanos: 0 } } : {}),
    });
    if (ctx.json) return write(ctx.io.out, json({ ...endpointRow(res.endpoint!), secret: res.secret || null }));
    ctx.io.out.write(endpointText(res.endpoint!));
    // stdout, so it can be piped into a secret store; said once: the service cannot show it again.
    if (res.secret) write(ctx.io.out, `signing secret (shown once, store it now): ${res.secret}`);
  },
};

export const billingWebhooksShow: Command = {
  usage: "billing webhooks show",
  summary: "the tenant's webhook endpoint (never its secret, only hints)",
  options: tenantOption,
  positionals: [0, 0],
  async run(ctx) {
    const e = (await billing(ctx).getWebhookEndpoint({ tenant: tenantOf(ctx) })).endpoint!;
    if (ctx.json) write(ctx.io.out, json(endpointRow(e)));
    else ctx.io.out.write(endpointText(e));
  },
};

export const billingWebhooksDelete: Command = {
  usage: "billing webhooks delete",
  summary: "remove the tenant's webhook endpoint; later events are logged as skipped deliveries",
  options: tenantOption,
  positionals: [0, 0],
  async run(ctx) {
    const tenant = tenantOf(ctx);
    await billing(ctx).deleteWebhookEndpoint({ tenant });
    if (ctx.json) write(ctx.io.out, json({ tenant, deleted: true }));
    else write(ctx.io.out, `webhook endpoint of ${tenant} deleted`);
  },
};

function deliveryRow(d: WebhookDelivery) {
  return {
    deliveryId: d.deliveryId,
    eventType: d.eventType,
    jobId: d.jobId,
    state: enumName(DeliveryState, d.state),
    attempts: d.attempts,
    lastHttpStatus: d.lastHttpStatus || null,
    lastError: d.lastError || null,
    nextAttemptAt: iso(d.nextAttemptAt),
    createdAt: iso(d.createdAt),
    deliveredAt: iso(d.deliveredAt),
  };
}

export const billingWebhooksDeliveries: Command = {
  usage: "billing webhooks deliveries [--job <job>] [--state <s>]",
  summary: "the delivery log, newest first; --state pending|retrying|succeeded|dead-lettered|skipped",
  options: { ...tenantOption, job: { type: "string" }, state: { type: "string" } },
  positionals: [0, 0],
  async run(ctx) {
    const state = enumFlag(ctx, "state", DeliveryState) ?? DeliveryState.UNSPECIFIED;
    const tenant = tenantOf(ctx);
    const client = billing(ctx);
    const all = await allPages(async (pageToken) => {
      const page = await client.listWebhookDeliveries({ tenant, jobId: str(ctx.values, "job") ?? "", state, pageSize: 500, pageToken });
      return { items: page.deliveries, nextPageToken: page.nextPageToken };
    });
    if (ctx.json) return write(ctx.io.out, json(all.map(deliveryRow)));
    ctx.io.out.write(
      table(
        ["delivery", "event", "job", "state", "attempts", "last", "created"],
        all.map((d) => [
          d.deliveryId,
          d.eventType,
          d.jobId,
          enumName(DeliveryState, d.state).toLowerCase(),
          String(d.attempts),
          d.lastError || (d.lastHttpStatus ? `HTTP ${d.lastHttpStatus}` : "-"),
          when(d.createdAt),
        ]),
      ),
    );
  },
};

export const billingWebhooksRedeliver: Command = {
  usage: "billing webhooks redeliver <delivery>",
  summary: "send a delivery again (same webhook-id and body), e.g. a dead-lettered one once the receiver is fixed",
  options: tenantOption,
  positionals: [1, 1],
  async run(ctx) {
    const d = (await billing(ctx).redeliverWebhook({ tenant: tenantOf(ctx), deliveryId: ctx.positionals[0]! })).delivery!;
    if (ctx.json) write(ctx.io.out, json(deliveryRow(d)));
    else write(ctx.io.out, `${d.deliveryId}: ${enumName(DeliveryState, d.state).toLowerCase()}, queued again for ${d.jobId}`);
  },
};
