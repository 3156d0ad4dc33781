// ADN call metrics: HTTP attempts by outcome, their latency and bytes, and the items decoded.
import { Counter, Gauge, Histogram, type Registry } from "prom-client";

export interface AdnMetrics {
  attempt(endpoint: string, outcome: string, seconds: number, bytes: number): void;
  items(kind: string, count: number): void;
  /** A DeliverFeeds delivery ended, by its code's name (OK, Canceled, FailedPrecondition, …). */
  deliveryEnded(code: string): void;
}

export function createAdnMetrics(registry: Registry): AdnMetrics {
  const requests = new Counter({
    name: "malha_adn_http_requests_total",
    help: "HTTP attempts made to the ADN, by endpoint and outcome (HTTP status, timeout, network, too-large).",
    labelNames: ["endpoint", "outcome"],
    registers: [registry],
  });
  const duration = new Histogram({
    name: "malha_adn_http_request_duration_seconds",
    help: "Latency of one HTTP attempt to the ADN, body included.",
    labelNames: ["endpoint"],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 20, 30, 60],
    registers: [registry],
  });
  const bytes = new Counter({
    name: "malha_adn_response_bytes_total",
    help: "Response body bytes received from the ADN.",
    labelNames: ["endpoint"],
    registers: [registry],
  });
  const items = new Counter({
    name: "malha_adn_items_total",
    help: "Distribution items decoded, by kind (document, event, fault).",
    labelNames: ["kind"],
    registers: [registry],
  });
  const deliveries = new Counter({
    name: "malha_adn_deliveries_total",
    help: "DeliverFeeds deliveries (sync runs' page deliveries) ended, by code; many share one stream.",
    labelNames: ["code"],
    registers: [registry],
  });
  return {
    deliveryEnded(code) {
      deliveries.inc({ code });
    },
    attempt(endpoint, outcome, seconds, size) {
      requests.inc({ endpoint, outcome });
      duration.observe({ endpoint }, seconds);
      if (size > 0) bytes.inc({ endpoint }, size);
    },
    items(kind, count) {
      if (count > 0) items.inc({ kind }, count);
    },
  };
}

/**
 * The certificates' connection pools open now, and the TLS sessions and contexts kept past them: read when
 * scraped, so what ADN_POOL_IDLE_SECONDS and ADN_TLS_CONTEXTS_MAX keep is visible (decisions 0037, 0050).
 */
export function registerPoolGauges(
  registry: Registry,
  http: { poolCount(): number; tlsSessionCount(): number; tlsContextCount(): number; tlsContextsBuilt(): number },
): void {
  new Gauge({
    name: "malha_adn_open_pools",
    help: "Certificate connection pools open in the gateway.",
    registers: [registry],
    collect() {
      this.set(http.poolCount());
    },
  });
  new Gauge({
    name: "malha_adn_tls_sessions",
    help: "TLS sessions kept for resumption, at most one per certificate used in the last two hours.",
    registers: [registry],
    collect() {
      this.set(http.tlsSessionCount());
    },
  });
  new Gauge({
    name: "malha_adn_tls_contexts",
    help: "TLS contexts kept past their pools, at most one per certificate used in the last two hours (ADN_TLS_CONTEXTS_MAX).",
    registers: [registry],
    collect() {
      this.set(http.tlsContextCount());
    },
  });
  new Counter({
    name: "malha_adn_tls_contexts_built_total",
    help: "TLS contexts built: once per certificate pool opened with no context kept for its credentials.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(http.tlsContextsBuilt());
    },
  });
}

/** For unit tests and tools that need no registry. */
export const noMetrics: AdnMetrics = { attempt() {}, items() {}, deliveryEnded() {} };
