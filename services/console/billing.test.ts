// The Cobrança API on a real socket over a stand-in billing client: tenant scoping on every read and button,
// roles, the tenant's token on each call, and the shaping of counts, throughput and job details.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Code, ConnectError, type CallOptions, type Client } from "@connectrpc/connect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BillingService, JobSummarySchema } from "../../libs/gen/malha/billing/v1/billing_pb.js";
import { BoletoJobItemSchema, BoletoJobSchema } from "../../libs/gen/malha/billing/v1/boleto_pb.js";
import { Environment, ItemState, JobKind, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { createLogger } from "../../libs/log/logger.js";
import { CSRF_HEADER } from "./api-types.js";
import { parseBillingTenants, watchBillingTenants } from "./billing-config.js";
import { requireTenant, visibleTenants } from "./billing-scope.js";
import type { JobDetail, JobSummaryView, JobsResponse, OverviewResponse } from "./billing-types.js";
import { createBillingView, dayStart, sumCounts, throughput } from "./billing-view.js";
import { startConsoleServer, type ConsoleServer } from "./http.js";
import { billingRoutes } from "./routes/billing.js";
import { SessionSigner } from "./session.js";
import { OperatorDirectory, tokenDigest } from "./users.js";

const NOW = new Date("2026-12-02T10:30:00.000Z");
const TOKEN_ACME = `bapi_${"a".repeat(43)}`;
const ts = (iso: string) => timestampFromDate(new Date(iso));

describe("billing scope", () => {
  const configured = ["acme", "beta", "gama"];
  it("shows the listed tenants that are configured, every one for *, none when the user file says nothing", () => {
    expect(visibleTenants({ tenants: ["gama", "acme", "zeta"] }, configured)).toEqual(["acme", "gama"]);
    expect(visibleTenants({ tenants: "*" }, configured)).toEqual(configured);
    expect(visibleTenants({}, configured)).toEqual([]);
  });
  it("answers a tenant out of scope like an unknown one (404), and a malformed name with 400", () => {
    expect(requireTenant({ tenants: ["acme"] }, configured, "acme")).toBe("acme");
    expect(() => requireTenant({ tenants: ["acme"] }, configured, "beta")).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => requireTenant({ tenants: "*" }, configured, "zeta")).toThrow(expect.objectContaining({ status: 404 }));
    expect(() => requireTenant({ tenants: "*" }, configured, "a b")).toThrow(expect.objectContaining({ status: 400 }));
  });
  it("reads the tenants file: tenants with or without a token, never echoing a bad token", () => {
    const t = parseBillingTenants(`# tenants\nacme ${TOKEN_ACME}\nbeta\n`);
    expect([t.names, t.token("acme"), t.token("beta")]).toEqual([["acme", "beta"], TOKEN_ACME, undefined]);
    expect(() => parseBillingTenants("acme bapi_leaked")).toThrow(/^line 1: the token must be a bapi_ token/);
    expect(() => parseBillingTenants("acme bapi_leaked")).not.toThrow(/leaked/);
    expect(() => parseBillingTenants("acme\nacme")).toThrow(/line 2: tenant "acme" is listed twice/);
    expect(() => parseBillingTenants("a/b")).toThrow(/line 1: tenant must be/);
  });
});

