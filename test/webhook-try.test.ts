// Webhooks a creator can try (issue 39): POST /v1/webhooks/{id}/test sends a signed ping now and answers how it went
// (verified here with the Standard Webhooks reference library), the refusal of an http URL says so in words, and a
// development server on loopback with TRELLIS_WEBHOOKS_ALLOW_LOCAL=1 delivers to a plain http receiver on 127.0.0.1,
// which a server anywhere else refuses to start with.
import { afterAll, beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { Webhook } from 'standardwebhooks'
import { Value } from '@sinclair/typebox/value'
import { startTestServer, tempDir, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { WebhookPayload, WebhookTestResult } from '../src/models/webhook.ts'
import { receiver, silentReceiver, WEBHOOK_CERT, type Received } from './helpers/webhook-receiver.ts'

const ROOT = join(import.meta.dir, '..')

let server: TestServer
let hooks: ReturnType<typeof receiver>
let silent: ReturnType<typeof silentReceiver>
let owner: Wallet

beforeAll(async () => {
  // The test hook lets this server reach the receivers on 127.0.0.1 over https; http it still refuses.
  server = await startTestServer({ TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1', NODE_EXTRA_CA_CERTS: WEBHOOK_CERT })
  hooks = receiver((path) => (path === '/fails' ? 500 : 200))
  silent = silentReceiver()
})
// A wallet of its own for each test: at most 5 endpoints per wallet.
beforeEach(() => {
  owner = newWallet()
})
afterAll(async () => {
  hooks?.stop()
  silent?.stop()
  await server?.dispose()
})

const register = async (url: string, wallet = owner, target = server) => {
  const reply = await call(target.url, 'POST', '/v1/webhooks', { wallet, body: { url } })
  expect(reply.status).toBe(201)
  return reply.body as { id: string; secret: string }
}
const testOf = (id: string, wallet = owner, target = server) => call(target.url, 'POST', `/v1/webhooks/${id}/test`, { wallet })
const logOf = async (id: string, target = server) =>
  (await call(target.url, 'GET', `/v1/webhooks/${id}/deliveries`, { wallet: owner })).body.data as Array<Record<string, unknown>>
const schemaErrors = (schema: Parameters<typeof Value.Errors>[0], value: unknown) =>
  [...Value.Errors(schema, value)].map((e) => `${e.path}: ${e.message}`)
/** A delivery as a receiver checks it: the signature and its timestamp, and the payload model. */
const verified = (secret: string, r: Received) => {
  const event = new Webhook(secret).verify(r.body, r.headers)
  expect(schemaErrors(WebhookPayload, event)).toEqual([])
  return event
}

describe('POST /v1/webhooks/{id}/test', () => {
  test('a signed ping is delivered now: the answer says so, the receiver verifies it, the log has it', async () => {
    const hook = await register(hooks.url('/ok'))
    const reply = await testOf(hook.id)
    expect(reply.status).toBe(200)
    expect(schemaErrors(WebhookTestResult, reply.body)).toEqual([])
    expect(reply.body).toEqual({
      event_id: expect.stringMatching(/^ping_/),
      delivered: true,
      status: 200,
      error: null,
      duration_ms: expect.any(Number),
    })
    const got = hooks.received.filter((r) => r.path === '/ok')
    expect(got).toHaveLength(1)
    expect(got[0]!.headers['webhook-id']).toBe(reply.body.event_id)
    expect(verified(hook.secret, got[0]!)).toEqual({ type: 'ping', timestamp: expect.any(String), data: { webhook_id: hook.id } })
    const other = await register(hooks.url('/other'))
    expect(() => new Webhook(other.secret).verify(got[0]!.body, got[0]!.headers)).toThrow()
    expect(await logOf(hook.id)).toEqual([
      expect.objectContaining({
        id: reply.body.event_id,
        event: 'ping',
        status: 'delivered',
        attempts: 1,
        last_status: 200,
        last_error: null,
        payload: got[0]!.body,
        next_attempt_at: null,
      }),
    ])
    await Bun.sleep(1_500) // the sender's passes: a ping is never sent again
    expect(hooks.received.filter((r) => r.path === '/ok')).toHaveLength(1)
  })

  test('an endpoint answering 500: not delivered, status 500, logged failed and not retried', async () => {
    const hook = await register(hooks.url('/fails'))
    const reply = await testOf(hook.id)
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ delivered: false, status: 500, error: 'answered 500' })
    verified(hook.secret, hooks.received.find((r) => r.path === '/fails')!)
    await Bun.sleep(1_500)
    expect(hooks.received.filter((r) => r.path === '/fails')).toHaveLength(1)
    expect(await logOf(hook.id)).toEqual([
      expect.objectContaining({ event: 'ping', status: 'failed', attempts: 1, last_status: 500, last_error: 'answered 500' }),
    ])
  })

  test('an endpoint that never answers: given up at the 5 s timeout; a second test meanwhile is 429', async () => {
    const hook = await register(silent.url('/never'))
    const first = testOf(hook.id)
    await Bun.sleep(500)
    const second = await testOf(hook.id)
    expectError(second, 429, 'RATE_LIMITED')
    expect(second.body.details).toBe('an attempt at this webhook is in flight')
    expect(second.headers.get('retry-after')).toBe('5')
    const reply = await first
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ delivered: false, status: null, error: 'no answer within 5 s' })
    expect(reply.body.duration_ms).toBeGreaterThanOrEqual(4_900)
    expect(reply.body.duration_ms).toBeLessThan(7_000)
    expect((await logOf(hook.id))[0]).toMatchObject({
      event: 'ping',
      status: 'failed',
      last_status: null,
      last_error: 'no answer within 5 s',
    })
  })

  test('5 tests of one endpoint a minute; the 6th is 429 with Retry-After; another endpoint is not held back', async () => {
    const hook = await register(hooks.url('/often'))
    for (let i = 0; i < 5; i++) expect((await testOf(hook.id)).body.delivered).toBe(true)
    const refused = await testOf(hook.id)
    expectError(refused, 429, 'RATE_LIMITED')
    expect(refused.body.details).toBe('at most 5 tests of one webhook a minute')
    const retryAfter = Number(refused.headers.get('retry-after'))
    expect(retryAfter).toBeGreaterThanOrEqual(1)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(hooks.received.filter((r) => r.path === '/often')).toHaveLength(5)
    expect((await testOf((await register(hooks.url('/another'))).id)).body.delivered).toBe(true)
  })

  test("another wallet's endpoint is 403, as for the other webhook routes; unknown or removed 404; unsigned 401", async () => {
    const hook = await register(hooks.url('/mine'))
    expectError(await testOf(hook.id, newWallet()), 403, 'UNAUTHORIZED')
    expectError(await testOf(crypto.randomUUID()), 404, 'WEBHOOK_NOT_FOUND')
    expect((await call(server.url, 'POST', `/v1/webhooks/${hook.id}/test`)).status).toBe(401)
    expect((await call(server.url, 'DELETE', `/v1/webhooks/${hook.id}`, { wallet: owner })).status).toBe(204)
    expectError(await testOf(hook.id), 404, 'WEBHOOK_NOT_FOUND')
    expect(hooks.received.filter((r) => r.path === '/mine')).toHaveLength(0)
  })
})

