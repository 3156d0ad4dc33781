import type { Server as NetServer } from "node:net";
import type { TLSSocket } from "node:tls";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, createContextValues, type ServiceImpl } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import { Health } from "../gen/health/v1/health_pb.js";
import * as reflectionV1 from "../gen/grpc/reflection/v1/reflection_pb.js";
import * as reflectionV1alpha from "../gen/grpc/reflection/v1alpha/reflection_pb.js";
import { peerAddressKey, peerIdentityKey, serverClosingKey } from "./context.js";
import { HealthRegistry, healthService, ServingStatus } from "./health.js";
import { tracingServerInterceptor } from "../tracing/rpc.js";
import { serverInterceptor } from "./interceptors.js";
import { createHttp1Listener, createListener, type TlsFiles } from "./listener.js";
import { nodeAdapter } from "./node-adapter.js";
import type { Metrics } from "./metrics.js";
import { reflectionServices } from "./reflection.js";
import { validationInterceptor } from "./validation.js";
import { type AccessTable, checkAccessTable, type MethodAccess, publicTable } from "./auth/access.js";
import type { CallerAuth } from "./auth/authorize.js";
import { authInterceptor } from "./auth/interceptor.js";

/**
 * A service, its (possibly partial) implementation — missing methods answer UNIMPLEMENTED — and who may
 * call each of its methods.
 */
export interface ServedService<S extends DescService = DescService> {
  service: S;
  impl: Partial<ServiceImpl<S>>;
  access: Readonly<Record<string, MethodAccess>>;
}

/**
 * Pairs a service with its implementation and its access table, the types checked against each other;
 * a table missing a method throws here, so the service does not start (docs/decisions/0022-authentication-interceptor.md).
 */
export function serve<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>, access: AccessTable<S>): ServedService {
  const table = access as Readonly<Record<string, MethodAccess>>;
  checkAccessTable(service, table);
  return { service, impl, access: table } as unknown as ServedService;
}

export { peerIdentityKey, type PeerIdentity } from "./context.js";

export interface RpcServerOptions {
  services: ServedService[];
  host: string;
  port: number;
  tls?: TlsFiles;
  log: Logger;
  metrics: Metrics;
  /** Upper bound for deadlines clients may ask for. */
  maxTimeoutMs?: number;
  /** Largest single message accepted; streaming RPCs chunk larger payloads. */
  readMaxBytes?: number;
  /** One info line per RPC (RPC_ACCESS_LOG); default on. */
  accessLog?: boolean;
  /** A second, plaintext HTTP/1.1 listener (HTTP1_HOST/HTTP1_PORT) for Connect/JSON and gRPC-Web. */
  http1?: { host: string; port: number };
  /** How callers are authenticated for the methods the access tables do not make public. */
  auth?: CallerAuth;
}

export interface RpcServer {
  readonly port: number;
  /** The HTTP/1.1 listener's port, when one was asked for. */
  readonly http1Port?: number;
  readonly health: HealthRegistry;
  /**
   * Graceful stop: NOT_SERVING, wait `drainMs` for load balancers to notice, refuse new connections,
   * let in-flight calls finish for up to `timeoutMs`, then cut what is left.
   */
  shutdown(opts: { drainMs: number; timeoutMs: number }): Promise<void>;
}

