// The Cobrança pages' data and buttons, as plain async functions over billing's gRPC API. The caller
// (routes/billing.ts) has already checked that the operator may see the tenant; this file only shapes the
// answers and sends each tenant's API token.
import { timestampFromDate, type Timestamp } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import type { BillingService, JobSummary } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import type { ItemAttempt, BoletoJobItem } from "../../libs/gen/malha/billing/v1/boleto_pb.js";
import { IssueSeverity, OcorrenciaState, SubloteState, type Sublote } from "../../libs/gen/malha/billing/v1/cnab_pb.js";
import {
  Environment,
  ItemState,
  JobKind,
  JobState,
  type ArtifactRef,
  type ItemError,
  type JobCounters,
} from "../../libs/gen/malha/billing/v1/types_pb.js";
import { DeliveryState, type WebhookDelivery } from "../../libs/gen/malha/billing/v1/webhook_pb.js";
import type { BillingTenants } from "./billing-config.js";
import type {
  AttemptView,
  Counters,
  DeliveryStateName,
  DeliveryView,
  DownloadsResponse,
  ItemErrorView,
  ItemStateName,
  ItemView,
  JobDetail,
  JobKindName,
  JobsQuery,
  JobsResponse,
  JobStateName,
  JobSummaryView,
  LinkView,
  OverviewResponse,
  RetryResult,
  StateCount,
  TenantProblem,
  ThroughputBucket,
  WebhookResponse,
} from "./billing-types.js";

export interface BillingViewDeps {
  billing: Client<typeof BillingService>;
  tenants: BillingTenants;
  now?: () => Date;
}

export interface BillingView {
  overview(tenants: readonly string[], hours: number): Promise<OverviewResponse>;
  listJobs(tenants: readonly string[], q: JobsQuery): Promise<JobsResponse>;
  job(tenant: string, kind: JobKindName, jobId: string): Promise<JobDetail>;
  downloads(tenant: string, kind: JobKindName, jobId: string): Promise<DownloadsResponse>;
  retry(tenant: string, kind: JobKindName, jobId: string, actor: string): Promise<RetryResult>;
  webhook(tenant: string, state?: DeliveryStateName): Promise<WebhookResponse>;
  redeliver(tenant: string, deliveryId: string): Promise<DeliveryView>;
}

/** Jobs read per tenant for a list or the throughput chart: a console page, not an export. */
const LIST_LIMIT = 100;
const THROUGHPUT_LIMIT = 2000;
const ITEMS_SHOWN = 200;
const ATTEMPTS_READ = 20;
/** Signed links handed to the browser live briefly: they are bearer credentials. */
const LINK_TTL = { seconds: 10n * 60n, nanos: 0 };

export const KIND: Record<JobKindName, JobKind> = { boleto: JobKind.BOLETO, remessa: JobKind.REMESSA, retorno: JobKind.RETORNO };
const KIND_NAME: Partial<Record<JobKind, JobKindName>> = {
  [JobKind.BOLETO]: "boleto",
  [JobKind.REMESSA]: "remessa",
  [JobKind.RETORNO]: "retorno",
};
export const STATE: Record<JobStateName, JobState> = {
  received: JobState.RECEIVED,
  validating: JobState.VALIDATING,
  processing: JobState.PROCESSING,
  completed: JobState.COMPLETED,
  partially_completed: JobState.PARTIALLY_COMPLETED,
  failed: JobState.FAILED,
};
const STATE_NAME = Object.fromEntries(Object.entries(STATE).map(([k, v]) => [v, k])) as Partial<Record<JobState, JobStateName>>;
const ITEM_STATE_NAME: Partial<Record<ItemState, ItemStateName>> = {
  [ItemState.PENDING]: "pending",
  [ItemState.VALIDATING]: "validating",
  [ItemState.RENDERING]: "rendering",
  [ItemState.COMPLETED]: "completed",
  [ItemState.FAILED]: "failed",
  [ItemState.SKIPPED]: "skipped",
};
export const DELIVERY_STATE: Record<DeliveryStateName, DeliveryState> = {
  pending: DeliveryState.PENDING,
  retrying: DeliveryState.RETRYING,
  succeeded: DeliveryState.SUCCEEDED,
  dead_lettered: DeliveryState.DEAD_LETTERED,
  skipped: DeliveryState.SKIPPED,
};
const DELIVERY_STATE_NAME = Object.fromEntries(Object.entries(DELIVERY_STATE).map(([k, v]) => [v, k])) as Partial<
  Record<DeliveryState, DeliveryStateName>
