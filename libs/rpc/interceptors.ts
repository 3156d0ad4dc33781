import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { Logger } from "../log/logger.js";
import { currentScope, requestIdFrom, REQUEST_ID_HEADER, runInScope, timeoutMsFrom, type RequestScope } from "./context.js";
import { logLevelOf, toWireError } from "./errors.js";
import type { Metrics } from "./metrics.js";

/**
 * The one server interceptor: opens the request scope (request id, deadline, logger), records metrics,
 * logs the outcome, and turns any failure into a wire-safe ConnectError.
 */
export function serverInterceptor(log: Logger, metrics: Metrics): Interceptor {
  return (next) => async (req) => {
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
      if (level === undefined) scope.log.debug("rpc ok");
      else if (level === "error") scope.log.error({ err }, "rpc failed unexpectedly");
      else scope.log[level]({ code, reason: wire?.rawMessage }, "rpc refused");
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
function scoped<T>(
  scope: RequestScope,
  source: AsyncIterable<T>,
  finish: (err?: unknown) => ConnectError | undefined,
): AsyncIterable<T> {
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
