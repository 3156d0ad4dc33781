import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import {
  currentScope,
  peerAddressKey,
  peerIdentityKey,
  requestIdFrom,
  REQUEST_ID_HEADER,
  runInScope,
  timeoutMsFrom,
  type RequestScope,
} from "./context.js";
import { callerKey, callerName } from "./auth/caller.js";
import { logLevelOf, toWireError } from "./errors.js";
import type { Metrics } from "./metrics.js";

export interface ServerInterceptorOptions {
  /**
   * One info line per RPC (method, code, duration, request id, caller: the authenticated one, else the
   * client certificate's CN); off: only failures are logged.
   */
  accessLog: boolean;
}

/**
 * Health checks come from probes and load balancers every few seconds: their access lines go to debug,
 * or they would drown the calls an operator looks for.
 */
const QUIET_SERVICES = new Set(["grpc.health.v1.Health"]);

/**
 * The one server interceptor: opens the request scope (request id, deadline, logger), records metrics,
 * logs the outcome (the access log), and turns any failure into a wire-safe ConnectError.
 */
export function serverInterceptor(log: Logger, metrics: Metrics, opts: ServerInterceptorOptions = { accessLog: true }): Interceptor {
  return (next) => async (req) => {
    const started = performance.now();
    const requestId = requestIdFrom(req.header);
    const timeoutMs = timeoutMsFrom(req.header);
    const service = req.service.typeName;
    const method = req.method.name;
    const scope: RequestScope = {
      requestId,
      deadline: timeoutMs === undefined ? undefined : Date.now() + timeoutMs,
      signal: req.signal,
      log: log.child({ requestId, rpc: `${service}/${method}` }),
    };
    const stopTimer = metrics.rpcDuration.startTimer({ service, method });
    let finished = false;
    const finish = (err?: unknown): ConnectError | undefined => {
      if (finished) return undefined;
      finished = true;
      stopTimer();
      const wire = err === undefined ? undefined : toWireError(err, requestId);
      const code = wire ? Code[wire.code] : "OK";
      metrics.rpcHandled.inc({ service, method, code });
      const level = err === undefined ? undefined : logLevelOf(err);
      if (level === "error") scope.log.error({ err }, "rpc failed unexpectedly");
      else if (level !== undefined) scope.log[level]({ code, reason: wire?.rawMessage }, "rpc refused");
      if (opts.accessLog || level === undefined) {
        const identity = req.contextValues.get(peerIdentityKey);
        // Set by the authentication interceptor on the way in, when the method is not public.
        const caller = req.contextValues.get(callerKey);
        const line = {
          code,
          durationMs: Math.round((performance.now() - started) * 1000) / 1000,
          protocol: req.requestMethod === "GET" ? "connect" : protocolOf(req.header),
          caller: caller ? callerName(caller) : (identity?.subjectCommonName ?? null),
          peer: req.contextValues.get(peerAddressKey) ?? null,
        };
        if (opts.accessLog && !QUIET_SERVICES.has(service)) scope.log.info(line, "rpc");
        else scope.log.debug(line, "rpc");
      }
      wire?.metadata.set(REQUEST_ID_HEADER, requestId);
      return wire;
    };
    return runInScope(scope, async () => {
      try {
        const res = await next(req);
        res.header.set(REQUEST_ID_HEADER, requestId);
        if (!res.stream) {
          finish();
          return res;
        }
        return { ...res, message: scoped(scope, res.message, finish) };
      } catch (err) {
        throw finish(err) ?? toWireError(err, requestId);
      }
    });
  };
}

/** Runs each step of a response stream inside the request scope and reports how the stream ended. */
function scoped<T>(scope: RequestScope, source: AsyncIterable<T>, finish: (err?: unknown) => ConnectError | undefined): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      return {
        async next() {
          try {
            const r = await runInScope(scope, () => it.next());
            if (r.done) finish();
            return r;
          } catch (err) {
            throw finish(err) ?? toWireError(err, scope.requestId);
          }
        },
        async return(value?: unknown) {
          finish();
          return (await it.return?.(value)) ?? { done: true, value: undefined };
        },
        // connect throws a failed write (the client reset the stream) into the response iterator; the
        // handler's generator has to hear it, or it stays suspended at its yield for good.
        async throw(err?: unknown) {
          finish(scope.signal?.aborted ? new ConnectError("the client cancelled the call", Code.Canceled) : err);
          if (it.throw) return await it.throw(err);
          await it.return?.();
          throw err;
        },
      };
    },
  };
}

/** Client side: outgoing calls carry the request id of the call being served, if any. */
export function requestIdPropagation(): Interceptor {
  return (next) => async (req) => {
    const scope = currentScope();
    if (scope && !req.header.has(REQUEST_ID_HEADER)) req.header.set(REQUEST_ID_HEADER, scope.requestId);
    return next(req);
  };
}

/** Which of the three protocols a call came in on, from its content type (for the access log). */
function protocolOf(header: Headers): string {
  const type = header.get("content-type") ?? "";
  if (type.startsWith("application/grpc-web")) return "grpc-web";
  if (type.startsWith("application/grpc")) return "grpc";
  return "connect";
}
