// Spans around the work that is not an RPC: an ADN HTTP call, a SQL transaction, a JetStream message.
// No-ops when tracing is off (the API without an SDK hands out non-recording spans).
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
  type SpanContext,
} from "@opentelemetry/api";

const tracer = trace.getTracer("malha");

export { ROOT_CONTEXT, SpanKind };
export type { SpanContext };

/**
 * Runs `fn` inside a new span (a child of the active one, or of `parent`), ends it when `fn` settles and
 * marks it failed if `fn` throws. `fn` may add attributes through the span it gets. `links` name spans of
 * other traces this work is done for (a batch call serving many runs).
 */
export async function inSpan<T>(
  name: string,
  opts: { kind: SpanKind; attributes?: Attributes; parent?: Context; links?: Link[] },
  fn: (span: Span) => Promise<T>,
): Promise<T> {
  const parent = opts.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    { kind: opts.kind, ...(opts.attributes ? { attributes: opts.attributes } : {}), ...(opts.links ? { links: opts.links } : {}) },
    parent,
  );
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