export async function startRpcServer(opts: RpcServerOptions): Promise<RpcServer> {
  const health = new HealthRegistry(opts.services.map((s) => s.service.typeName));
  const reflection = reflectionServices([...opts.services.map((s) => s.service), Health]);
  const shutdownController = new AbortController();
  const closing = new AbortController();
  for (const s of opts.services) checkAccessTable(s.service, s.access);
  const tables = new Map([
    ...opts.services.map((s) => [s.service.typeName, s.access] as const),
    ...[Health, reflectionV1.ServerReflection, reflectionV1alpha.ServerReflection].map((s) => [s.typeName, publicTable(s)] as const),
  ]);

  const handler = nodeAdapter({
    grpc: true,
    grpcWeb: true,
    connect: true,
    // connect treats 0 as "no timeout allowed"; unset means no upper bound.
    ...(opts.maxTimeoutMs ? { maxTimeoutMs: opts.maxTimeoutMs } : {}),
    readMaxBytes: opts.readMaxBytes ?? 16 * 1024 * 1024,
    // No gzip inside the mesh: batches cross a fast network, and compressing every FetchBatch response
    // cost the gateway and the coordinator 5–8% of their CPU (docs/decisions/0002-no-gzip-inside-the-mesh.md).
    acceptCompression: [],
    shutdownSignal: shutdownController.signal,
    // A misspelt JSON field is a caller's mistake, not a field to drop: connect ignores unknown JSON
    // fields unless told otherwise (protobuf-es alone refuses them). Binary keeps unknown fields, as the
    // wire format's forward compatibility wants.
    jsonOptions: { ignoreUnknownFields: false },
    // Tracing first, so the request scope, its log lines and the handler run inside the call's span;
    // authentication and then validation last, so a refusal is logged and counted like any other, and a
    // caller without the right learns nothing from validation.
    interceptors: [
      tracingServerInterceptor(),
      serverInterceptor(opts.log, opts.metrics, { accessLog: opts.accessLog ?? true }),
      authInterceptor(tables, opts.auth ?? { resolvers: [] }),
      validationInterceptor(),
    ],
    contextValues: (req) => {
      const values = createContextValues();
      values.set(serverClosingKey, closing.signal);
      const socket = req.socket as Partial<TLSSocket>;
      if (req.socket.remoteAddress) values.set(peerAddressKey, `${req.socket.remoteAddress}:${req.socket.remotePort}`);
      if (opts.tls?.clientCa && typeof socket.getPeerCertificate === "function") {
        const cert = socket.getPeerCertificate();
        if (cert?.fingerprint256) {
          values.set(peerIdentityKey, {
            subjectCommonName: typeof cert.subject?.CN === "string" ? cert.subject.CN : undefined,
            subjectAltNames: (cert.subjectaltname ?? "").split(/,\s*/).filter(Boolean),
            fingerprint256: cert.fingerprint256,
          });
        }
      }
      return values;
    },
    onWriteError: (method, err) => opts.log.warn({ method, err }, "response could not be written"),
    routes(router) {
      for (const s of opts.services) router.service(s.service, s.impl);
      router.service(Health, healthService(health));
      router.service(reflectionV1.ServerReflection, reflection.v1);
      router.service(reflectionV1alpha.ServerReflection, reflection.v1alpha);
    },
  });

  // connect-node waits for 'drain' or 'error' when a response stream's flow-control window is full and
  // checks `errored` before each write, but a response whose client reset the stream only emits 'close'
  // and then swallows writes: without this, the handler of a cancelled server stream that its reader was
  // holding back stays suspended forever, with everything it holds.
  const guarded: typeof handler = (req, res) => {
    res.once("close", () => {
      if (res.writableFinished) return;
      const reset = new ConnectError("the client closed the stream", Code.Aborted);
      Object.defineProperty(res, "errored", { value: reset, configurable: true });
      if (res.listenerCount("error") > 0) res.emit("error", reset);
    });
    return handler(req, res);
  };
  const listener = createListener(guarded, opts.tls);
  const port = await listen(listener.server, opts.port, opts.host);
  const http1 = opts.http1 ? createHttp1Listener(guarded) : undefined;
  const http1Port =
    http1 && opts.http1
      ? await listen(http1, opts.http1.port, opts.http1.host).catch((err: unknown) => {
          listener.server.close();
          // Tells the caller which of the two listeners could not bind.
          throw Object.assign(err as Error, { listener: "http1" });
        })
      : undefined;

  let stopping: Promise<void> | undefined;
  const shutdown = ({ drainMs, timeoutMs }: { drainMs: number; timeoutMs: number }) => {
    stopping ??= (async () => {
      health.setAll(ServingStatus.NOT_SERVING);
      await sleep(drainMs);
      health.close();
      const closed = Promise.all([
        new Promise<void>((resolve) => listener.server.close(() => resolve())),
        new Promise<void>((resolve) => (http1 ? http1.close(() => resolve()) : resolve())),
      ]).then(() => undefined);
      // GOAWAY: sessions finish their open streams and then close, instead of waiting for the client. The
      // streams that take new work refuse it from now on (serverClosingKey): the client's next stream goes
      // to a new connection, which this server no longer accepts.
      closing.abort();
      for (const session of listener.sessions) session.close();
      // HTTP/1.1 keep-alive connections without a request in flight would hold close() open.
      http1?.closeIdleConnections();
      const timedOut = await Promise.race([closed.then(() => false), sleep(timeoutMs).then(() => true)]);
      if (timedOut) {
        opts.log.warn({ sessions: listener.sessions.size }, "shutdown timeout: aborting in-flight calls");
        shutdownController.abort();
        for (const session of listener.sessions) session.destroy();
        http1?.closeAllConnections();
        await Promise.race([closed, sleep(1000)]);
      }
    })();
    return stopping;
  };

  return { port, ...(http1Port === undefined ? {} : { http1Port }), health, shutdown };
}

function listen(server: NetServer, port: number, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
