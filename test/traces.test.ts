// Traces (OpenTelemetry over OTLP/HTTP JSON), received by a collector on loopback from a real server process (the
// compiled executable under npm test: the SDK runs on Bun and from the bundle): a paid request on a real chain, settled
// by a facilitator, is one trace holding the request's span (route, status), the settlement, the facilitator calls,
// chain calls and records; a caller's traceparent continues its trace and reaches the facilitator; a webhook
// delivery carries its span's traceparent. Without an endpoint (or with OTEL_SDK_DISABLED) nothing is sent.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { devKey, encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { startFacilitator } from './helpers/facilitator.ts'
import { receiver, WEBHOOK_CERT } from './helpers/webhook-receiver.ts'

const PRICE = 10_000n
const CONTENT_ROUTE = 'GET /v1/feeds/:feed_id/entries/:entry_id/content'

interface Span {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  attributes: Record<string, unknown>
  status: number
  service: string
}

/** An OTLP/HTTP collector on 127.0.0.1 keeping every span it is sent (JSON encoding), flattened. */
function collector() {
  const spans: Span[] = []
  let posts = 0
  const value = (v: Record<string, unknown>) => v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : v.boolValue)
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      if (request.method !== 'POST' || new URL(request.url).pathname !== '/v1/traces') return new Response('no', { status: 404 })
      posts++
      const body = (await request.json()) as any
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource.attributes.find((a: any) => a.key === 'service.name')?.value.stringValue
        for (const ss of rs.scopeSpans ?? [])
          for (const s of ss.spans ?? [])
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              attributes: Object.fromEntries((s.attributes ?? []).map((a: any) => [a.key, value(a.value)])),
              status: s.status?.code ?? 0,
              service,
            })
      }
      return Response.json({})
    },
  })
  return { spans, posts: () => posts, url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

async function until<T>(what: string, check: () => T | undefined | false, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms
  for (;;) {
    const value = check()
    if (value) return value
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

const hex = (bytes: number) => Buffer.from(crypto.getRandomValues(new Uint8Array(bytes))).toString('hex')
/** The start line's fields (the `listening` line, JSON). */
const startLine = (server: TestServer) => JSON.parse(server.logs.find((l) => l.includes('"listening"'))!)

let chain: TestChain
let otlp: ReturnType<typeof collector>
let facilitator: ReturnType<typeof startFacilitator>
let hooks: ReturnType<typeof receiver>
let server: TestServer
let creator: Wallet
let feed: { id: string }

beforeAll(async () => {
  chain = await startChain()
  otlp = collector()
  facilitator = startFacilitator(chain, devKey(5))
  hooks = receiver(() => 200)
  server = await startTestServer({
    ...chain.env,
    TRELLIS_SETTLEMENT: 'facilitator',
    TRELLIS_RELAYER_KEY: '',
    TRELLIS_FACILITATOR_URL: facilitator.url,
    TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1',
    NODE_EXTRA_CA_CERTS: WEBHOOK_CERT,
    OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_SERVICE_NAME: 'trellis-under-test',
  })
  creator = newWallet()
  feed = await createFeed(server.url, creator, { name: 'traced sales' })
})
afterAll(async () => {
  await server?.dispose()
  hooks?.stop()
  facilitator?.stop()
  otlp?.stop()
  await chain?.stop()
})

/** Buys a fresh paid entry with a v1 payment header, with `headers` added (a traceparent). */
async function buy(headers: Record<string, string> = {}) {
  const entry = await createEntry(server.url, creator, feed.id, {
    content_base64: b64('traced content'),
    is_free: false,
    price: { amount: String(PRICE) },
  })
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const payment = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE }))
  const reply = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, {
    headers: { 'x-payment': payment, ...headers },
  })
  return { status: reply.status, body: await reply.text(), requestId: reply.headers.get('x-request-id') }
}

/** The finished request span of a paid content request matching `which`, and every span of its trace so far. */
async function paidTrace(which: (span: Span) => boolean) {
  const root = await until('the request span', () =>
    otlp.spans.find((s) => s.name === CONTENT_ROUTE && s.attributes['http.response.status_code'] === 200 && which(s)),
  )
  // The request span ends last of its own; its children were exported with it or before.
  const names = () => otlp.spans.filter((s) => s.traceId === root.traceId).map((s) => s.name)
  await until('the settlement span', () => names().includes('payment settlement'))
  return { root, trace: otlp.spans.filter((s) => s.traceId === root.traceId) }
}

