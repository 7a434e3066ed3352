// The tracer over the OpenTelemetry SDK, sending spans as OTLP/HTTP JSON to the configured collector. Loaded by
// server.ts with a dynamic import only when traces are on: a server without an endpoint never evaluates this file or
// the SDK. The SDK's own context manager and global registration are not used: the running span is kept in an
// AsyncLocalStorage here (it follows awaits on Bun as on Node), and parents are passed to the tracer explicitly.
import { AsyncLocalStorage } from 'node:async_hooks'
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  defaultTextMapGetter,
  defaultTextMapSetter,
  trace,
  type Context,
  type Span,
} from '@opentelemetry/api'
import { ExportResultCode, W3CTraceContextPropagator } from '@opentelemetry/core'
import { resourceFromAttributes } from '@opentelemetry/resources'
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace'
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http'
import type { TracesConfig } from '../config.ts'
import type { OpenSpan, SpanKind as Kind, Tracer } from '../lib/traces.ts'

const KINDS: Record<Kind, SpanKind> = { server: SpanKind.SERVER, client: SpanKind.CLIENT, internal: SpanKind.INTERNAL }
/** A batch goes out at least this often, so a trace is at the collector within seconds of its request. */
const EXPORT_DELAY_MS = 1000

type Warn = (message: string, fields: Record<string, unknown>) => void

/** The SDK's sampler for the configured one (config/traces.ts). */
function samplerOf({ root, parentBased }: TracesConfig['sampler']): Sampler {
  const forRoots = root >= 1 ? new AlwaysOnSampler() : root <= 0 ? new AlwaysOffSampler() : new TraceIdRatioBasedSampler(root)
  return parentBased ? new ParentBasedSampler({ root: forRoots }) : forRoots
}

export function otlpTracer(config: TracesConfig, version: string, warn: Warn): Tracer {
  const provider = new TracerProvider({
    sampler: samplerOf(config.sampler),
    resource: resourceFromAttributes({ ...config.resource, 'service.name': config.serviceName, 'service.version': version }),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: toldOfFailures(new OTLPTraceExporter({ url: config.url, headers: config.headers }), warn),
        scheduledDelayMillis: EXPORT_DELAY_MS,
      }),
    ],
  })
  const tracer = provider.getTracer('trellis', version)
  const propagator = new W3CTraceContextPropagator()
  const running = new AsyncLocalStorage<Context>()

  const parentOf = (traceparent: string | null | undefined): Context => {
    if (!traceparent) return running.getStore() ?? ROOT_CONTEXT
    // A caller's trace continues here; a malformed header is ignored (the span starts a trace of its own).
    return propagator.extract(ROOT_CONTEXT, { traceparent }, defaultTextMapGetter)
  }

  return {
    async span(name, attributes, work, options = {}) {
      const parent = parentOf(options.parent)
      const span = tracer.startSpan(name, { kind: KINDS[options.kind ?? 'internal'], attributes }, parent)
      const open = openSpan(span)
      try {
        return await running.run(trace.setSpan(parent, span), () => work(open))
      } catch (error) {
        open.fail(String((error as Error)?.message ?? error).split('\n')[0]!)
        throw error
      } finally {
        span.end()
      }
    },
    headers() {
      const carrier: Record<string, string> = {}
      const current = running.getStore()
      if (current) propagator.inject(current, carrier, defaultTextMapSetter)
      return carrier
    },
    shutdown: () => provider.shutdown(),
  }
}

/**
 * The exporter, saying when spans stop reaching the collector and when they reach it again: the SDK alone drops them
 * in silence (a wrong endpoint or token would look like a quiet server). One line per change, not per batch.
 */
function toldOfFailures(exporter: SpanExporter, warn: Warn): SpanExporter {
  let failing = false
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        const failed = result.code !== ExportResultCode.SUCCESS
        if (failed && !failing) warn('traces could not be sent to the collector', { spans: spans.length, error: String(result.error) })
        if (!failed && failing) warn('traces reach the collector again', {})
        failing = failed
        done(result)
      })
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  }
}

function openSpan(span: Span): OpenSpan {
  return {
    set: (key, value) => void span.setAttribute(key, value),
    fail: (message) => void span.setStatus({ code: SpanStatusCode.ERROR, message: message.slice(0, 200) }),
  }
}