>;
const FINAL: readonly JobStateName[] = ["completed", "partially_completed", "failed"];

const msOf = (t: Timestamp | undefined): number | undefined =>
  t && (t.seconds !== 0n || t.nanos !== 0) ? Number(t.seconds) * 1000 + Math.floor(t.nanos / 1e6) : undefined;
const iso = (t: Timestamp | undefined): string | undefined => {
  const ms = msOf(t);
  return ms === undefined ? undefined : new Date(ms).toISOString();
};
const opt = <K extends string, V>(key: K, value: V | undefined | ""): Partial<Record<K, V>> =>
  value === undefined || value === "" ? {} : ({ [key]: value } as Record<K, V>);

export const jobStateName = (s: JobState): JobStateName => STATE_NAME[s] ?? "received";
const kindName = (k: JobKind): JobKindName => KIND_NAME[k] ?? "boleto";

export function countersOf(c: JobCounters | undefined): Counters {
  return {
    total: c?.total ?? 0,
    pending: c?.pending ?? 0,
    inProgress: c?.inProgress ?? 0,
    completed: c?.completed ?? 0,
    failed: c?.failed ?? 0,
    skipped: c?.skipped ?? 0,
  };
}

export function toSummaryView(tenant: string, j: JobSummary): JobSummaryView {
  return {
    tenant,
    jobId: j.jobId,
    kind: kindName(j.kind),
    state: jobStateName(j.state),
    counters: countersOf(j.counters),
    idempotencyKey: j.idempotencyKey,
    requestedBy: j.requestedBy,
    environment: j.environment === Environment.SANDBOX ? "sandbox" : "production",
    ...opt("createdAt", iso(j.createdAt)),
    ...opt("finishedAt", iso(j.finishedAt)),
  };
}

const errorView = (e: ItemError): ItemErrorView => ({ code: e.code, field: e.field, message: e.message, retryable: e.retryable });

function attemptView(a: ItemAttempt): AttemptView {
  return {
    number: a.number,
    state: ITEM_STATE_NAME[a.state] ?? "pending",
    errors: a.errors.map(errorView),
    ...opt("startedAt", iso(a.startedAt)),
    ...opt("finishedAt", iso(a.finishedAt)),
  };
}

function itemView(i: BoletoJobItem): ItemView {
  return {
    itemId: i.itemId,
    position: i.position,
    state: ITEM_STATE_NAME[i.state] ?? "pending",
    errors: i.errors.map(errorView),
    attemptCount: i.attemptCount,
    ...opt("nossoNumero", i.result?.nossoNumero),
  };
}

const SUBLOTE_STATE: Record<SubloteState, "pending" | "generating" | "completed" | "failed"> = {
  [SubloteState.UNSPECIFIED]: "pending",
  [SubloteState.PENDING]: "pending",
  [SubloteState.GENERATING]: "generating",
  [SubloteState.COMPLETED]: "completed",
  [SubloteState.FAILED]: "failed",
};

function subloteView(s: Sublote) {
  return {
    subloteId: s.subloteId,
    banco: s.key?.banco ?? "",
    convenio: s.key?.convenio ?? "",
    carteira: s.key?.carteira ?? "",
    titulos: s.titulos,
    state: SUBLOTE_STATE[s.state] ?? "pending",
    errors: s.errors.map(errorView),
    attemptCount: s.attemptCount,
    ...opt("fileName", s.file?.name),
  };
}

function linkView(a: ArtifactRef | undefined): LinkView[] {
  if (!a?.downloadUrl) return [];
  return [
    {
      name: a.name,
      url: a.downloadUrl,
      sizeBytes: Number(a.sizeBytes),
      sha256: a.sha256,
      ...opt("linkExpiresAt", iso(a.downloadUrlExpiresAt)),
    },
  ];
}

function deliveryView(d: WebhookDelivery): DeliveryView {
  return {
    deliveryId: d.deliveryId,
    eventType: d.eventType,
    jobId: d.jobId,
    jobKind: kindName(d.event?.kind ?? JobKind.BOLETO),
    state: DELIVERY_STATE_NAME[d.state] ?? "pending",
    attempts: d.attempts,
    lastHttpStatus: d.lastHttpStatus,
    lastError: d.lastError,
    ...opt("nextAttemptAt", iso(d.nextAttemptAt)),
    ...opt("createdAt", iso(d.createdAt)),
    ...opt("deliveredAt", iso(d.deliveredAt)),
  };
}