describe("billing view shaping", () => {
  const job = (state: JobSummaryView["state"], createdAt: string, finishedAt: string | undefined, total = 10): JobSummaryView => ({
    tenant: "acme",
    jobId: `j${createdAt}`,
    kind: "boleto",
    state,
    counters: { total, pending: 0, inProgress: 0, completed: total, failed: 0, skipped: 0 },
    idempotencyKey: "",
    requestedBy: "",
    environment: "sandbox",
    createdAt,
    ...(finishedAt ? { finishedAt } : {}),
  });
  it("buckets finished jobs by the hour they finished, with items and latency percentiles, every hour present", () => {
    const buckets = throughput(
      [
        job("completed", "2026-12-02T10:00:00.000Z", "2026-12-02T10:00:02.000Z", 5),
        job("partially_completed", "2026-12-02T10:10:00.000Z", "2026-12-02T10:10:10.000Z", 7),
        job("failed", "2026-12-02T08:59:00.000Z", "2026-12-02T09:00:00.000Z"),
        job("processing", "2026-12-02T10:20:00.000Z", undefined),
        // Before the window: left out.
        job("completed", "2026-12-02T07:00:00.000Z", "2026-12-02T07:30:00.000Z"),
      ],
      NOW,
      3,
    );
    expect(buckets).toEqual([
      { hour: "2026-12-02T08:00:00.000Z", jobs: 0, items: 0 },
      { hour: "2026-12-02T09:00:00.000Z", jobs: 1, items: 10, latencyP50Ms: 60_000, latencyP95Ms: 60_000 },
      { hour: "2026-12-02T10:00:00.000Z", jobs: 2, items: 12, latencyP50Ms: 2_000, latencyP95Ms: 10_000 },
    ]);
  });
  it("adds counts of several tenants by kind then state", () => {
    expect(
      sumCounts([
        [
          { kind: "remessa", state: "failed", count: 1 },
          { kind: "boleto", state: "completed", count: 2 },
        ],
        [{ kind: "boleto", state: "completed", count: 3 }],
      ]),
    ).toEqual([
      { kind: "boleto", state: "completed", count: 5 },
      { kind: "remessa", state: "failed", count: 1 },
    ]);
  });
  it("reads days as UTC and refuses what is not a calendar date", () => {
    expect(dayStart("2026-02-28", "from").toISOString()).toBe("2026-02-28T00:00:00.000Z");
    expect(dayStart("2026-02-28", "to", true).toISOString()).toBe("2026-03-01T00:00:00.000Z");
    expect(() => dayStart("2026-02-30", "to")).toThrow("to must be a date YYYY-MM-DD");
    expect(() => dayStart("ontem", "from")).toThrow("from must be a date YYYY-MM-DD");
  });
});

// A stand-in for billing that keeps tenants apart the way billing does, and records who called what.
const calls: string[] = [];
const JOBS = [
  { tenant: "acme", jobId: "jacme1", state: JobState.PARTIALLY_COMPLETED, failed: 1 },
  { tenant: "beta", jobId: "jbeta1", state: JobState.FAILED, failed: 2 },
];
const fakeBilling = {
  async listJobs(req: { tenant: string; jobId?: string; kind?: JobKind }, opts?: CallOptions) {
    calls.push(`listJobs ${req.tenant} ${(opts?.headers as Record<string, string> | undefined)?.authorization ?? "-"}`);
    return {
      jobs: JOBS.filter(
        (j) => j.tenant === req.tenant && (!req.jobId || j.jobId === req.jobId) && (!req.kind || req.kind === JobKind.BOLETO),
      ).map((j) =>
        create(JobSummarySchema, {
          jobId: j.jobId,
          kind: JobKind.BOLETO,
          state: j.state,
          counters: { total: 3, completed: 3 - j.failed, failed: j.failed },
          environment: Environment.SANDBOX,
          createdAt: ts("2026-12-02T10:00:00Z"),
          finishedAt: ts("2026-12-02T10:00:05Z"),
        }),
      ),
      nextPageToken: "",
    };
  },
  async countJobs(req: { tenant: string }) {
    return { counts: JOBS.filter((j) => j.tenant === req.tenant).map((j) => ({ kind: JobKind.BOLETO, state: j.state, count: 1 })) };
  },
  async getBoletoJob(req: { tenant: string; jobId: string }) {
    const j = JOBS.find((x) => x.tenant === req.tenant && x.jobId === req.jobId);
    if (!j) throw new ConnectError(`job ${req.jobId} not found`, Code.NotFound);
    return {
      job: create(BoletoJobSchema, { jobId: j.jobId, tenant: j.tenant, state: j.state, counters: { total: 3, completed: 2, failed: 1 } }),
    };
  },
  async listBoletoJobItems() {
    return {
      items: [
        create(BoletoJobItemSchema, { itemId: "t-0001", position: 1, state: ItemState.COMPLETED, attemptCount: 1 }),
        create(BoletoJobItemSchema, {
          itemId: "t-0002",
          position: 2,
          state: ItemState.FAILED,
          attemptCount: 1,
          errors: [{ code: "TENTATIVAS_ESGOTADAS", retryable: true, message: "artifacts indisponível" }],
        }),
      ],
      nextPageToken: "",
    };
  },
  async getBoletoJobItem(req: { itemId: string }) {
    return {
      item: create(BoletoJobItemSchema, {
        itemId: req.itemId,
        attempts: [{ number: 1, state: ItemState.FAILED, errors: [{ code: "TENTATIVAS_ESGOTADAS", retryable: true }] }],
      }),
    };
  },
  async retryFailedItems(req: { tenant: string; jobId: string; requestedBy: string }) {
    calls.push(`retry ${req.tenant} ${req.jobId} ${req.requestedBy}`);
    return { requeued: 1, skippedItemIds: [], job: create(BoletoJobSchema, { state: JobState.PROCESSING }) };
  },
} as unknown as Client<typeof BillingService>;

