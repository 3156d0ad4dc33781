// The Cobrança pages' API. Every route checks the tenant against the operator's scope (billing-scope.ts)
// before billing is called; the buttons need the operator role (the router checks it) and are logged with
// who pressed them.
import type { BillingTenants } from "../billing-config.js";
import { requireTenant, visibleTenants } from "../billing-scope.js";
import {
  DELIVERY_STATES,
  JOB_KINDS,
  JOB_STATES,
  type BillingAccess,
  type DeliveryStateName,
  type JobKindName,
  type JobsQuery,
  type JobStateName,
} from "../billing-types.js";
import type { BillingView } from "../billing-view.js";
import { badRequest, HttpError, json } from "../http-kit.js";
import { get, hasRole, post, type Route, type RouteContext } from "../router.js";

const ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_HOURS = 72;

function id(value: string, field: string): string {
  if (!ID.test(value)) throw badRequest(`${field} must be 1-64 of A-Z a-z 0-9 . _ -`);
  return value;
}

function oneOf<T extends string>(value: string | null, allowed: readonly T[], field: string): T | undefined {
  if (value === null || value === "") return undefined;
  if (!(allowed as readonly string[]).includes(value)) throw badRequest(`${field} must be one of ${allowed.join(", ")}`);
  return value as T;
}

function text(value: string | null, field: string, max: number): string | undefined {
  if (value === null || value === "") return undefined;
  if (value.length > max) throw badRequest(`${field} is longer than ${max} characters`);
  return value;
}

export function billingRoutes(view: BillingView | undefined, tenants: BillingTenants | undefined): Route[] {
  // Read on every request: the tenants file is re-read when it changes.
  const configured = (): string[] => tenants?.names ?? [];
  const need = (): BillingView => {
    if (!view) throw new HttpError(404, "NOT_FOUND", "billing is not configured in this console (CONSOLE_BILLING_TENANTS_FILE)");
    return view;
  };
  const scoped = ({ op, params }: RouteContext) => requireTenant(op, configured(), params[0]!);
  const kind = (value: string) => oneOf<JobKindName>(value, JOB_KINDS, "kind")!;

  return [
    get(/^\/api\/billing\/access$/, async ({ res, op }) => {
      const access: BillingAccess = {
        configured: view !== undefined,
        tenants: visibleTenants(op, configured()),
        canAct: hasRole(op, "operator"),
      };
      json(res, 200, access);
    }),

    get(/^\/api\/billing\/overview$/, async ({ res, op, query }) => {
      const hours = Number(query.get("hours") ?? "24");
      if (!Number.isInteger(hours) || hours < 1 || hours > MAX_HOURS) throw badRequest(`hours must be an integer from 1 to ${MAX_HOURS}`);
      json(res, 200, await need().overview(visibleTenants(op, configured()), hours));
    }),

    get(/^\/api\/billing\/jobs$/, async ({ res, op, query }) => {
      const tenant = query.get("tenant");
      const list = tenant ? [requireTenant(op, configured(), tenant)] : visibleTenants(op, configured());
      const jobId = text(query.get("jobId"), "jobId", 64);
      const q: JobsQuery = {
        ...opt("kind", oneOf<JobKindName>(query.get("kind"), JOB_KINDS, "kind")),
        ...opt("state", oneOf<JobStateName>(query.get("state"), JOB_STATES, "state")),
        ...opt("jobId", jobId === undefined ? undefined : id(jobId, "jobId")),
        ...opt("idempotencyKey", text(query.get("idempotencyKey"), "idempotencyKey", 255)),
        ...opt("externalId", text(query.get("externalId"), "externalId", 64)),
        ...opt("from", text(query.get("from"), "from", 10)),
        ...opt("to", text(query.get("to"), "to", 10)),
      };
      json(res, 200, await need().listJobs(list, q));
    }),

    get(/^\/api\/billing\/tenants\/([^/]+)\/jobs\/([^/]+)\/([^/]+)$/, async (ctx) => {
      const tenant = scoped(ctx);
      json(ctx.res, 200, await need().job(tenant, kind(ctx.params[1]!), id(ctx.params[2]!, "jobId")));
    }),

    get(/^\/api\/billing\/tenants\/([^/]+)\/jobs\/([^/]+)\/([^/]+)\/downloads$/, async (ctx) => {
      const tenant = scoped(ctx);
      const jobId = id(ctx.params[2]!, "jobId");
      const answer = await need().downloads(tenant, kind(ctx.params[1]!), jobId);
      // Signed links are bearer credentials: who was handed them is worth a line.
      ctx.log.info({ actor: ctx.op.user, action: "billing-downloads", tenant, jobId, links: answer.links.length }, "console action");
      json(ctx.res, 200, answer);
    }),

    post(/^\/api\/billing\/tenants\/([^/]+)\/jobs\/([^/]+)\/([^/]+)\/retry$/, "operator", "retry failed billing items", async (ctx) => {
      const tenant = scoped(ctx);
      const k = kind(ctx.params[1]!);
      const jobId = id(ctx.params[2]!, "jobId");
      const result = await need().retry(tenant, k, jobId, `console:${ctx.op.user}`);
      ctx.log.info({ actor: ctx.op.user, action: "billing-retry", tenant, kind: k, jobId, requeued: result.requeued }, "console action");
      json(ctx.res, 200, result);
    }),

    get(/^\/api\/billing\/tenants\/([^/]+)\/webhook$/, async (ctx) => {
      const tenant = scoped(ctx);
      const state = oneOf<DeliveryStateName>(ctx.query.get("state"), DELIVERY_STATES, "state");
      json(ctx.res, 200, await need().webhook(tenant, state));
    }),

    post(/^\/api\/billing\/tenants\/([^/]+)\/webhook\/deliveries\/([^/]+)\/redeliver$/, "operator", "redeliver a webhook", async (ctx) => {
      const tenant = scoped(ctx);
      const deliveryId = id(ctx.params[1]!, "deliveryId");
      const delivery = await need().redeliver(tenant, deliveryId);
      ctx.log.info({ actor: ctx.op.user, action: "billing-redeliver", tenant, deliveryId }, "console action");
      json(ctx.res, 200, delivery);
    }),
  ];
}

const opt = <K extends string, V>(key: K, value: V | undefined): Partial<Record<K, V>> =>
  value === undefined ? {} : ({ [key]: value } as Record<K, V>);
