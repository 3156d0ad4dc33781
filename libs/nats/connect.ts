import { connect, type NatsConnection } from "@nats-io/transport-node";

/**
 * The services' NATS connection: reconnects for ever (a restarted server is waited for, not fatal), and
 * without nats.js's async traces. Those build an Error per request and per timed operation to keep the
 * caller's stack in case it fails; with a lease created and deleted per feed run they were ≈ 6 % of the
 * coordinator's CPU in the fleet bench's sweep (bench/README.md), and a NATS failure's message says what
 * failed without them.
 */
export function connectNats(url: string, name: string): Promise<NatsConnection> {
  return connect({ servers: url, name, maxReconnectAttempts: -1, reconnectTimeWait: 250, noAsyncTraces: true });
}
