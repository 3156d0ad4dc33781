// Spans for RPCs: one per call served (SERVER) and per call made (CLIENT), parented through the W3C
// `traceparent` header in both directions, so a trace follows a request across every hop of the mesh.
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import {
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Context,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";

const tracer = trace.getTracer("malha-rpc");

const headerGetter: TextMapGetter<Headers> = {
  keys: (h) => [...h.keys()],
  get: (h, key) => h.get(key) ?? undefined,
};
const headerSetter: TextMapSetter<Headers> = { set: (h, key, value) => h.set(key, value) };

/** Codes that mean the server failed (OpenTelemetry's RPC conventions); the rest are the caller's. */
const SERVER_FAULTS = new Set([Code.Unknown, Code.DeadlineExceeded, Code.Unimplemented, Code.Internal, Code.Unavailable, Code.DataLoss]);

function attributes(service: string, method: string) {
  return { "rpc.system": "connect_rpc", "rpc.service": service, "rpc.method": method };
}

function ended(span: Span, err: unknown, serverSide: boolean): void {
  if (err === undefined) {
    span.setAttribute("rpc.connect_rpc.error_code", "ok");
  } else {
    const code = ConnectError.from(err).code;
    span.setAttribute("rpc.connect_rpc.error_code", Code[code] ?? String(code));
    if (!serverSide || SERVER_FAULTS.has(code)) span.setStatus({ code: SpanStatusCode.ERROR, message: Code[code] });
  }
  span.end();
}

/** Keeps a response stream's steps in the span's context and ends the span when the stream does. */
function traced<T>(ctx: Context, span: Span, source: AsyncIterable<T>, serverSide: boolean): AsyncIterable<T> {
  return {
    [Symbol.asyncIterator]() {
      const it = source[Symbol.asyncIterator]();
      let done = false;
      const end = (err?: unknown) => {
        if (!done) (done = true), ended(span, err, serverSide);
      };
      return {
        async next() {
          try {
            const r = await context.with(ctx, () => it.next());
            if (r.done) end();
            return r;
          } catch (err) {
            end(err);
            throw err;
          }
        },
        async return(value?: unknown) {
          end();
          return (await it.return?.(value)) ?? { done: true, value: undefined };
        },
        async throw(err?: unknown) {
          end(err ?? new ConnectError("stream aborted", Code.Aborted));
          if (it.throw) return await it.throw(err);
          throw err;
        },
      };
    },
  };
}

/** Server side: continues the caller's trace (its `traceparent`) or starts one. Outermost interceptor. */
export function tracingServerInterceptor(): Interceptor {
  return (next) => async (req) => {
    const parent = propagation.extract(context.active(), req.header, headerGetter);
    const service = req.service.typeName;
    const method = req.method.name;
    const span = tracer.startSpan(`${service}/${method}`, { kind: SpanKind.SERVER, attributes: attributes(service, method) }, parent);
    const ctx = trace.setSpan(parent, span);
    try {
      const res = await context.with(ctx, () => next(req));
      if (!res.stream) {
        ended(span, undefined, true);
        return res;
      }
      return { ...res, message: traced(ctx, span, res.message, true) };
    } catch (err) {
      ended(span, err, true);
      throw err;
    }
  };
}

/** Client side: a span per outgoing call, its context sent as `traceparent`. */
export function tracingClientInterceptor(): Interceptor {
  return (next) => async (req) => {
    const service = req.service.typeName;
    const method = req.method.name;
    const span = tracer.startSpan(`${service}/${method}`, { kind: SpanKind.CLIENT, attributes: attributes(service, method) });
    const ctx = trace.setSpan(context.active(), span);
    propagation.inject(ctx, req.header, headerSetter);
    try {
      const res = await context.with(ctx, () => next(req));
      if (!res.stream) {
        ended(span, undefined, false);
        return res;
      }
      return { ...res, message: traced(ctx, span, res.message, false) };
    } catch (err) {
      ended(span, err, false);
      throw err;
    }
  };
}