const dir = mkdtempSync(join(tmpdir(), "malha-console-billing-api-"));
const logLines: string[] = [];
const TENANTS_FILE = join(dir, "tenants");
let server: ConsoleServer;
let base: string;

beforeAll(async () => {
  mkdirSync(join(dir, "app"), { recursive: true });
  writeFileSync(join(dir, "app", "index.html"), "<!doctype html><title>app</title>");
  const hex = (t: string) => tokenDigest(t).toString("hex");
  writeFileSync(
    join(dir, "users"),
    [
      `ana operator ${hex("tok-ana")} tenants=acme`,
      `bia operator ${hex("tok-bia")} tenants=*`,
      `leo read-only ${hex("tok-leo")} tenants=acme`,
      `rui operator ${hex("tok-rui")}`,
    ].join("\n"),
  );
  writeFileSync(TENANTS_FILE, `acme ${TOKEN_ACME}\nbeta\n`);
  const log = createLogger({ service: "console", destination: new Writable({ write: (c, _e, cb) => (logLines.push(String(c)), cb()) }) });
  // Checked on every use (0 ms), so the test sees an edit at once; the console checks every 2 s.
  const tenants = watchBillingTenants(TENANTS_FILE, log, 0);
  const view = createBillingView({ billing: fakeBilling, tenants, now: () => NOW });
  server = await startConsoleServer(
    {
      config: { staticDir: join(dir, "app"), cookieSecure: false },
      operators: new OperatorDirectory(join(dir, "users")),
      sessions: new SessionSigner(Buffer.alloc(32, 7), 3_600_000),
      routes: billingRoutes(view, tenants),
      log,
    },
    "127.0.0.1",
    0,
  );
  base = `http://127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function as(user: string): Promise<(path: string, method?: "GET" | "POST") => Promise<{ status: number; body: unknown }>> {
  const res = await fetch(`${base}/api/session`, {
    method: "POST",
    headers: { [CSRF_HEADER]: "1", "content-type": "application/json" },
    body: JSON.stringify({ user, token: `tok-${user}` }),
  });
  const cookie = res.headers.get("set-cookie")!.split(";")[0]!;
  return async (path, method = "GET") => {
    const r = await fetch(`${base}${path}`, { method, headers: { cookie, ...(method === "POST" ? { [CSRF_HEADER]: "1" } : {}) } });
    return { status: r.status, body: await r.json() };
  };
}

describe("console billing API", () => {
  it("lists and counts only the operator's tenants, sending each tenant's token", async () => {
    const ana = await as("ana");
    expect((await ana("/api/billing/access")).body).toEqual({ configured: true, tenants: ["acme"], canAct: true });
    const jobs = (await ana("/api/billing/jobs")).body as JobsResponse;
    expect(jobs.jobs.map((j) => [j.tenant, j.jobId, j.state])).toEqual([["acme", "jacme1", "partially_completed"]]);
    expect(calls).toContain(`listJobs acme Bearer ${TOKEN_ACME}`);
    expect(calls.some((c) => c.startsWith("listJobs beta"))).toBe(false);
    const overview = (await ana("/api/billing/overview?hours=2")).body as OverviewResponse;
    expect(overview.counts).toEqual([{ kind: "boleto", state: "partially_completed", count: 1 }]);
    expect(overview.throughput).toEqual([
      { hour: "2026-12-02T09:00:00.000Z", jobs: 0, items: 0 },
      { hour: "2026-12-02T10:00:00.000Z", jobs: 1, items: 3, latencyP50Ms: 5000, latencyP95Ms: 5000 },
    ]);
    const bia = await as("bia");
    const all = (await bia("/api/billing/overview")).body as OverviewResponse;
    expect(all.tenants).toEqual(["acme", "beta"]);
    expect(all.counts.reduce((n, c) => n + c.count, 0)).toBe(2);
  });

  it("answers another tenant's job, downloads and buttons with 404 before calling billing", async () => {
    const ana = await as("ana");
    calls.length = 0;
    for (const [path, method] of [
      ["/api/billing/tenants/beta/jobs/boleto/jbeta1", "GET"],
      ["/api/billing/tenants/beta/jobs/boleto/jbeta1/downloads", "GET"],
      ["/api/billing/tenants/beta/jobs/boleto/jbeta1/retry", "POST"],
      ["/api/billing/tenants/beta/webhook", "GET"],
      ["/api/billing/tenants/beta/webhook/deliveries/d1/redeliver", "POST"],
      ["/api/billing/jobs?tenant=beta", "GET"],
    ] as const) {
      const r = await ana(path, method);
      expect([path, r.status, (r.body as { error: { code: string } }).error.code]).toEqual([path, 404, "NOT_FOUND"]);
    }
    expect(calls).toEqual([]);
    // A user with no tenants= line sees no tenant at all.
    const rui = await as("rui");
    expect(((await rui("/api/billing/access")).body as { tenants: string[] }).tenants).toEqual([]);
    expect((await rui("/api/billing/tenants/acme/jobs/boleto/jacme1")).status).toBe(404);
    expect(((await rui("/api/billing/jobs")).body as JobsResponse).jobs).toEqual([]);
  });

  it("shows a job's items with the attempts of the failed ones, and counts what a retry would re-queue", async () => {
    const ana = await as("ana");
    const detail = (await ana("/api/billing/tenants/acme/jobs/boleto/jacme1")).body as JobDetail;
    expect(detail).toMatchObject({ jobId: "jacme1", state: "partially_completed", retryable: 1, itemsTruncated: false });
    expect(detail.items.map((i) => [i.itemId, i.state, i.attempts?.map((a) => a.errors[0]?.code)])).toEqual([
      ["t-0001", "completed", undefined],
      ["t-0002", "failed", ["TENTATIVAS_ESGOTADAS"]],
    ]);
    expect((await ana("/api/billing/tenants/acme/jobs/remessa/jacme1")).status).toBe(404);
  });

  it("lets operators retry, refuses read-only users with 403, and logs who pressed the button", async () => {
    const leo = await as("leo");
    const refused = await leo("/api/billing/tenants/acme/jobs/boleto/jacme1/retry", "POST");
    expect([refused.status, (refused.body as { error: { code: string } }).error.code]).toEqual([403, "PERMISSION_DENIED"]);
    expect((await leo("/api/billing/access")).body).toMatchObject({ canAct: false });
    const ana = await as("ana");
    const ok = await ana("/api/billing/tenants/acme/jobs/boleto/jacme1/retry", "POST");
    expect(ok).toEqual({ status: 200, body: { requeued: 1, state: "processing", skippedItemIds: [] } });
    expect(calls).toContain("retry acme jacme1 console:ana");
    expect(calls.filter((c) => c.startsWith("retry"))).toHaveLength(1);
    expect(logLines.join("")).toMatch(/"actor":"ana","action":"billing-retry","tenant":"acme","kind":"boleto","jobId":"jacme1"/);
  });

  it("names the bad filter", async () => {
    const ana = await as("ana");
    const bad = async (q: string) => ((await ana(`/api/billing/jobs?${q}`)).body as { error: { message: string } }).error.message;
    expect(await bad("state=feito")).toBe("state must be one of received, validating, processing, completed, partially_completed, failed");
    expect(await bad("from=2026-13-01")).toBe("from must be a date YYYY-MM-DD");
    expect(await bad("jobId=a%20b")).toBe("jobId must be 1-64 of A-Z a-z 0-9 . _ -");
    expect((await ana("/api/billing/overview?hours=0")).status).toBe(400);
  });
});

describe("console billing tenants file", () => {
  it("is re-read when it changes: a tenant added or removed shows without a restart; a broken edit keeps the last list", async () => {
    const bia = await as("bia");
    const access = async () => ((await bia("/api/billing/access")).body as { tenants: string[] }).tenants;
    expect(await access()).toEqual(["acme", "beta"]);
    writeFileSync(TENANTS_FILE, `acme ${TOKEN_ACME}\ngama\ndelta\n`);
    expect(await access()).toEqual(["acme", "gama", "delta"]);
    expect((await bia("/api/billing/jobs?tenant=beta")).status).toBe(404);
    expect(logLines.join("")).toMatch(/"tenants":3,"msg":"billing tenants file reloaded"/);
    writeFileSync(TENANTS_FILE, "acme bapi_leaked\n");
    expect(await access()).toEqual(["acme", "gama", "delta"]);
    expect(logLines.join("")).toMatch(/"level":"error".*line 1: the token must be a bapi_ token.*keeping the tenants loaded before/);
    expect(logLines.join("")).not.toMatch(/leaked/);
    writeFileSync(TENANTS_FILE, `acme ${TOKEN_ACME}\nbeta\n`);
    expect(await access()).toEqual(["acme", "beta"]);
  });
});
