// Traces: the small interface every layer calls, over whichever tracer the server installed at start (ops/traces-otlp.ts,
// the OpenTelemetry SDK, loaded only when an OTLP endpoint is configured). Off, the default, there is no tracer: each
// call below is one null check and then the work itself, so untraced code pays nothing it could measure (the request
// wrapper goes further and is built without any of it: edge/request-wrapper.ts).

export type Attributes = Record<string, string | number | boolean>
export type SpanKind = 'server' | 'client' | 'internal'

/** A span while it runs: more attributes as they are learned, and a failure that marks it. */
export interface OpenSpan {
  set(key: string, value: string | number | boolean): void
  fail(message: string): void
}

export interface Tracer {
  /**
   * Runs `work` in a span, the child of the span running now (or of `parent`, a W3C traceparent header's value, for
   * a request that came with one); ended when `work` settles, and marked failed when it throws.
   */
  span<T>(
    name: string,
    attributes: Attributes,
    work: (span: OpenSpan) => T | Promise<T>,
    options?: { kind?: SpanKind; parent?: string | null },
  ): Promise<T>
  /** The trace context of the span running now, as W3C headers (traceparent, tracestate) for an outbound call. */
  headers(): Record<string, string>
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>
}

let installed: Tracer | null = null

/** The tracer, or null: tracing is off. */
export const tracer = (): Tracer | null => installed

/** Installs the tracer for this process (null: off again). */
export function installTracer(t: Tracer | null): void {
  installed = t
}

/** `work` in a span when tracing is on; otherwise just `work`. */
export function traced<T>(name: string, attributes: Attributes, work: () => Promise<T>, kind: SpanKind = 'internal'): Promise<T> {
  return installed === null ? work() : installed.span(name, attributes, work, { kind })
}

/** `headers` with the running span's traceparent added when tracing is on (the same object when off). */
export function withTraceContext(headers: Record<string, string>): Record<string, string> {
  return installed === null ? headers : { ...headers, ...installed.headers() }
}
