// Traces across processes: real services exporting OTLP (HTTP/JSON, chosen with the standard OTEL_*
// variables) to a collector this test runs. A caller's `traceparent` continues through the coordinator
// into the store, and the services' log lines carry the trace id.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { Environment, JobState } from "../../libs/gen/malha/billing/v1/types_pb.js";
import { tracingRequested } from "../../libs/tracing/sdk.js";
import { boletoValido } from "../../services/billing/testing/fixtures.js";
import { startBillingMesh, type BillingMesh } from "../support/billing-mesh.js";
import { startNfseMesh, type NfseMesh } from "../support/nfse-mesh.js";
import { serviceEnv } from "../support/mesh-env.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../support/mysql.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  links?: { traceId: string; spanId: string }[];
  name: string;
  kind: number;
  service: string;
}
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

const spans: OtlpSpan[] = [];
let collector: Server;
let db: ThrowawayDatabase;
const procs: ServiceProcess[] = [];

/** The smallest OTLP/HTTP traces receiver: JSON bodies on /v1/traces. */
function startCollector(): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      if (req.url === "/v1/traces" && (req.headers["content-type"] ?? "").startsWith("application/json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans: {
            resource: { attributes: { key: string; value: { stringValue?: string } }[] };
            scopeSpans: { spans: Omit<OtlpSpan, "service">[] }[];
          }[];
        };
        for (const rs of body.resourceSpans) {
          const service = rs.resource.attributes.find((a) => a.key === "service.name")?.value.stringValue ?? "";
          for (const ss of rs.scopeSpans) for (const s of ss.spans) spans.push({ ...s, service });
        }
        res.writeHead(200, { "content-type": "application/json" }).end("{}");
      } else {
        res.writeHead(415).end();
      }
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

let otel: Record<string, string> = {};
beforeAll(async () => {
  collector = await startCollector();
  const address = collector.address();
  otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
});
afterAll(async () => {
  await new Promise((r) => collector?.close(r));
});

describe("OpenTelemetry tracing of RPCs", () => {
  beforeAll(async () => {
    db = await createThrowawayDatabase();
    const [store, vault] = await Promise.all([
      startService("store", { ...serviceEnv("store", db.url), ...otel }),
      startService("vault", { ...serviceEnv("vault", db.url), ...otel }),
    ]);
    procs.push(store, vault);
    procs.push(
      await startService("coordinator", {
        ...serviceEnv("coordinator", db.url),
        ...otel,
        STORE_URL: store.baseUrl,
        VAULT_URL: vault.baseUrl,
        ADN_GATEWAY_URL: "http://127.0.0.1:1",
      }),
    );
  }, 90_000);

  afterAll(async () => {
    for (const p of procs) p.kill("SIGKILL");
    await db?.drop();
  });

  async function spansOf(traceId: string, atLeast: number): Promise<OtlpSpan[]> {
    for (let i = 0; i < 200; i++) {
      const found = spans.filter((s) => s.traceId === traceId);
      if (found.length >= atLeast) return found;
      await new Promise((r) => setTimeout(r, 50));
    }
    return spans.filter((s) => s.traceId === traceId);
  }

  it("is off unless an exporter is configured", () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4318/v1/traces" })).toBe(true);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_SDK_DISABLED: "true" })).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", OTEL_TRACES_EXPORTER: "none" })).toBe(false);
    for (const p of procs) expect(p.lines.find((l) => l.includes('"msg":"serving"'))).toContain('"tracing":true');
  });

  it("continues a caller's traceparent through the coordinator into the store, one span per call served and made", async () => {
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: procs[2]!.baseUrl }));
    await coordinator.listFeedStatus({}, { headers: { traceparent: `00-${traceId}-${callerSpan}-01`, "x-request-id": "trace-1" } });

    const found = await spansOf(traceId, 3);
    const served = found.find((s) => s.name === "malha.coordinator.v1.CoordinatorService/ListFeedStatus" && s.kind === SERVER);
    expect(served, JSON.stringify(found)).toMatchObject({ service: "malha-coordinator", parentSpanId: callerSpan });
    const call = found.find((s) => s.name === "malha.store.v1.StoreService/ListSyncStates" && s.kind === CLIENT);
    expect(call, JSON.stringify(found)).toMatchObject({ service: "malha-coordinator", parentSpanId: served!.spanId });
    const inStore = found.find((s) => s.name === "malha.store.v1.StoreService/ListSyncStates" && s.kind === SERVER);
    expect(inStore, JSON.stringify(found)).toMatchObject({ service: "malha-store", parentSpanId: call!.spanId });

    // The coordinator's access line for the call carries the trace id.
    const line = procs[2]!.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === "rpc" && l.requestId === "trace-1");
    expect(line).toMatchObject({ traceId, spanId: served!.spanId });
    // And the store's, under the store's own span.
    const storeLine = procs[0]!.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.msg === "rpc" && l.rpc === "malha.store.v1.StoreService/ListSyncStates" && l.traceId === traceId);
    expect(storeLine).toMatchObject({ spanId: inStore!.spanId, requestId: "trace-1" });
  });

  it("starts a trace of its own for a call without traceparent", async () => {
    const coordinator = createClient(CoordinatorService, createGrpcTransport({ baseUrl: procs[2]!.baseUrl }));
    await coordinator.listFeedStatus({}, { headers: { "x-request-id": "trace-2" } });
    const line = (): Record<string, unknown> | undefined =>
      procs[2]!.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "rpc" && l.requestId === "trace-2");
    for (let i = 0; i < 100 && !line(); i++) await new Promise((r) => setTimeout(r, 50));
    const traceId = line()?.traceId as string;
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);
    const found = await spansOf(traceId, 3);
    expect(found.find((s) => s.kind === SERVER && s.service === "malha-coordinator")?.parentSpanId ?? "").toBe("");
    expect(found.some((s) => s.kind === SERVER && s.service === "malha-store")).toBe(true);
  });
});

