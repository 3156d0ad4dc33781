// What the billing commands share: the tenant, the client, and how a job and an item are shown.
import { readFileSync } from "node:fs";
import { fromJsonString, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { BillingService } from "../libs/gen/malha/billing/v1/billing_pb.js";
import type { BoletoJob, BoletoJobItem } from "../libs/gen/malha/billing/v1/boleto_pb.js";
import { Environment, ItemState, JobState } from "../libs/gen/malha/billing/v1/types_pb.js";
import { str, type Context } from "./command.js";
import { CliFailure, EXIT, UsageError } from "./exit-codes.js";
import { enumName, iso, keyValueLines, parseEnum, when } from "./format.js";
import { write } from "./io.js";
import { pacing } from "./sync-common.js";

export const TENANT_ENV = "MALHA_TENANT";
export const tenantOption = { tenant: { type: "string" } } as const;

export const TOKEN_ENV = "MALHA_BILLING_TOKEN";

/** The tenant's API token from MALHA_BILLING_TOKEN or MALHA_BILLING_TOKEN_FILE (never an argument: shell history, ps). */
export function billingToken(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const value = env[TOKEN_ENV]?.trim() || undefined;
  const file = env[`${TOKEN_ENV}_FILE`]?.trim() || undefined;
  if (value && file) throw new UsageError(`set ${TOKEN_ENV} or ${TOKEN_ENV}_FILE, not both`);
  if (!file) return value;
  try {
    return readFileSync(file, "utf8").trim() || undefined;
  } catch (err) {
    throw new UsageError(`${TOKEN_ENV}_FILE names a file that cannot be read: ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
}

/**
 * --tenant, else MALHA_TENANT: every billing RPC is scoped to one tenant. With an API token and neither,
 * the request names none and billing acts for the token's tenant.
 */
export function tenantOf(ctx: Context): string {
  const tenant = str(ctx.values, "tenant") ?? ctx.io.env[TENANT_ENV];
  if (tenant) return tenant;
  if (billingToken(ctx.io.env)) return "";
  throw new UsageError(`the tenant is required: --tenant <tenant>, ${TENANT_ENV}, or the tenant's API token in ${TOKEN_ENV}[_FILE]`);
}

export const billing = (ctx: Context) => {
  const token = billingToken(ctx.io.env);
  return ctx.targets.client("billing", BillingService, token ? { authorization: `Bearer ${token}` } : {});
};

export function enumFlag<E extends Record<string, string | number>>(ctx: Context, name: string, e: E): E[keyof E] | undefined {
  const text = str(ctx.values, name);
  if (text === undefined) return undefined;
  try {
    return parseEnum(e, text, `--${name}`);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
}

interface CreateRequest {
  tenant: string;
  idempotencyKey: string;
  requestedBy: string;
  environment: Environment;
}

/**
 * A Create*JobRequest file in the proto3 JSON mapping (camelCase or snake_case names), completed from
 * the command line: tenant, --idempotency-key, --environment, and the requesting user.
 */
export function readCreateRequest<D extends DescMessage>(ctx: Context, file: string, schema: D): MessageShape<D> & CreateRequest {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? "error"})`);
  }
  let req: MessageShape<D> & CreateRequest;
  try {
    req = fromJsonString(schema, text) as MessageShape<D> & CreateRequest;
  } catch (err) {
    throw new UsageError(`${file} is not a ${schema.name} in JSON: ${(err as Error).message}`);
  }
  // The file names the tenant or --tenant / MALHA_TENANT does; an explicit --tenant never silently
  // redirects a file written for another tenant.
  const flag = str(ctx.values, "tenant");
  if (req.tenant && flag && flag !== req.tenant) throw new UsageError(`--tenant ${flag} contradicts the file's tenant ${req.tenant}`);
  if (!req.tenant) req.tenant = tenantOf(ctx);
  const key = str(ctx.values, "idempotency-key");
  if (key !== undefined) req.idempotencyKey = key;
  const environment = enumFlag(ctx, "environment", Environment);
  if (environment !== undefined) req.environment = environment;
  if (!req.requestedBy) req.requestedBy = ctx.io.env.USER ?? "malha-cli";
  return req;
}

export const FINAL_STATES: readonly JobState[] = [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED];

export function jobRow(j: BoletoJob) {
  const c = j.counters;
  return {
    jobId: j.jobId,
    tenant: j.tenant,
    state: enumName(JobState, j.state),
    counters: {
      total: c?.total ?? 0,
      pending: c?.pending ?? 0,
      inProgress: c?.inProgress ?? 0,
      completed: c?.completed ?? 0,
      failed: c?.failed ?? 0,
      skipped: c?.skipped ?? 0,
    },
    environment: enumName(Environment, j.metadata?.environment ?? Environment.UNSPECIFIED),
    idempotencyKey: j.idempotencyKey || null,
    requestedBy: j.metadata?.requestedBy || null,
    banco: j.metadata?.banco || null,
    templateVersion: j.metadata?.templateVersion || null,
    bankRulesVersion: j.metadata?.bankRulesVersion || null,
    createdAt: iso(j.createdAt),
    startedAt: iso(j.startedAt),
    finishedAt: iso(j.finishedAt),
    retryRounds: j.retryRounds,
    duracaoMs: j.metrics ? Number(j.metrics.duracaoMs) : null,
    msPorItem: j.metrics ? j.metrics.msPorItem : null,
    artifactsExpiresAt: iso(j.artifactsExpiresAt),
  };
}

/** One line a human reads at a glance, also the progress line of `--wait`. */
export function jobLine(j: BoletoJob): string {
  const c = j.counters;
  const counts = `${c?.completed ?? 0} completed, ${c?.failed ?? 0} failed, ${c?.skipped ?? 0} skipped, ${(c?.pending ?? 0) + (c?.inProgress ?? 0)} to go of ${c?.total ?? 0}`;
  return `${j.jobId}: ${enumName(JobState, j.state).toLowerCase()}, ${counts}`;
}

/** `billing jobs status` as key/value lines: a job is one record, not a table. */
export function jobDetails(j: BoletoJob): string {
  const r = jobRow(j);
  const lines: [string, string][] = [
    ["job", r.jobId],
    ["state", r.state.toLowerCase()],
    [
      "items",
      `${r.counters.total} total · ${r.counters.completed} completed · ${r.counters.failed} failed · ${r.counters.skipped} skipped · ${r.counters.pending} pending · ${r.counters.inProgress} in progress`,
    ],
    ["environment", r.environment.toLowerCase()],
    ["idempotency key", r.idempotencyKey ?? "-"],
    ["requested by", r.requestedBy ?? "-"],
    ["bank", r.banco ?? "(mixed)"],
    ["created", when(j.createdAt)],
    ["started", when(j.startedAt)],
    ["finished", when(j.finishedAt)],
    ["duration", r.duracaoMs === null ? "-" : `${r.duracaoMs} ms (${r.msPorItem?.toFixed(1)} ms per item)`],
    ["artifacts expire", when(j.artifactsExpiresAt)],
  ];
  return keyValueLines(lines);
}

export function itemRow(i: BoletoJobItem) {
  return {
    itemId: i.itemId,
    position: i.position,
    state: enumName(ItemState, i.state),
    attempts: i.attemptCount,
    nossoNumero: i.result?.nossoNumeroFormatado || null,
    linhaDigitavel: i.result?.linhaDigitavel || null,
    pdfSha256: i.result?.pdf?.sha256 || null,
    errors: i.errors.map((e) => ({ code: e.code, field: e.field || null, message: e.message, retryable: e.retryable })),
  };
}

export const waitOptions = { wait: { type: "boolean" }, interval: { type: "string" }, timeout: { type: "string" } } as const;

/** --wait's pacing, checked before anything is sent; undefined without --wait. */
export function waitPacing(ctx: Context): ReturnType<typeof pacing> | undefined {
  if (!ctx.values.wait && (str(ctx.values, "interval") || str(ctx.values, "timeout")))
    throw new UsageError("--interval and --timeout go with --wait");
  return ctx.values.wait ? pacing(ctx) : undefined;
}

/**
 * Polls `get` until the job is final, printing `line` whenever `moved` says something changed (so a quiet
 * wait does not flood the terminal); `--timeout` → exit 5. Without pacing (no --wait) returns `first`.
 */
export async function follow<J extends { state: JobState }>(
  ctx: Context,
  wait: ReturnType<typeof pacing> | undefined,
  first: J,
  get: () => Promise<J>,
  line: (j: J) => string,
  moved: (a: J, b: J) => boolean = (a, b) => line(a) !== line(b),
): Promise<J> {
  if (!wait) return first;
  let job = first;
  for (let poll = 1; !FINAL_STATES.includes(job.state); poll++) {
    if (poll > wait.maxPolls) throw new CliFailure(`--timeout passed; ${line(job)}`, EXIT.UNAVAILABLE);
    await ctx.io.sleep(wait.intervalMs);
    const next = await get();
    if (!ctx.json && moved(job, next)) write(ctx.io.out, line(next));
    job = next;
  }
  return job;
}