describe('traces on (OTEL_EXPORTER_OTLP_ENDPOINT)', () => {
  test('the start line names the collector, and job runs are traced', async () => {
    expect(startLine(server).traces).toBe(otlp.url)
    const job = await until('a job span', () => otlp.spans.find((s) => s.name.startsWith('job ')))
    expect(job.service).toBe('trellis-under-test')
    expect(job.parentSpanId).toBeUndefined()
  })

  test('a paid request is one trace: request (route, status) → settlement → verify, settle, chain calls, records', async () => {
    const bought = await buy()
    expect(bought.status).toBe(200)
    expect(bought.body).toBe('traced content')
    const { root, trace } = await paidTrace(() => true)
    expect(root.parentSpanId).toBeUndefined()
    expect(root.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.route': '/v1/feeds/:feed_id/entries/:entry_id/content' })
    expect(root.service).toBe('trellis-under-test')
    const byName = (name: string) => trace.filter((s) => s.name === name)
    const settlement = byName('payment settlement')[0]!
    expect(settlement.parentSpanId).toBe(root.spanId)
    expect(settlement.attributes['payment.outcome']).toBe('paid')
    for (const name of ['x402 verify', 'x402 settle']) {
      expect(byName(name)).toHaveLength(1)
      expect(byName(name)[0]!.parentSpanId).toBe(settlement.spanId)
      expect(byName(name)[0]!.attributes).toMatchObject({ 'x402.settlement': 'facilitator' })
    }
    expect(byName('x402 settle')[0]!.attributes['x402.outcome']).toBe('claimed')
    // The chain proves the facilitator's claim: JSON-RPC calls, each a span named by its method.
    const chainCalls = trace.filter((s) => s.name.startsWith('chain eth_'))
    expect(chainCalls.length).toBeGreaterThan(0)
    for (const c of chainCalls) expect(c.attributes['rpc.method']).toBe(c.name.slice('chain '.length))
    const records = trace.filter((s) => s.name === 'db transaction' || s.name === 'db single write')
    expect(records.length).toBeGreaterThan(0)
    expect(records[0]!.attributes['db.system.name']).toBe(process.env.TRELLIS_TEST_POSTGRES ? 'postgresql' : 'sqlite')
    // Every span of the trace hangs from the request's.
    const ids = new Set(trace.map((s) => s.spanId))
    for (const s of trace) if (s !== root) expect(ids.has(s.parentSpanId!)).toBe(true)
    console.log(`paid request trace: ${trace.length} spans: ${[...new Set(trace.map((s) => s.name))].join(', ')}`)
  })

  test("a caller's traceparent continues its trace, and the facilitator calls carry it on", async () => {
    const traceId = hex(16)
    const parentId = hex(8)
    const bought = await buy({ traceparent: `00-${traceId}-${parentId}-01` })
    expect(bought.status).toBe(200)
    const { root, trace } = await paidTrace((s) => s.traceId === traceId)
    expect(root.parentSpanId).toBe(parentId)
    expect(root.attributes['trellis.request_id']).toBe(bought.requestId!)
    const sent = facilitator.traceparents.filter((t) => t.includes(traceId))
    expect(sent.map((t) => t.split(' ')[0])).toEqual(['/verify', '/settle'])
    // Each facilitator call names its own span (x402 verify, x402 settle) as the parent.
    for (const t of sent) {
      const spanId = t.split('-')[2]
      expect(trace.find((s) => s.spanId === spanId)?.name).toBe(t.startsWith('/verify') ? 'x402 verify' : 'x402 settle')
    }
  })

  test('a malformed traceparent is ignored: the request starts a trace of its own', async () => {
    const reply = await fetch(`${server.url}/health`, { headers: { traceparent: '00-not-a-trace-01' } })
    expect(reply.status).toBe(200)
    const span = await until('the health span', () => otlp.spans.find((s) => s.name === 'GET /health'))
    expect(span.parentSpanId).toBeUndefined()
    expect(span.attributes['http.response.status_code']).toBe(200)
  })

  test("a webhook delivery is a span, and the POST carries that span's traceparent", async () => {
    const hook = await call(server.url, 'POST', '/v1/webhooks', { wallet: creator, body: { url: hooks.url('/traced') } })
    expect(hook.status).toBe(201)
    const traceId = hex(16)
    const tried = await call(server.url, 'POST', `/v1/webhooks/${hook.body.id}/test`, {
      wallet: creator,
      headers: { traceparent: `00-${traceId}-${hex(8)}-01` },
    })
    expect(tried.status).toBe(200)
    const delivered = await until('the ping', () => hooks.received.find((r) => r.path === '/traced'))
    const [, sentTrace, sentSpan, flags] = delivered.headers.traceparent!.split('-')
    expect(sentTrace).toBe(traceId)
    expect(flags).toBe('01')
    const span = await until('the delivery span', () => otlp.spans.find((s) => s.spanId === sentSpan))
    expect(span).toMatchObject({ name: 'webhook delivery', traceId, attributes: { 'http.response.status_code': 200 } })
  })
})

test("local settlement: the relayer's transaction is sent inside the settle span (eth_sendRawTransaction)", async () => {
  const local = await startTestServer({ ...chain.env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url })
  try {
    const owner = newWallet()
    const own = await createFeed(local.url, owner)
    const entry = await createEntry(local.url, owner, own.id, { content_base64: b64('local'), is_free: false, price: { amount: '10000' } })
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const payment = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE }))
    const reply = await fetch(`${local.url}/v1/feeds/${own.id}/entries/${entry.id}/content`, { headers: { 'x-payment': payment } })
    expect(reply.status).toBe(200)
    const settle = await until('the local settle span', () =>
      otlp.spans.find((s) => s.name === 'x402 settle' && s.attributes['x402.settlement'] === 'local'),
    )
    expect(settle.attributes['x402.outcome']).toBe('claimed')
    const sent = await until('the sent transaction', () =>
      otlp.spans.find((s) => s.traceId === settle.traceId && s.name === 'chain eth_sendRawTransaction'),
    )
    // Under the settle span, however deep viem's calls nest it.
    const parents = new Map(otlp.spans.map((s) => [s.spanId, s.parentSpanId]))
    let up: string | undefined = sent.parentSpanId
    while (up && up !== settle.spanId) up = parents.get(up)
    expect(up).toBe(settle.spanId)
  } finally {
    await local.dispose()
  }
})

