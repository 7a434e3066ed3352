// Traces (OpenTelemetry) from the standard OTEL_* variables, so a collector's usual setup works unchanged. Off unless an
// OTLP endpoint is named: then nothing of the SDK is loaded (lib/traces.ts). Only OTLP over HTTP with JSON bodies is
// sent (the exporter that runs on Bun without protobuf code); a protocol it cannot speak is refused at start rather
// than sent in a shape the collector would reject.
import { ConfigError, type Environment } from './values.ts'

export interface TracesConfig {
  /** Where spans are POSTed: the traces endpoint as given, or the base endpoint with /v1/traces. */
  url: string
  headers: Record<string, string>
  serviceName: string
  /** Extra resource attributes (OTEL_RESOURCE_ATTRIBUTES). */
  resource: Record<string, string>
  /** Which traces are kept (OTEL_TRACES_SAMPLER, _ARG): a root span's chance, and whether a caller's decision is followed. */
  sampler: Sampler
}

/** `root`: the share of new traces kept (1: all, 0: none); `parentBased`: a span with a parent keeps its decision. */
export interface Sampler {
  root: number
  parentBased: boolean
}

const SAMPLERS = ['always_on', 'always_off', 'traceidratio', 'parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio']

/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG as the OpenTelemetry specification names them; parentbased_always_on by default. */
function samplerFrom(env: Environment): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? '').trim().toLowerCase() || 'parentbased_always_on'
  if (!SAMPLERS.includes(name)) throw new ConfigError(`OTEL_TRACES_SAMPLER must be one of ${SAMPLERS.join(', ')}`)
  const parentBased = name.startsWith('parentbased_')
  const kind = parentBased ? name.slice('parentbased_'.length) : name
  if (kind !== 'traceidratio') return { root: kind === 'always_on' ? 1 : 0, parentBased }
  const arg = (env.OTEL_TRACES_SAMPLER_ARG ?? '').trim()
  const ratio = arg === '' ? 1 : Number(arg)
  if (!/^\d*\.?\d+$/.test(arg || '1') || !(ratio >= 0 && ratio <= 1))
    throw new ConfigError('OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of traces kept)')
  return { root: ratio, parentBased }
}

/** `key=value` pairs, comma-separated, values percent-encoded (the OTEL_EXPORTER_OTLP_HEADERS form). */
function pairs(name: string, raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {}
  for (const part of (raw ?? '').split(',')) {
    if (!part.trim()) continue
    const at = part.indexOf('=')
    if (at <= 0) throw new ConfigError(`${name} must be key=value pairs separated by commas`)
    try {
      out[decodeURIComponent(part.slice(0, at).trim())] = decodeURIComponent(part.slice(at + 1).trim())
    } catch {
      throw new ConfigError(`${name} has a badly percent-encoded pair`)
    }
  }
  return out
}

function httpUrl(name: string, raw: string): string {
  let parsed: URL
  try {
    parsed = new URL(raw)
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL`)
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new ConfigError(`${name} must be an http(s) URL`)
  return raw
}

/** The traces to send, or null: off (no endpoint, OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none). */
export function tracesFrom(env: Environment): TracesConfig | null {
  if ((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase() === 'true') return null
  const exporter = (env.OTEL_TRACES_EXPORTER ?? '').trim().toLowerCase()
  if (exporter === 'none') return null
  if (exporter !== '' && exporter !== 'otlp') throw new ConfigError('OTEL_TRACES_EXPORTER must be otlp or none')
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim()
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (!tracesEndpoint && !endpoint) return null
  const url = tracesEndpoint
    ? httpUrl('OTEL_EXPORTER_OTLP_TRACES_ENDPOINT', tracesEndpoint)
    : `${httpUrl('OTEL_EXPORTER_OTLP_ENDPOINT', endpoint!).replace(/\/+$/, '')}/v1/traces`
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = env[name]?.trim()
    if (protocol && protocol !== 'http/json')
      throw new ConfigError(`${name} must be http/json (or unset): traces are sent as OTLP/HTTP with JSON bodies`)
  }
  const resource = pairs('OTEL_RESOURCE_ATTRIBUTES', env.OTEL_RESOURCE_ATTRIBUTES)
  return {
    url,
    headers: {
      ...pairs('OTEL_EXPORTER_OTLP_HEADERS', env.OTEL_EXPORTER_OTLP_HEADERS),
      ...pairs('OTEL_EXPORTER_OTLP_TRACES_HEADERS', env.OTEL_EXPORTER_OTLP_TRACES_HEADERS),
    },
    serviceName: env.OTEL_SERVICE_NAME?.trim() || resource['service.name'] || 'trellis',
    resource,
    sampler: samplerFrom(env),
  }
}
