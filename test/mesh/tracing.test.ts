// Traces across processes: real services exporting OTLP (HTTP/JSON, chosen with the standard OTEL_*
// variables) to a collector this test runs. A caller's `traceparent` continues through the coordinator
// into the store, and the services' log lines carry the trace id.
import { randomBytes } from "node:crypto";
import { createServer, type Server } from "node:http";
import { createClient } from "@connectrpc/connect";
import { createGrpcTransport } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CoordinatorService } from "../../libs/gen/malha/coordinator/v1/coordinator_pb.js";
import { tracingRequested } from "../../libs/tracing/sdk.js";
import { serviceEnv } from "../support/mesh-env.js";
import { createThrowawayDatabase, type ThrowawayDatabase } from "../support/mysql.js";
import { startService, type ServiceProcess } from "../support/service-process.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  service: string;
}
const SERVER = 2;
const CLIENT = 3;

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
          resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: Omit<OtlpSpan, "service">[] }[] }[];
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

beforeAll(async () => {
  collector = await startCollector();
  const address = collector.address();
  const otel = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
    OTEL_BSP_SCHEDULE_DELAY: "100",
  };
  db = await createThrowawayDatabase();
  const [store, vault] = await Promise.all([
    startService("store", { ...serviceEnv("store", db.url), ...otel }),
    startService("vault", { ...serviceEnv("vault", db.url), ...otel }),
  ]);
  procs.push(store, vault);
  procs.push(await startService("coordinator", { ...serviceEnv("coordinator", db.url), ...otel, STORE_URL: store.baseUrl, VAULT_URL: vault.baseUrl, ADN_GATEWAY_URL: "http://127.0.0.1:1" }));
}, 90_000);

afterAll(async () => {
  for (const p of procs) p.kill("SIGKILL");
  await db?.drop();
  await new Promise((r) => collector?.close(r));
});

async function spansOf(traceId: string, atLeast: number): Promise<OtlpSpan[]> {
  for (let i = 0; i < 200; i++) {
    const found = spans.filter((s) => s.traceId === traceId);
    if (found.length >= atLeast) return found;
    await new Promise((r) => setTimeout(r, 50));
  }
  return spans.filter((s) => s.traceId === traceId);
}

describe("OpenTelemetry tracing", () => {
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
    const line = procs[2]!.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "rpc" && l.requestId === "trace-1");
    expect(line).toMatchObject({ traceId, spanId: served!.spanId });
    // And the store's, under the store's own span.
    const storeLine = procs[0]!.lines.map((l) => JSON.parse(l) as Record<string, unknown>).find((l) => l.msg === "rpc" && l.rpc === "malha.store.v1.StoreService/ListSyncStates" && l.traceId === traceId);
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
