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

/**
 * Starts a span (a child of the active one) that the caller ends: for work that is not one async function,
 * such as a delivery whose reports a run reads in its own loop.
 */
export function startSpan(name: string, kind: SpanKind): Span {
  return tracer.startSpan(name, { kind }, context.active());
}

/** Runs `fn` with `span` active: what it starts, or the trace context it sends, is the span's child. */
export function inContextOf<T>(span: Span, fn: () => T): T {
  return context.with(trace.setSpan(context.active(), span), fn);
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
