import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";
import { createContextKey } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";

/** The verified identity of an mTLS client, for handlers that authorise by caller. */
export interface PeerIdentity {
  subjectCommonName?: string;
  subjectAltNames: string[];
  fingerprint256: string;
}

export const peerIdentityKey = createContextKey<PeerIdentity | undefined>(undefined, {
  description: "mTLS client certificate identity",
});

/** The caller's address as the socket sees it (host:port), for the access log. */
export const peerAddressKey = createContextKey<string | undefined>(undefined, { description: "remote address" });

/**
 * Aborted once the server has told its connections to go away (GOAWAY, during a graceful shutdown):
 * calls already open run on, but a long stream that takes new work (DeliverFeeds) refuses it from then on,
 * so that the caller opens it on a new connection, to another replica (decision 0045).
 */
export const serverClosingKey = createContextKey<AbortSignal>(new AbortController().signal, {
  description: "the server is closing its connections",
});

/** What a handler's outgoing calls inherit from the request being served. */
export interface RequestScope {
  requestId: string;
  /** Absolute deadline (epoch ms) of the incoming call, if the caller set one. */
  deadline?: number;
  /** Aborted when the incoming call is cancelled, times out, or the server shuts down. */
  signal: AbortSignal;
  log: Logger;
}

const storage = new AsyncLocalStorage<RequestScope>();

export function currentScope(): RequestScope | undefined {
  return storage.getStore();
}

export function runInScope<T>(scope: RequestScope, fn: () => T): T {
  return storage.run(scope, fn);
}

/**
 * Runs `fn` outside any request scope: for background work started by an RPC (a queued job) that
 * must not inherit the caller's cancellation, deadline or request id — it outlives the call.
 */
export function runDetached<T>(fn: () => T): T {
  return storage.exit(fn);
}

export const REQUEST_ID_HEADER = "x-request-id";

/** Accepts a caller's request id only if it is short and printable, so it is safe in logs. */
export function requestIdFrom(headers: Headers): string {
  const given = headers.get(REQUEST_ID_HEADER);
  if (given && /^[A-Za-z0-9._:-]{1,128}$/.test(given)) return given;
  return randomUUID();
}

const GRPC_TIMEOUT_UNITS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000001 };

/**
 * The remaining time a caller gave us, from `grpc-timeout` (gRPC, gRPC-Web) or `connect-timeout-ms`
 * (Connect). Connect enforces it on the handler's signal; we read it to pass it on downstream.
 */
export function timeoutMsFrom(headers: Headers): number | undefined {
  const grpc = headers.get("grpc-timeout");
  if (grpc) {
    const m = /^(\d{1,8})([HMSmun])$/.exec(grpc);
    if (m) return Number(m[1]) * (GRPC_TIMEOUT_UNITS[m[2] as string] ?? 1);
  }
  const connect = headers.get("connect-timeout-ms");
  if (connect && /^\d{1,10}$/.test(connect)) return Number(connect);
  return undefined;
}
