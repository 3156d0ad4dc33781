// How a service connects to NATS: the same options for every service that holds leases or queues jobs.
import { connect, type NatsConnection } from "@nats-io/transport-node";

/**
 * Reconnects forever (a NATS restart must not end the service) and builds no stack trace per request:
 * nats.js otherwise creates a RequestError and a TimeoutError before every request and KV write, only so
 * that a failure would point at its caller — ≈ 4 % of the coordinator's CPU in a fleet sweep (bench/README.md,
 * 2026-12-03 14:20–; one RequestError per request remains, built by nats.js when it settles the request).
 * Our callers handle each failure where they await it, so the trace adds nothing.
 */
export function connectNats(servers: string, name: string): Promise<NatsConnection> {
  return connect({ servers, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, noAsyncTraces: true });
}