describe('traces off', () => {
  test('without an endpoint, or with one and OTEL_SDK_DISABLED=true, nothing is sent and the start line says off', async () => {
    const quiet = collector()
    const plain = await startTestServer({})
    const disabled = await startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: quiet.url, OTEL_SDK_DISABLED: 'true' })
    try {
      for (const s of [plain, disabled]) {
        expect(startLine(s).traces).toBe('off')
        const reply = await fetch(`${s.url}/health`, { headers: { traceparent: `00-${hex(16)}-${hex(8)}-01` } })
        expect(reply.status).toBe(200)
      }
      await Bun.sleep(2_500) // more than a batch's delay
      expect(quiet.posts()).toBe(0)
    } finally {
      await plain.dispose()
      await disabled.dispose()
      quiet.stop()
    }
  })

  test("sampled: none of a server's own traces at ratio 0, but a caller's sampled trace is followed (parent-based)", async () => {
    const sink = collector()
    const sampled = await startTestServer({
      OTEL_EXPORTER_OTLP_ENDPOINT: sink.url,
      OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
      OTEL_TRACES_SAMPLER_ARG: '0',
    })
    try {
      for (let i = 0; i < 5; i++) expect((await fetch(`${sampled.url}/health`)).status).toBe(200)
      const traceId = hex(16)
      const followed = await fetch(`${sampled.url}/health`, { headers: { traceparent: `00-${traceId}-${hex(8)}-01` } })
      expect(followed.status).toBe(200)
      const unsampled = hex(16)
      await fetch(`${sampled.url}/health`, { headers: { traceparent: `00-${unsampled}-${hex(8)}-00` } })
      await until('the followed trace', () => sink.spans.some((span) => span.traceId === traceId))
      await Bun.sleep(1_500) // another batch's delay: nothing else comes
      expect(new Set(sink.spans.map((span) => span.traceId))).toEqual(new Set([traceId]))
    } finally {
      await sampled.dispose()
      sink.stop()
    }
  })

  test('a protocol the exporter cannot speak is refused at start', async () => {
    const refused = startTestServer({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:1', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })
    await expect(refused).rejects.toThrow(/OTEL_EXPORTER_OTLP_PROTOCOL must be http\/json/)
  })
})