describe('registering: the refusal says which rule the URL broke, in words', () => {
  test('http, other schemes, user:password, not a URL → 400 INVALID_WEBHOOK_URL', async () => {
    const refused = async (url: string, details: string) => {
      const reply = await call(server.url, 'POST', '/v1/webhooks', { wallet: owner, body: { url } })
      expect(reply.body).toEqual({ error: 'url must be an https URL on the public internet', code: 'INVALID_WEBHOOK_URL', details })
      expect(reply.status).toBe(400)
    }
    await refused('http://example.com/hook', 'plain http is refused: deliveries go over https only')
    await refused(`http://127.0.0.1:${hooks.port}/hook`, 'plain http is refused: deliveries go over https only')
    await refused('ftp://example.com/hook', 'it is not an https URL')
    await refused('https://user:pw@example.com/', 'it must not hold a user:password')
    await refused('not a url at all', 'it is not a URL')
  })

  test('a server without the test hook: a loopback or private host is refused, saying why', async () => {
    const strict = await startTestServer()
    try {
      const reply = await call(strict.url, 'POST', '/v1/webhooks', { wallet: owner, body: { url: hooks.url('/x') } })
      expectError(reply, 400, 'INVALID_WEBHOOK_URL')
      expect(reply.body.details).toBe('its host is a loopback, private, link-local or reserved address, or resolves to one')
    } finally {
      await strict.dispose()
    }
  })
})

