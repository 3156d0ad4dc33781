// `billing jobs create|status|items`: boleto jobs of the billing service (proto/malha/billing/v1).
import { CreateBoletoJobRequestSchema } from "../libs/gen/malha/billing/v1/billing_pb.js";
import type { BoletoJobItem } from "../libs/gen/malha/billing/v1/boleto_pb.js";
import { ItemState, JobKind, JobState } from "../libs/gen/malha/billing/v1/types_pb.js";
import {
  billing,
  enumFlag,
  follow,
  itemRow,
  jobDetails,
  jobLine,
  jobRow,
  readCreateRequest,
  tenantOf,
  tenantOption,
  waitOptions,
  waitPacing,
} from "./billing-common.js";
import { str, type Command } from "./command.js";
import { CliFailure, EXIT, UsageError } from "./exit-codes.js";
import { allPages, enumName, iso, json, when } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

export const billingJobsCreate: Command = {
  usage: "billing jobs create <file.json> [--idempotency-key <k>] [--environment <e>] [--wait]",
  summary:
    "create a boleto job from a CreateBoletoJobRequest JSON file (--environment sandbox|production fills or overrides the file's); --wait [--interval <s>] [--timeout <s>] follows it to its end, exit 7 if it FAILED",
  options: { ...tenantOption, "idempotency-key": { type: "string" }, environment: { type: "string" }, ...waitOptions },
  positionals: [1, 1],
  async run(ctx) {
    const wait = waitPacing(ctx);
    const req = readCreateRequest(ctx, ctx.positionals[0]!, CreateBoletoJobRequestSchema);
    const client = billing(ctx);
    const res = await client.createBoletoJob(req);
    if (!ctx.json)
      write(ctx.io.out, `${res.idempotentReplay ? "already created (same key and request)" : "created"}: ${jobLine(res.job!)}`);
    const job = await follow(
      ctx,
      wait,
      res.job!,
      async () => (await client.getBoletoJob({ tenant: req.tenant, jobId: res.job!.jobId })).job!,
      jobLine,
      (a, b) => a.state !== b.state || a.counters?.completed !== b.counters?.completed || a.counters?.failed !== b.counters?.failed,
    );
    if (ctx.json) write(ctx.io.out, json({ ...jobRow(job), idempotentReplay: res.idempotentReplay }));
    if (ctx.values.wait && job.state === JobState.FAILED)
      throw new CliFailure(
        `job ${job.jobId} FAILED: no item could be produced (\`malha billing jobs items ${job.jobId} --status failed\`)`,
        EXIT.RUN_FAILED,
      );
  },
};

export const billingJobsStatus: Command = {
  usage: "billing jobs status <job>",
  summary: "a boleto job's state, counters, timestamps and metrics",
  options: tenantOption,
  positionals: [1, 1],
  async run(ctx) {
    const job = (await billing(ctx).getBoletoJob({ tenant: tenantOf(ctx), jobId: ctx.positionals[0]! })).job!;
    if (ctx.json) write(ctx.io.out, json(jobRow(job)));
    else ctx.io.out.write(jobDetails(job));
  },
};

export const billingJobsItems: Command = {
  usage: "billing jobs items <job> [--status <state>]",
  summary:
    "a boleto job's items in position order, with results or error codes; --status pending|validating|rendering|completed|failed|skipped",
  options: { ...tenantOption, status: { type: "string" } },
  positionals: [1, 1],
  async run(ctx) {
    const state = enumFlag(ctx, "status", ItemState) ?? ItemState.UNSPECIFIED;
    const tenant = tenantOf(ctx);
    const client = billing(ctx);
    const items: BoletoJobItem[] = await allPages(async (pageToken) =>
      client.listBoletoJobItems({ tenant, jobId: ctx.positionals[0]!, state, pageSize: 500, pageToken }),
    );
    if (ctx.json) return write(ctx.io.out, json(items.map(itemRow)));
    ctx.io.out.write(
      table(
        ["#", "item", "state", "attempts", "nosso numero", "linha digitavel / errors"],
        items.map((i) => [
          String(i.position),
          i.itemId,
          enumName(ItemState, i.state).toLowerCase(),
          String(i.attemptCount),
          i.result?.nossoNumeroFormatado || "-",
          i.errors.length
            ? i.errors.map((e) => `${e.code}${e.field ? ` (${e.field})` : ""}`).join(", ")
            : i.result?.linhaDigitavelFormatada || "-",
        ]),
      ),
    );
  },
};

export const billingJobsList: Command = {
  usage: "billing jobs list [--kind boleto|remessa|retorno] [--status <state>] [--limit <n>]",
  summary: "the tenant's jobs of every kind, newest first (default 50)",
  options: { ...tenantOption, kind: { type: "string" }, status: { type: "string" }, limit: { type: "string" } },
  positionals: [0, 0],
  async run(ctx) {
    const kind = enumFlag(ctx, "kind", JobKind) ?? JobKind.UNSPECIFIED;
    const state = enumFlag(ctx, "status", JobState) ?? JobState.UNSPECIFIED;
    const limit = Number(str(ctx.values, "limit") ?? "50");
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError("--limit must be a whole number from 1 to 10000");
    const tenant = tenantOf(ctx);
    const client = billing(ctx);
    const jobs = await allPages(async (pageToken, wanted) => {
      const page = await client.listJobs({ tenant, kind, state, pageSize: Math.min(500, wanted), pageToken });
      return { items: page.jobs, nextPageToken: page.nextPageToken };
    }, limit);
    const rows = jobs.map((j) => ({
      jobId: j.jobId,
      kind: enumName(JobKind, j.kind),
      state: enumName(JobState, j.state),
      total: j.counters?.total ?? 0,
      completed: j.counters?.completed ?? 0,
      failed: j.counters?.failed ?? 0,
      idempotencyKey: j.idempotencyKey || null,
      createdAt: iso(j.createdAt),
      finishedAt: iso(j.finishedAt),
    }));
    if (ctx.json) return write(ctx.io.out, json(rows));
    ctx.io.out.write(
      table(
        ["job", "kind", "state", "items", "completed", "failed", "created", "finished"],
        jobs.map((j, i) => [
          j.jobId,
          rows[i]!.kind.toLowerCase(),
          rows[i]!.state.toLowerCase(),
          String(rows[i]!.total),
          String(rows[i]!.completed),
          String(rows[i]!.failed),
          when(j.createdAt),
          when(j.finishedAt),
        ]),
      ),
    );
  },
};
