import { context, trace } from "@opentelemetry/api";

/** The ids of the active span, for log lines; nothing when no span is active (or tracing is off). */
export function activeTraceIds(): { traceId: string; spanId: string } | undefined {
  const sc = trace.getSpan(context.active())?.spanContext();
  return sc && trace.isSpanContextValid(sc) ? { traceId: sc.traceId, spanId: sc.spanId } : undefined;
}
