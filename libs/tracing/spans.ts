// Spans around the work that is not an RPC: an ADN HTTP call, a SQL transaction, a JetStream message.
// No-ops when tracing is off (the API without an SDK hands out non-recording spans).
import { context, propagation, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span } from "@opentelemetry/api";

const tracer = trace.getTracer("malha");

export { SpanKind };

/**
 * Runs `fn` inside a new span (a child of the active one, or of `parent`), ends it when `fn` settles and
 * marks it failed if `fn` throws. `fn` may add attributes through the span it gets.
 */
export async function inSpan<T>(
  name: string,
  opts: { kind: SpanKind; attributes?: Attributes; parent?: Context },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(name, { kind: opts.kind, ...(opts.attributes ? { attributes: opts.attributes } : {}) }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.recordException(err as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.message ?? String(err) });
    throw err;
  } finally {
    span.end();
  }
}

/** The active context as W3C headers (`traceparent`, `tracestate`), for a message that crosses a broker. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** The context a message's headers carry (or the active one when they carry none). */
export function contextFrom(get: (key: string) => string | undefined): Context {
  return propagation.extract(context.active(), null, { keys: () => ["traceparent", "tracestate"], get: (_c, key) => get(key) });
}
