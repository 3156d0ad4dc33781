// One logical ADN call: HTTP attempts with retries for transient faults only (timeouts, connection
// errors, 5xx), classified into what the handlers need. A 429 is returned at once, never retried.
import { EnvelopeError, parseEnvelope, type AdnEnvelope } from "../../libs/adn/envelope.js";
import { AdnHttpFailure, type AdnHttpResponse, type CertificatePool } from "../../libs/adn/http.js";
import { backoffDelayMs, sleep as defaultSleep, type BackoffPolicy } from "./backoff.js";
import { transientFailure, unexpectedResponse } from "./errors.js";
import type { AdnMetrics } from "./metrics.js";

export interface AdnCallDeps {
  http: { get(pool: CertificatePool, url: string, opts: { timeoutMs: number; signal?: AbortSignal }): Promise<AdnHttpResponse> };
  timeoutMs: number;
  maxRetries: number;
  backoff: BackoffPolicy;
  metrics: AdnMetrics;
  random?: () => number;
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
}

export type AdnCallResult =
  | { kind: "envelope"; envelope: AdnEnvelope; httpStatus: number; attempts: number }
  | { kind: "rate-limited"; attempts: number };

export async function callAdn(
  deps: AdnCallDeps,
  pool: CertificatePool,
  url: string,
  endpoint: string,
  signal?: AbortSignal,
): Promise<AdnCallResult> {
  const wait = deps.sleep ?? defaultSleep;
  let last = { status: 0, error: "" };
  for (let attempt = 1; ; attempt++) {
    if (attempt > 1) await wait(backoffDelayMs(attempt - 1, deps.backoff, deps.random), signal);
    const started = performance.now();
    let res: AdnHttpResponse;
    try {
      res = await deps.http.get(pool, url, { timeoutMs: deps.timeoutMs, ...(signal ? { signal } : {}) });
    } catch (err) {
      if (!(err instanceof AdnHttpFailure)) throw err;
      deps.metrics.attempt(endpoint, err.kind, (performance.now() - started) / 1000, 0);
      if (err.kind === "too-large") throw unexpectedResponse(0, "", Buffer.alloc(0), err.message);
      last = { status: 0, error: err.message };
      if (attempt > deps.maxRetries) throw transientFailure(attempt, last.status, last.error);
      continue;
    }
    deps.metrics.attempt(endpoint, String(res.status), (performance.now() - started) / 1000, res.body.length);
    if (res.status === 429) return { kind: "rate-limited", attempts: attempt };
    if (res.status >= 500) {
      last = { status: res.status, error: `HTTP ${res.status}` };
      if (attempt > deps.maxRetries) throw transientFailure(attempt, last.status, last.error);
      continue;
    }
    if (res.status !== 200 && res.status !== 400 && res.status !== 404) {
      throw unexpectedResponse(res.status, res.contentType, res.body, `HTTP ${res.status} is not part of the ADN contract`);
    }
    try {
      return { kind: "envelope", envelope: parseEnvelope(res.body.toString("utf8")), httpStatus: res.status, attempts: attempt };
    } catch (err) {
      if (!(err instanceof EnvelopeError)) throw err;
      // An HTML 404 is a routing or host error, not "nothing found".
      throw unexpectedResponse(res.status, res.contentType, res.body, err.message);
    }
  }
}