describe('local webhooks on a development server (TRELLIS_WEBHOOKS_ALLOW_LOCAL=1)', () => {
  test('on loopback: said at start; an http receiver on 127.0.0.1 gets the ping and real deliveries, verified', async () => {
    const plain: Received[] = []
    const http = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      async fetch(request) {
        plain.push({
          path: new URL(request.url).pathname,
          headers: Object.fromEntries(request.headers as unknown as Iterable<[string, string]>),
          body: await request.text(),
        })
        return new Response(null, { status: 204 })
      },
    })
    const dev = await startTestServer({ TRELLIS_WEBHOOKS_ALLOW_LOCAL: '1' })
    try {
      expect(dev.logs.some((line) => line.includes('local webhooks allowed (TRELLIS_WEBHOOKS_ALLOW_LOCAL=1)'))).toBe(true)
      const creator = newWallet()
      const hook = await register(`http://127.0.0.1:${http.port}/dev`, creator, dev)
      const tested = await call(dev.url, 'POST', `/v1/webhooks/${hook.id}/test`, { wallet: creator })
      expect(tested.body).toMatchObject({ delivered: true, status: 204, error: null })
      expect(verified(hook.secret, plain[0]!)).toMatchObject({ type: 'ping', data: { webhook_id: hook.id } })
      // A real event: an entry published in the creator's feed.
      const feed = await createFeed(dev.url, creator, { name: 'developed locally' })
      const entry = await createEntry(dev.url, creator, feed.id, { content_base64: b64('hello'), title: 'local' })
      const deadline = Date.now() + 15_000
      while (plain.length < 2 && Date.now() < deadline) await Bun.sleep(100)
      expect(verified(hook.secret, plain[1]!)).toMatchObject({ type: 'entry.published', data: { entry_id: entry.id } })
      // scripts/try-webhook.ts, as docs/webhooks.md has a developer run it, against this server.
      const run = Bun.spawn([process.execPath, 'scripts/try-webhook.ts', '--url', dev.url, '--once'], {
        cwd: ROOT,
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [out, err, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited])
      expect({ code, err }).toEqual({ code: 0, err: '' })
      expect(out).toMatch(/received ping \(webhook-id ping_[^)]+\), signature verified/)
      expect(out).toContain('"delivered":true')
    } finally {
      http.stop(true)
      await dev.dispose()
    }
  }, 60_000)

  test('refused at start, in one line, unless only this machine reaches the server', async () => {
    const start = async (env: Record<string, string>) => {
      const dataDir = tempDir()
      const run = Bun.spawn([process.execPath, 'src/main.ts'], {
        cwd: ROOT,
        env: { ...process.env, TRELLIS_DATA_DIR: dataDir, TRELLIS_PORT: '0', TRELLIS_WEBHOOKS_ALLOW_LOCAL: '1', ...env },
        stdout: 'pipe',
        stderr: 'pipe',
      })
      const [stderr, code] = await Promise.all([new Response(run.stderr).text(), run.exited])
      rmSync(dataDir, { recursive: true, force: true })
      return { code, stderr }
    }
    const line = (why: string) => `trellis: TRELLIS_WEBHOOKS_ALLOW_LOCAL=1 is for a development server only this machine reaches: ${why}\n`
    expect(await start({ TRELLIS_HOST: '0.0.0.0' })).toEqual({
      code: 1,
      stderr: line('it listens on 0.0.0.0 (--host / TRELLIS_HOST must be 127.0.0.1, ::1 or localhost)'),
    })
    expect(await start({ TRELLIS_HOST: '127.0.0.1', TRELLIS_PUBLIC_URL: 'https://market.example' })).toEqual({
      code: 1,
      stderr: line('its public URL names market.example (--public-url / TRELLIS_PUBLIC_URL)'),
    })
    expect(await start({ TRELLIS_HOST: '127.0.0.1', TRELLIS_TRUST_PROXY: 'on' })).toEqual({
      code: 1,
      stderr: line('TRELLIS_TRUST_PROXY=on says a proxy forwards requests to it'),
    })
  })
})