function percentile(sorted: readonly number[], p: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * Finished jobs per hour over the last `hours` hours ending at `now` (oldest first, every hour present):
 * how many, their items, and the creation-to-final-state latency (p50, p95).
 */
export function throughput(jobs: readonly JobSummaryView[], now: Date, hours: number): ThroughputBucket[] {
  const HOUR = 3_600_000;
  const last = Math.floor(now.getTime() / HOUR) * HOUR;
  const first = last - (hours - 1) * HOUR;
  const buckets = Array.from({ length: hours }, (_, i) => ({ start: first + i * HOUR, jobs: 0, items: 0, latencies: [] as number[] }));
  for (const j of jobs) {
    if (!j.finishedAt || !FINAL.includes(j.state)) continue;
    const finished = Date.parse(j.finishedAt);
    const index = Math.floor((finished - first) / HOUR);
    const b = buckets[index];
    if (!b) continue;
    b.jobs += 1;
    b.items += j.counters.total;
    if (j.createdAt) b.latencies.push(Math.max(0, finished - Date.parse(j.createdAt)));
  }
  return buckets.map((b) => {
    const sorted = b.latencies.sort((x, y) => x - y);
    return {
      hour: new Date(b.start).toISOString(),
      jobs: b.jobs,
      items: b.items,
      ...opt("latencyP50Ms", percentile(sorted, 50)),
      ...opt("latencyP95Ms", percentile(sorted, 95)),
    };
  });
}

/** Adds per-tenant counts into one list by kind and state. */
export function sumCounts(lists: readonly StateCount[][]): StateCount[] {
  const total = new Map<string, StateCount>();
  for (const list of lists)
    for (const c of list) {
      const key = `${c.kind}:${c.state}`;
      const seen = total.get(key);
      if (seen) seen.count += c.count;
      else total.set(key, { ...c });
    }
  const order = (c: StateCount) => Object.keys(KIND).indexOf(c.kind) * 10 + Object.keys(STATE).indexOf(c.state);
  return [...total.values()].sort((a, b) => order(a) - order(b));
}

/** YYYY-MM-DD as the start of that UTC day; `endOfDay` gives the start of the next day (an exclusive end). */
export function dayStart(day: string, field: string, endOfDay = false): Date {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  const d = m ? new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]))) : undefined;
  if (!d || d.toISOString().slice(0, 10) !== day) throw new ConnectError(`${field} must be a date YYYY-MM-DD`, Code.InvalidArgument);
  return endOfDay ? new Date(d.getTime() + 86_400_000) : d;
}

