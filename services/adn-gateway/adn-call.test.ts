// Retry and classification of one logical ADN call, with the HTTP layer replaced by a scripted one so
// every branch is reached deterministically (the simulator tests cover the same over the network).
import { Code, ConnectError } from "@connectrpc/connect";
import { describe, expect, it } from "vitest";
import { AdnHttpFailure, type AdnHttpResponse, type CertificatePool } from "../../libs/adn/http.js";
import { TransientFailureSchema, UnexpectedResponseSchema } from "../../libs/gen/malha/adn/v1/errors_pb.js";
import { callAdn, type AdnCallDeps } from "./adn-call.js";
import { noMetrics } from "./metrics.js";

type Step = AdnHttpResponse | AdnHttpFailure;

const json = (status: number, body: object): AdnHttpResponse => ({
  status,
  contentType: "application/json",
  body: Buffer.from(JSON.stringify(body)),
});
const html = (status: number): AdnHttpResponse => ({
  status,
  contentType: "text/html",
  body: Buffer.from(`<html><body>${status}</body></html>`),
});
const found = json(200, { StatusProcessamento: "DOCUMENTOS_LOCALIZADOS", LoteDFe: [], TipoAmbiente: "HOMOLOGACAO" });

function scripted(steps: Step[]) {
  const waits: number[] = [];
  let calls = 0;
  const deps: AdnCallDeps = {
    http: {
      async get() {
        const step = steps[calls++];
        if (!step) throw new Error("unexpected extra call");
        if (step instanceof AdnHttpFailure) throw step;
        return step;
      },
    },
    timeoutMs: 1000,
    maxRetries: 3,
    backoff: { baseMs: 100, maxMs: 250 },
    metrics: noMetrics,
    random: () => 1,
    sleep: async (ms) => void waits.push(ms),
  };
  return { deps, waits, calls: () => calls };
}

const run = (deps: AdnCallDeps, signal?: AbortSignal) =>
  callAdn(deps, {} as CertificatePool, "https://adn.invalid/municipios/DFe/0", "dfe_lote", signal);

async function failure(p: Promise<unknown>): Promise<ConnectError> {
  try {
    await p;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected a failure");
}

describe("callAdn", () => {
  it("returns a 429 at once without retrying", async () => {
    const s = scripted([html(429)]);
    expect(await run(s.deps)).toEqual({ kind: "rate-limited", attempts: 1 });
    expect(s.calls()).toBe(1);
  });

  it("retries 5xx, timeouts and connection errors with bounded exponential waits, then succeeds", async () => {
    const s = scripted([html(503), new AdnHttpFailure("timeout", "timeout after 1s"), new AdnHttpFailure("network", "ECONNRESET"), found]);
    expect(await run(s.deps)).toMatchObject({ kind: "envelope", httpStatus: 200, attempts: 4 });
    expect(s.waits).toEqual([100, 200, 250]);
  });

  it("gives UNAVAILABLE + TransientFailure after NFSE_MAX_RETRIES retries", async () => {
    const s = scripted([html(502), html(503), html(504), html(500)]);
    const err = await failure(run(s.deps));
    expect(err.code).toBe(Code.Unavailable);
    expect(err.findDetails(TransientFailureSchema)[0]).toMatchObject({ attempts: 4, lastHttpStatus: 500, lastError: "HTTP 500" });
    expect(s.calls()).toBe(4);
  });

  it.each([
    ["an HTML 404 (routing error)", html(404), 404],
    ["an unexpected status", html(418), 418],
    ["JSON that is not the envelope", json(200, { hello: "world" }), 200],
  ])("answers %s with UNKNOWN + UnexpectedResponse, without retrying", async (_name, response, status) => {
    const s = scripted([response]);
    const err = await failure(run(s.deps));
    expect(err.code).toBe(Code.Unknown);
    const detail = err.findDetails(UnexpectedResponseSchema)[0]!;
    expect(detail.httpStatus).toBe(status);
    expect(detail.bodyExcerpt.length).toBeGreaterThan(0);
    expect(detail.bodyExcerpt.length).toBeLessThanOrEqual(512);
    expect(s.calls()).toBe(1);
  });

  it("does not retry an oversized body", async () => {
    const s = scripted([new AdnHttpFailure("too-large", "response body exceeds 10 bytes")]);
    expect((await failure(run(s.deps))).code).toBe(Code.Unknown);
    expect(s.calls()).toBe(1);
  });

  it("hands 400 and 404 JSON envelopes to the caller for interpretation", async () => {
    const s = scripted([json(404, { StatusProcessamento: "NENHUM_DOCUMENTO_LOCALIZADO", LoteDFe: [] })]);
    expect(await run(s.deps)).toMatchObject({
      kind: "envelope",
      httpStatus: 404,
      envelope: { statusProcessamento: "NENHUM_DOCUMENTO_LOCALIZADO" },
    });
  });

  it("stops retrying when the caller gives up", async () => {
    const controller = new AbortController();
    const s = scripted([html(503), html(503)]);
    s.deps.sleep = async () => {
      controller.abort(new Error("caller cancelled"));
      throw controller.signal.reason;
    };
    await expect(run(s.deps, controller.signal)).rejects.toThrow("caller cancelled");
    expect(s.calls()).toBe(1);
  });
});
