// The OTEL_* variables as config/traces.ts reads them (the standard meanings, so a collector's usual setup works), and
// a real server whose collector wants a token: the headers variable carries it, and a refusal is said in a log line
// rather than dropped in silence.
import { describe, expect, test } from 'bun:test'
import { tracesFrom } from '../src/config/traces.ts'
import { ConfigError } from '../src/config/values.ts'
import { startTestServer } from '../dev/server.ts'

describe('tracesFrom', () => {
  test('off without an endpoint, with OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none', () => {
    expect(tracesFrom({})).toBeNull()
    expect(tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' })).toBeNull()
    expect(tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' })).toBeNull()
    expect(tracesFrom({ OTEL_SDK_DISABLED: 'false', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })).not.toBeNull()
  })

  test('the sampler: parentbased_always_on by default; the specification names, a ratio from OTEL_TRACES_SAMPLER_ARG', () => {
    const sampler = (env: Record<string, string>) => tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', ...env })!.sampler
    expect(sampler({})).toEqual({ root: 1, parentBased: true })
    expect(sampler({ OTEL_TRACES_SAMPLER: 'always_off' })).toEqual({ root: 0, parentBased: false })
    expect(sampler({ OTEL_TRACES_SAMPLER: 'PARENTBASED_ALWAYS_OFF' })).toEqual({ root: 0, parentBased: true })
    expect(sampler({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' })).toEqual({ root: 0.25, parentBased: false })
    expect(sampler({ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio' })).toEqual({ root: 1, parentBased: true })
  })

  test('the base endpoint gets /v1/traces; the traces endpoint is used as given and wins', () => {
    expect(tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318/' })!.url).toBe('http://c:4318/v1/traces')
    expect(tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'https://c/otlp' })!.url).toBe('https://c/otlp/v1/traces')
    const both = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://t:9/in' }
    expect(tracesFrom(both)!.url).toBe('http://t:9/in')
  })

  test('headers (percent-decoded, the traces ones over the common ones), service name and resource attributes', () => {
    const traces = tracesFrom({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318',
      OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20abc, x-team = eu ',
      OTEL_EXPORTER_OTLP_TRACES_HEADERS: 'x-team=us',
      OTEL_RESOURCE_ATTRIBUTES: 'deployment.environment=prod,service.name=from-attributes',
    })!
    expect(traces.headers).toEqual({ authorization: 'Bearer abc', 'x-team': 'us' })
    expect(traces.serviceName).toBe('from-attributes')
    expect(traces.resource['deployment.environment']).toBe('prod')
    const named = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SERVICE_NAME: 'shop', OTEL_RESOURCE_ATTRIBUTES: 'service.name=x' }
    expect(tracesFrom(named)!.serviceName).toBe('shop')
    expect(tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })!.serviceName).toBe('trellis')
  })

  test('refused, naming the variable: another protocol or exporter, a URL that is not http(s), a headers list that is not pairs', () => {
    const refusals: [Record<string, string>, RegExp][] = [
      [{ OTEL_EXPORTER_OTLP_PROTOCOL: 'http/protobuf' }, /^OTEL_EXPORTER_OTLP_PROTOCOL must be http\/json/],
      [{ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: 'grpc' }, /^OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be http\/json/],
      [{ OTEL_TRACES_EXPORTER: 'zipkin' }, /^OTEL_TRACES_EXPORTER must be otlp or none/],
      [{ OTEL_EXPORTER_OTLP_HEADERS: 'just-a-token' }, /^OTEL_EXPORTER_OTLP_HEADERS must be key=value pairs/],
      [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'collector:4318' }, /^OTEL_EXPORTER_OTLP_TRACES_ENDPOINT must be an http\(s\) URL/],
      [{ OTEL_TRACES_SAMPLER: 'jaeger_remote' }, /^OTEL_TRACES_SAMPLER must be one of always_on, always_off, traceidratio,/],
      [{ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '2' }, /^OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1/],
      [{ OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: 'half' }, /^OTEL_TRACES_SAMPLER_ARG must be/],
    ]
    for (const [env, message] of refusals) {
      const read = () => tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', ...env })
      expect(read).toThrow(ConfigError)
      expect(read).toThrow(message)
    }
    expect(() => tracesFrom({ OTEL_EXPORTER_OTLP_ENDPOINT: 'ftp://c' })).toThrow(/^OTEL_EXPORTER_OTLP_ENDPOINT must be an http\(s\) URL/)
  })
})

test('a collector that wants a token: refused without it (one warning line), and sent with OTEL_EXPORTER_OTLP_HEADERS', async () => {
  const got: string[] = []
  const collector = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request) {
      const token = request.headers.get('authorization') ?? '-'
      got.push(token)
      return new Response(null, { status: token === 'Bearer s3cret' ? 200 : 401 })
    },
  })
  const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${collector.port}` }
  const without = await startTestServer(endpoint)
  const withToken = await startTestServer({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: 'authorization=Bearer%20s3cret' })
  try {
    for (const s of [without, withToken]) expect((await fetch(`${s.url}/health`)).status).toBe(200)
    const deadline = Date.now() + 15_000
    const warned = () => without.logs.filter((l) => l.includes('traces could not be sent to the collector'))
    while ((warned().length === 0 || !got.includes('Bearer s3cret')) && Date.now() < deadline) await Bun.sleep(100)
    expect(got).toContain('-')
    expect(got).toContain('Bearer s3cret')
    expect(warned()).toHaveLength(1)
    expect(JSON.parse(warned()[0]!).level).toBe('warn')
    expect(withToken.logs.some((l) => l.includes('traces could not be sent'))).toBe(false)
  } finally {
    await without.dispose()
    await withToken.dispose()
    collector.stop(true)
  }
})