export function createBillingView(deps: BillingViewDeps): BillingView {
  const { billing, tenants } = deps;
  const now = deps.now ?? (() => new Date());
  const auth = (tenant: string): CallOptions => {
    const token = tenants.token(tenant);
    return token ? { headers: { authorization: `Bearer ${token}` } } : {};
  };
  const problem = (tenant: string, err: unknown): TenantProblem => ({ tenant, message: ConnectError.from(err).rawMessage });

  /** Every tenant at once; one tenant's failure is reported beside the others' answers, not instead of them. */
  async function perTenant<T>(list: readonly string[], read: (tenant: string) => Promise<T>) {
    const settled = await Promise.allSettled(list.map(read));
    const ok: { tenant: string; value: T }[] = [];
    const problems: TenantProblem[] = [];
    settled.forEach((s, i) =>
      s.status === "fulfilled" ? ok.push({ tenant: list[i]!, value: s.value }) : problems.push(problem(list[i]!, s.reason)),
    );
    return { ok, problems };
  }

  async function pages(tenant: string, req: Parameters<Client<typeof BillingService>["listJobs"]>[0], limit: number) {
    const out: JobSummary[] = [];
    let pageToken = "";
    for (;;) {
      const page = await billing.listJobs({ ...req, tenant, pageSize: Math.min(500, limit - out.length), pageToken }, auth(tenant));
      out.push(...page.jobs);
      if (!page.nextPageToken || out.length >= limit) return { jobs: out, more: page.nextPageToken !== "" };
      pageToken = page.nextPageToken;
    }
  }

  return {
    async overview(list, hours) {
      const since = new Date(Math.floor(now().getTime() / 3_600_000) * 3_600_000 - (hours - 1) * 3_600_000);
      const counts = await perTenant(list, async (tenant) =>
        (await billing.countJobs({ tenant }, auth(tenant))).counts.map(
          (c): StateCount => ({ kind: kindName(c.kind), state: jobStateName(c.state), count: c.count }),
        ),
      );
      // Jobs finished in the window were created at most a few hours before it: ample for a console.
      const created = { start: timestampFromDate(new Date(since.getTime() - 24 * 3_600_000)) };
      const recent = await perTenant(list, async (tenant) =>
        (await pages(tenant, { created }, THROUGHPUT_LIMIT)).jobs.map((j) => toSummaryView(tenant, j)),
      );
      return {
        tenants: [...list],
        counts: sumCounts(counts.ok.map((c) => c.value)),
        byTenant: counts.ok.map((c) => ({ tenant: c.tenant, counts: c.value })),
        hours,
        throughput: throughput(
          recent.ok.flatMap((r) => r.value),
          now(),
          hours,
        ),
        problems: [...counts.problems, ...recent.problems.filter((p) => !counts.problems.some((c) => c.tenant === p.tenant))],
        at: now().toISOString(),
      };
    },

    async listJobs(list, q) {
      const start = q.from ? dayStart(q.from, "from") : undefined;
      const end = q.to ? dayStart(q.to, "to", true) : undefined;
      const req = {
        ...(q.kind ? { kind: KIND[q.kind] } : {}),
        ...(q.state ? { state: STATE[q.state] } : {}),
        ...(start || end
          ? { created: { ...(start ? { start: timestampFromDate(start) } : {}), ...(end ? { end: timestampFromDate(end) } : {}) } }
          : {}),
        ...(q.jobId ? { jobId: q.jobId } : {}),
        ...(q.idempotencyKey ? { idempotencyKey: q.idempotencyKey } : {}),
        ...(q.externalId ? { itemId: q.externalId } : {}),
      };
      const read = await perTenant(list, (tenant) => pages(tenant, req, LIST_LIMIT));
      const jobs = read.ok
        .flatMap((r) => r.value.jobs.map((j) => toSummaryView(r.tenant, j)))
        .sort((a, b) => (b.createdAt ?? "").localeCompare(a.createdAt ?? "") || b.jobId.localeCompare(a.jobId))
        .slice(0, LIST_LIMIT);
      const more = read.ok.some((r) => r.value.more) || read.ok.reduce((n, r) => n + r.value.jobs.length, 0) > LIST_LIMIT;
      return { jobs, truncated: more, problems: read.problems };
    },

    async job(tenant, kind, jobId) {
      const [summary] = (await billing.listJobs({ tenant, jobId, kind: KIND[kind] }, auth(tenant))).jobs;
      if (!summary) throw new ConnectError(`no ${kind} job ${jobId}`, Code.NotFound);
      const base = toSummaryView(tenant, summary);
      if (kind === "boleto") {
        const { job } = await billing.getBoletoJob({ tenant, jobId }, auth(tenant));
        const page = await billing.listBoletoJobItems({ tenant, jobId, pageSize: ITEMS_SHOWN }, auth(tenant));
        const items = page.items.map(itemView);
        // Attempts of the items an operator looks into: the failed and the retried ones.
        const wanted = items.filter((i) => i.state === "failed" || i.attemptCount > 1).slice(0, ATTEMPTS_READ);
        const detailed = await Promise.all(wanted.map((i) => billing.getBoletoJobItem({ tenant, jobId, itemId: i.itemId }, auth(tenant))));
        for (const d of detailed) {
          const view = items.find((i) => i.itemId === d.item?.itemId);
          if (view && d.item) view.attempts = d.item.attempts.map(attemptView);
        }
        const finished = FINAL.includes(jobStateName(job!.state));
        return {
          ...base,
          state: jobStateName(job!.state),
          counters: countersOf(job!.counters),
          ...opt("startedAt", iso(job!.startedAt)),
          ...opt("finishedAt", iso(job!.finishedAt)),
          retryRounds: job!.retryRounds,
          ...(job!.metrics && job!.finishedAt ? { durationMs: Number(job!.metrics.duracaoMs) } : {}),
          items,
          itemsTruncated: page.nextPageToken !== "",
          // Counted on the page read: a job larger than ITEMS_SHOWN may have more.
          retryable: finished ? items.filter((i) => i.state === "failed" && i.errors.some((e) => e.retryable)).length : 0,
        };
      }
      if (kind === "remessa") {
        const { job } = await billing.getRemessaJob({ tenant, jobId }, auth(tenant));
        const sublotes = job!.sublotes.map(subloteView);
        const finished = FINAL.includes(jobStateName(job!.state));
        return {
          ...base,
          state: jobStateName(job!.state),
          counters: countersOf(job!.counters),
          ...opt("startedAt", iso(job!.startedAt)),
          ...opt("finishedAt", iso(job!.finishedAt)),
          retryRounds: 0,
          ...(job!.metrics && job!.finishedAt ? { durationMs: Number(job!.metrics.duracaoMs) } : {}),
          items: [],
          itemsTruncated: false,
          sublotes,
          retryable: finished ? sublotes.filter((s) => s.state === "failed").length : 0,
        };
      }
      const { job } = await billing.getRetornoJob({ tenant, jobId }, auth(tenant));
      return {
        ...base,
        state: jobStateName(job!.state),
        retryRounds: 0,
        ...(job!.metrics && job!.finishedAt ? { durationMs: Number(job!.metrics.duracaoMs) } : {}),
        items: [],
        itemsTruncated: false,
        retorno: {
          fileName: job!.fileName,
          banco: job!.banco,
          occurrences: job!.occurrencesTotal,
          duplicates: job!.duplicates,
          summary: job!.summary.map((s) => ({ state: OcorrenciaState[s.state] ?? "UNKNOWN", count: s.count })),
          issues: job!.issues.map((i) => ({
            lineNumber: i.lineNumber,
            severity: IssueSeverity[i.severity] ?? "",
            code: i.code,
            message: i.message,
          })),
        },
        retryable: 0,
      };
    },

    async downloads(tenant, kind, jobId) {
      if (kind === "boleto") {
        const a = await billing.getBoletoJobArtifacts({ tenant, jobId, linkTtl: LINK_TTL }, auth(tenant));
        return {
          links: [...linkView(a.zip), ...linkView(a.manifestJson), ...linkView(a.errorsJson)],
          ...opt("expiresAt", iso(a.expiresAt)),
        };
      }
      if (kind === "remessa") {
        const f = await billing.listRemessaFiles({ tenant, jobId, linkTtl: LINK_TTL, pageSize: 500 }, auth(tenant));
        return { links: [...linkView(f.zip), ...f.files.flatMap((x) => linkView(x.artifact))], ...opt("expiresAt", iso(f.expiresAt)) };
      }
      throw new ConnectError("a retorno job has no downloads: its occurrences are shown on the page", Code.FailedPrecondition);
    },

    async retry(tenant, kind, jobId, actor) {
      if (kind === "boleto") {
        const r = await billing.retryFailedItems({ tenant, jobId, requestedBy: actor }, auth(tenant));
        return { requeued: r.requeued, state: jobStateName(r.job?.state ?? JobState.UNSPECIFIED), skippedItemIds: r.skippedItemIds };
      }
      if (kind === "remessa") {
        const r = await billing.retryRemessaSublotes({ tenant, jobId, requestedBy: actor }, auth(tenant));
        return { requeued: r.requeued, state: jobStateName(r.job?.state ?? JobState.UNSPECIFIED), skippedItemIds: [] };
      }
      throw new ConnectError("a retorno job has nothing to retry: submit the file again", Code.FailedPrecondition);
    },

    async webhook(tenant, state) {
      const endpoint = await billing.getWebhookEndpoint({ tenant }, auth(tenant)).then(
        (r) => r.endpoint,
        (err: unknown) => {
          // No endpoint is a normal answer for this page, not an error.
          if (ConnectError.from(err).code === Code.NotFound) return undefined;
          throw err;
        },
      );
      const { deliveries } = await billing.listWebhookDeliveries(
        { tenant, pageSize: 100, ...(state ? { state: DELIVERY_STATE[state] } : {}) },
        auth(tenant),
      );
      return {
        ...(endpoint
          ? {
              endpoint: {
                url: endpoint.url,
                enabled: endpoint.enabled,
                eventTypes: endpoint.eventTypes,
                secretHint: endpoint.secretHint,
                ...opt("updatedAt", iso(endpoint.updatedAt)),
              },
            }
          : {}),
        deliveries: deliveries.map(deliveryView),
      };
    },

    async redeliver(tenant, deliveryId) {
      const { delivery } = await billing.redeliverWebhook({ tenant, deliveryId }, auth(tenant));
      return deliveryView(delivery!);
    },
  };
}
