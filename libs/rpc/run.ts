import type { Server } from "node:http";
import { ConfigError, EnvReader } from "../config/env.js";
import { createLogger, type Logger } from "../log/logger.js";
import { ServingStatus } from "./health.js";
import { Metrics, serveMetrics } from "./metrics.js";
import { MESH, type MeshServiceName } from "./mesh.js";
import { readRuntimeConfig, type RuntimeConfig } from "./runtime-config.js";
import { startRpcServer, type RpcServer, type ServedService } from "./server.js";
import { startTracing } from "../tracing/sdk.js";
import { checkAccessTable } from "./auth/access.js";
import type { CallerAuth } from "./auth/authorize.js";
import { useNodeTextEncoding } from "./text-encoding.js";

/** sysexits EX_CONFIG: systemd units can use it to stop restarting a misconfigured service. */
export const EXIT_CONFIG = 78;

export interface ServiceContext {
  env: EnvReader;
  config: RuntimeConfig;
  log: Logger;
  metrics: Metrics;
}

export interface ServiceSetup {
  services: ServedService[];
  /** How callers prove who they are to the methods the services' access tables do not make public. */
  auth?: CallerAuth;
  /** Ready check before SERVING (migrations applied, connections up…). */
  ready?: () => Promise<void>;
  /** Releases resources after the server stopped (pools, NATS connections…). */
  close?: () => Promise<void>;
}

export interface RunningService {
  server: RpcServer;
  metricsServer?: Server;
  stop(): Promise<void>;
}

/**
 * Starts one mesh service: config, logs, metrics, gRPC server with health and reflection, graceful
 * shutdown on SIGTERM/SIGINT. A configuration error prints one line and exits with EXIT_CONFIG;
 * `setup` reads its own variables through `ctx.env` and gets the same treatment.
 */
export async function runService(
  name: MeshServiceName,
  setup: (ctx: ServiceContext) => ServiceSetup | Promise<ServiceSetup>,
): Promise<RunningService> {
  useNodeTextEncoding();
  // Before anything opens a span; off unless OTEL_* configures an exporter.
  const tracing = await startTracing(name);
  const env = new EnvReader(process.env);
  let config: RuntimeConfig;
  let log: Logger;
  let built: ServiceSetup;
  const metrics = new Metrics(name);
  try {
    config = readRuntimeConfig(env, MESH[name]);
    log = createLogger({ service: name, level: config.logLevel });
    built = await setup({ env, config, log, metrics });
    // Fail closed before listening: a method nobody decided the callers of is a wiring mistake.
    for (const s of built.services) checkAccessTable(s.service, s.access);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`${name}: ${err.message}\n`);
      process.exit(EXIT_CONFIG);
    }
    process.stderr.write(`${name}: failed to start: ${(err as Error).message}\n`);
    process.exit(1);
  }

  const server = await startRpcServer({
    services: built.services,
    host: config.host,
    port: config.port,
    ...(config.tls ? { tls: config.tls } : {}),
    log,
    metrics,
    maxTimeoutMs: config.maxRpcTimeoutMs,
    accessLog: config.accessLog,
    ...(config.http1 ? { http1: config.http1 } : {}),
    ...(built.auth ? { auth: built.auth } : {}),
  }).catch((err: unknown) =>
    (err as { listener?: string }).listener === "http1" && config.http1
      ? exitCannotListen(name, "HTTP/1.1", config.http1.host, config.http1.port, err)
      : exitCannotListen(name, "gRPC", config.host, config.port, err),
  );
  const metricsServer = config.metricsEnabled
    ? await serveMetrics(metrics, config.metricsHost, config.metricsPort).catch((err: unknown) =>
        exitCannotListen(name, "metrics", config.metricsHost, config.metricsPort, err),
      )
    : undefined;
  const metricsAddress = metricsServer?.address();

  try {
    await built.ready?.();
  } catch (err) {
    // Not ready means not serving: say why in one line and let the supervisor restart us.
    log.error({ err }, "failed to become ready");
    await server.shutdown({ drainMs: 0, timeoutMs: 1000 });
    await built.close?.().catch(() => undefined);
    log.flush(() => process.exit(1));
    return new Promise<never>(() => undefined);
  }
  server.health.setAll(ServingStatus.SERVING);
  log.info(
    {
      port: server.port,
      ...(server.http1Port === undefined ? {} : { http1Port: server.http1Port }),
      metricsPort: typeof metricsAddress === "object" && metricsAddress ? metricsAddress.port : undefined,
      tls: config.tls ? (config.tls.clientCa ? "mtls" : "tls") : "none",
      tracing: tracing !== undefined,
      services: built.services.map((s) => s.service.typeName),
    },
    "serving",
  );

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      log.info("shutting down");
      await server.shutdown({ drainMs: config.shutdownDrainMs, timeoutMs: config.shutdownTimeoutMs });
      await built.close?.();
      await new Promise<void>((resolve) => (metricsServer ? metricsServer.close(() => resolve()) : resolve()));
      // The last spans (this shutdown's calls among them) leave before the process does.
      await tracing?.shutdown().catch((err: unknown) => log.warn({ err }, "tracing: could not flush the last spans"));
      log.info("stopped");
    })());

  const onSignal = (signal: NodeJS.Signals) => {
    log.info({ signal }, "signal received");
    stop().then(
      () => log.flush(() => process.exit(0)),
      (err) => {
        log.error({ err }, "shutdown failed");
        log.flush(() => process.exit(1));
      },
    );
  };
  process.once("SIGTERM", onSignal);
  process.once("SIGINT", onSignal);
  return { server, ...(metricsServer ? { metricsServer } : {}), stop };
}

/**
 * A port taken by another process is an operator's problem, not a crash: one line naming the address,
 * no stack, exit 1 so a supervisor retries (the port may be free a moment later).
 */
function exitCannotListen(name: MeshServiceName, what: string, host: string, port: number, err: unknown): never {
  const e = err as NodeJS.ErrnoException;
  const reason = e.code === "EADDRINUSE" ? "address already in use" : e.code === "EACCES" ? "permission denied" : e.message;
  process.stderr.write(`${name}: cannot listen on ${host}:${port} for ${what}: ${reason}${e.code ? ` (${e.code})` : ""}\n`);
  process.exit(1);
}