/** The spans of one trace below `root` (root included), by parent links. */
function subtree(all: OtlpSpan[], root: OtlpSpan): OtlpSpan[] {
  const out = [root];
  for (let i = 0; i < out.length; i++) for (const s of all) if (s.parentSpanId === out[i]!.spanId) out.push(s);
  return out;
}
const childOf = (all: OtlpSpan[], parent: OtlpSpan, pred: (s: OtlpSpan) => boolean) =>
  all.find((s) => s.parentSpanId === parent.spanId && pred(s));

describe("a trace of one sync run", () => {
  let mesh: NfseMesh;
  beforeAll(async () => {
    mesh = await startNfseMesh({
      municipalities: 1,
      feedSize: 30,
      coordinators: 1,
      coordinatorEnv: otel,
      serviceEnv: { store: otel, "adn-gateway": otel },
    });
    await mesh.registerAll();
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("has the run as root, the coordinator's calls as its children (BeginRun through a linked batch), the gateway's ADN calls below them, and its pages applied through linked ApplyBatches batches", async () => {
    const ibge = mesh.municipalities[0]!.ibge;
    let run: OtlpSpan | undefined;
    for (let i = 0; i < 600 && !run; i++) {
      // The first run that fetched something (a later one may find the feed caught up).
      run = spans.find(
        (s) =>
          s.service === "malha-coordinator" &&
          s.name.startsWith(`sync run ${ibge}`) &&
          spans.some((c) => c.parentSpanId === s.spanId && c.name === "deliver feed"),
      );
      if (!run) await new Promise((r) => setTimeout(r, 100));
    }
    expect(run, JSON.stringify(spans.slice(0, 20))).toBeDefined();
    // Let the last batches of the run arrive.
    await new Promise((r) => setTimeout(r, 500));
    const trace = spans.filter((s) => s.traceId === run!.traceId);
    // BeginRun goes out in a BeginRuns batch (0036): the run keeps the span it waited in, and the batch's
    // own trace links back to it.
    const waiting = childOf(trace, run!, (s) => s.name === "begin run (batched)")!;
    expect(waiting).toBeDefined();
    const batch = spans.find(
      (s) => s.name === "begin runs (batched)" && (s.links ?? []).some((l) => l.traceId === run!.traceId && l.spanId === waiting.spanId),
    )!;
    expect(batch, "the batch span linking to the run's waiting span").toBeDefined();
    expect(batch.traceId).not.toBe(run!.traceId);
    const batchTrace = spans.filter((s) => s.traceId === batch.traceId);
    const begin = childOf(batchTrace, batch, (s) => s.kind === CLIENT && s.name === "malha.store.v1.StoreService/BeginRuns")!;
    expect(begin).toBeDefined();
    const begun = childOf(batchTrace, begin, (s) => s.kind === SERVER && s.service === "malha-store")!;
    expect(begun).toBeDefined();
    expect(childOf(batchTrace, begun, (s) => s.name === "mysql transaction" && s.service === "malha-store")).toBeDefined();
    // The run's delivery travels on a DeliverFeeds stream shared with other runs (0044): the coordinator's
    // span for it is the parent of the gateway's, through the trace context the delivery's start carries.
    const feed = childOf(trace, run!, (s) => s.kind === CLIENT && s.name === "deliver feed" && s.service === "malha-coordinator")!;
    expect(feed).toBeDefined();
    const served = childOf(trace, feed, (s) => s.kind === SERVER && s.name === "deliver feed" && s.service === "malha-adn-gateway")!;
    expect(served).toBeDefined();
    const adnCalls = trace.filter((s) => s.service === "malha-adn-gateway" && s.kind === CLIENT && s.name.startsWith("GET /"));
    expect(adnCalls.length).toBeGreaterThan(0);
    for (const c of adnCalls)
      expect(
        subtree(trace, served).some((s) => s.spanId === c.spanId),
        c.name,
      ).toBe(true);
    // The gateway applies the pages in ApplyBatches batches (0040): each page waits in a span below the
    // gateway's delivery, and the batch's own trace links back to it and holds the store's side.
    const pageWaits = subtree(trace, served).filter((s) => s.name === "apply page (batched)");
    expect(pageWaits.length).toBeGreaterThan(0);
    const isBatchOf = (wait: OtlpSpan) => (s: OtlpSpan) =>
      s.name === "apply pages (batched)" && (s.links ?? []).some((l) => l.traceId === run!.traceId && l.spanId === wait.spanId);
    const isTransaction = (s: OtlpSpan) => s.name === "mysql transaction" && s.service === "malha-store";
    for (const wait of pageWaits) {
      // The gateway and the store export in their own batches: wait for the batch's whole tree.
      for (let i = 0; i < 100; i++) {
        const batch = spans.find(isBatchOf(wait));
        if (batch && subtree(spans, batch).some(isTransaction)) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const pages = spans.find(isBatchOf(wait));
      expect(pages, "the batch span linking to the page's waiting span").toBeDefined();
      const pagesTrace = spans.filter((s) => s.traceId === pages!.traceId);
      const call = childOf(pagesTrace, pages!, (s) => s.kind === CLIENT && s.name === "malha.store.v1.StoreService/ApplyBatches")!;
      expect(call).toBeDefined();
      const applied = childOf(pagesTrace, call, (s) => s.kind === SERVER && s.service === "malha-store")!;
      expect(applied).toBeDefined();
      expect(childOf(pagesTrace, applied, isTransaction)).toBeDefined();
    }
  }, 90_000);
});

describe("a trace of one boleto job", () => {
  let mesh: BillingMesh;
  beforeAll(async () => {
    mesh = await startBillingMesh({ billingEnv: otel, artifactsEnv: otel });
  }, 120_000);
  afterAll(async () => {
    await mesh?.stop();
  });

  it("runs from the CreateBoletoJob call through JetStream (publish → process) to the artifacts service", async () => {
    const traceId = randomBytes(16).toString("hex");
    const callerSpan = randomBytes(8).toString("hex");
    const c = mesh.billingClient();
    const res = await c.createBoletoJob(
      {
        tenant: "acme",
        idempotencyKey: `trace-${traceId}`,
        requestedBy: "ana",
        environment: Environment.SANDBOX,
        items: [boletoValido(1), boletoValido(2)],
      },
      { headers: { traceparent: `00-${traceId}-${callerSpan}-01` } },
    );
    for (let i = 0; i < 600; i++) {
      const { job } = await c.getBoletoJob({ tenant: "acme", jobId: res.job!.jobId });
      if (job && [JobState.COMPLETED, JobState.PARTIALLY_COMPLETED, JobState.FAILED].includes(job.state)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const isCreate = (s: OtlpSpan) => s.kind === SERVER && s.name === "malha.billing.v1.BillingService/CreateBoletoJob";
    const isStored = (s: OtlpSpan) => s.kind === SERVER && s.service === "malha-artifacts";
    let trace: OtlpSpan[] = [];
    for (let i = 0; i < 100; i++) {
      trace = spans.filter((s) => s.traceId === traceId);
      // Services export in their own batches: an artifacts span can arrive before the billing spans that link
      // it to the job, so wait for the linked tree, not for the span alone.
      const root = trace.find(isCreate);
      if (root && subtree(trace, root).filter(isStored).length >= 3) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const created = trace.find(isCreate)!;
    expect(created, JSON.stringify(trace.map((s) => s.name))).toMatchObject({ service: "malha-billing", parentSpanId: callerSpan });
    const published = childOf(trace, created, (s) => s.kind === PRODUCER && s.name.endsWith(" publish"))!;
    expect(published, JSON.stringify(trace.map((s) => s.name))).toBeDefined();
    const processed = childOf(trace, published, (s) => s.kind === CONSUMER && s.name.endsWith(" process"))!;
    expect(processed).toBeDefined();
    // Items are tasks of their own (published by the job's task), each rendering a PDF into artifacts.
    const below = subtree(trace, created);
    const consumers = below.filter((s) => s.kind === CONSUMER);
    expect(consumers.length).toBeGreaterThanOrEqual(3);
    const stored = below.filter(isStored);
    expect(stored.length).toBeGreaterThanOrEqual(3);
    for (const s of stored)
      expect(trace.find((p) => p.spanId === s.parentSpanId)).toMatchObject({ kind: CLIENT, service: "malha-billing" });
  }, 90_000);
});
