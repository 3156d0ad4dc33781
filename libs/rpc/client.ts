import type { DescService } from "@bufbuild/protobuf";
import { createClient, type CallOptions, type Client, type Interceptor } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { currentScope } from "./context.js";
import { tracingClientInterceptor } from "../tracing/rpc.js";
import { requestIdPropagation } from "./interceptors.js";

export interface ClientTlsOptions {
  /** CA that signed the server certificate; when absent the system trust store is used. */
  ca?: Buffer;
  /** Our own certificate and key, for mTLS. */
  cert?: Buffer;
  key?: Buffer;
  /** Expected server name when it differs from the URL host (e.g. a Kubernetes service name). */
  serverName?: string;
}

export interface ServiceClientOptions {
  /** http://host:port (h2c) or https://host:port (TLS). */
  baseUrl: string;
  tls?: ClientTlsOptions;
  /** Deadline applied to every call that sets none (and caps the one inherited from the caller). */
  defaultTimeoutMs?: number;
  interceptors?: Interceptor[];
}

export interface ServiceClient<S extends DescService> {
  client: Client<S>;
  /** Closes the HTTP/2 connection and any call still open on it. */
  close(): void;
}

/**
 * A typed gRPC client for service-to-service calls. Each call inherits the request id, cancellation
 * and remaining deadline of the call being served (if any), so a downstream call never outlives its
 * caller's deadline.
 */
export function createServiceClient<S extends DescService>(service: S, opts: ServiceClientOptions): ServiceClient<S> {
  const https = opts.baseUrl.startsWith("https:");
  const nodeOptions = https
    ? {
        ...(opts.tls?.ca ? { ca: opts.tls.ca } : {}),
        ...(opts.tls?.cert ? { cert: opts.tls.cert } : {}),
        ...(opts.tls?.key ? { key: opts.tls.key } : {}),
        ...(opts.tls?.serverName ? { servername: opts.tls.serverName } : {}),
      }
    : {};
  const sessionManager = new Http2SessionManager(opts.baseUrl, { pingIntervalMs: 30_000 }, nodeOptions);
  const transport = createGrpcTransport({
    baseUrl: opts.baseUrl,
    sessionManager,
    interceptors: [tracingClientInterceptor(), requestIdPropagation(), ...(opts.interceptors ?? [])],
  });
  const raw = createClient(service, transport);
  const client = new Proxy(raw, {
    get(target, prop, receiver) {
      const method = Reflect.get(target, prop, receiver);
      if (typeof method !== "function") return method;
      return (input: unknown, options?: CallOptions) =>
        (method as (i: unknown, o?: CallOptions) => unknown).call(target, input, withInherited(options, opts));
    },
  }) as Client<S>;
  return { client, close: () => sessionManager.abort() };
}

function withInherited(options: CallOptions | undefined, opts: ServiceClientOptions): CallOptions {
  const scope = currentScope();
  const limits: number[] = [];
  if (options?.timeoutMs !== undefined) limits.push(options.timeoutMs);
  else if (opts.defaultTimeoutMs !== undefined) limits.push(opts.defaultTimeoutMs);
  if (scope?.deadline !== undefined) limits.push(Math.max(1, scope.deadline - Date.now()));
  const signals = [options?.signal, scope?.signal].filter((s): s is AbortSignal => s !== undefined);
  return {
    ...options,
    ...(limits.length ? { timeoutMs: Math.min(...limits) } : {}),
    ...(signals.length ? { signal: signals.length === 1 ? signals[0] : AbortSignal.any(signals) } : {}),
  };
}
