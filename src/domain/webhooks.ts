// Sale webhooks: a creator registers HTTPS endpoints (at most 5) and is told of each sale recorded in the ledger,
// each paid entry whose early access ended, each pass sold and each holder's pass run out. The events wait in an
// outbox the database writes with them (migrations 014, 022), so a paid request spends no time on them and no crash
// loses one; the leader's job sends what is due, signed the Standard Webhooks way, and retries with backoff for 24
// hours. The delivery id (webhook-id) stays the same on every attempt, and a delivery is sent by one sender at a time
// and never again once an answer 2xx was recorded. Endpoints that fail (wallets are free, so anyone may register many
// that never answer) delay no other endpoint: each pass takes one delivery per endpoint, an endpoint whose attempt
// failed rests (its circuit open) as long as a delivery would before its next try, and the attempts of failing
// endpoints have slots of their own. An owner may also test an endpoint: a signed `ping` sent at once, answered with
// how it went and written to the log (never retried), a few a minute.
import { randomBytes } from 'node:crypto'
import { Webhook as Signature } from 'standardwebhooks'
import type { Records } from '../store/stores.ts'
import type { AttemptOutcome, DueDelivery } from '../store/webhooks.ts'
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../models/records.ts'
import { PublicFetchFailed } from '../lib/public-fetch.ts'
import { endpointUrl } from './webhook-url.ts'
import { WEBHOOK_EVENTS, type CreateWebhook, type WebhookTestResult } from '../models/webhook.ts'
import { payloadOf } from './webhook-payloads.ts'
import { newId } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { DomainError, fail } from './errors.ts'
import type { Signer } from './auth.ts'
import { CLAIM_S, isSuccess, outboundSender, postPublic, type Retries } from './outbound-post.ts'
import { tracer, withTraceContext } from '../lib/traces.ts'

export const MAX_WEBHOOKS_PER_WALLET = 5

/** A receiver answers at once and does its work after (Standard Webhooks' advice): one that does not is failing. */
export const ATTEMPT_TIMEOUT_S = 5
/**
 * Every fetch of the process shares Bun's limit of requests in flight (BUN_CONFIG_MAX_HTTP_REQUESTS, 256 unless set
 * at start): one past it waits until another ends. Attempts at endpoints that never answer hold their slot until
 * their timeout, so all the attempts in flight stay FETCH_HEADROOM below the limit, left to the server's own requests:
 * the chain's RPC above all (a settlement's calls, one after another, then its receipt polls), each of which would
 * otherwise wait out a hanging attempt, until the settlement's receipt wait ran out (a 503 to a buyer who paid).
 */
const FETCH_SLOTS = Number(process.env.BUN_CONFIG_MAX_HTTP_REQUESTS) || 256
const FETCH_HEADROOM = 64
export const MAX_IN_FLIGHT = Math.max(64, FETCH_SLOTS - FETCH_HEADROOM)
/**
 * Attempts in flight at most (MAX_IN_FLIGHT in all), one per endpoint, in two pools: endpoints in good standing (the
 * last attempt got a 2xx, or there was none), and endpoints whose last attempt failed. A failing endpoint never holds
 * a slot a good one waits for; an attempt still unanswered after SLOW_AFTER_MS counts among the failing ones' from
 * then on (it goes on to its timeout), so an endpoint that never answers holds a good slot once, that long, and then
 * rests.
 */
const IN_FLIGHT = { good: MAX_IN_FLIGHT - 32, failing: 32 }
/** How long the delivery log keeps a finished delivery. */
export const LOG_KEPT_S = 30 * 86_400
/** Rows a statement of the log's cleanup removes: the writer is never held long. */
const FORGET_BATCH = 1_000

/** Tests (POST …/test) of one endpoint in TEST_WINDOW_S at most, and in flight on this server at most. */
export const TESTS_PER_WINDOW = 5
const TEST_WINDOW_S = 60
const TESTS_IN_FLIGHT = 16

export interface WebhookDeps {
  records: Records
  network: string
  /** The test hook TRELLIS_TEST_ALLOW_PRIVATE_FETCH: https to loopback and private hosts too. */
  allowPrivate: boolean
  /** TRELLIS_WEBHOOKS_ALLOW_LOCAL (a development server on loopback only): plain http, and loopback and private hosts. */
  local?: boolean
  retries?: Retries | null
  log: (msg: string, fields?: Record<string, unknown>) => void
}

/** A test refused for now: 429, and when to try again. */
const refuseTest = (details: string, retryAfterS: number): never => {
  throw new DomainError('RATE_LIMITED', 'this webhook cannot be tested again yet', details, retryAfterS)
}

/** What the delivery log tells the endpoint's owner of a failed request: never an address the server resolved or tried. */
function outwardReason(error: unknown): string {
  if (!(error instanceof PublicFetchFailed)) return 'could not connect to the endpoint'
  const code = error.code && /^[A-Za-z_]{1,40}$/.test(error.code) ? ` (${error.code})` : ''
  return {
    unresolved: "the endpoint's host name does not resolve",
    'not-public': "the endpoint's address is not public",
    'timed-out': `no answer within ${ATTEMPT_TIMEOUT_S} s`,
    unreachable: `could not connect to the endpoint${code}`,
    refused: 'the request was refused',
  }[error.kind]
}

export function webhookService(d: WebhookDeps) {
  const read = d.records.read
  const local = d.local ?? false
  /** Writes no read memo depends on: they leave its results in place. */
  const unkept = { unkept: true }
  /** Endpoints with an attempt in flight, and the retry schedule. */
  const sender = outboundSender(IN_FLIGHT, d.retries, MAX_IN_FLIGHT)
  const giveUpS = sender.giveUpS
  /** When the sender last gave up what resting endpoints held past the day (once a minute is soon enough, at most). */
  let staleCheckedAt = 0
  /** What this instance's attempts came to since start, for /metrics: an alert tells endpoints failing from sends failing. */
  const counts = { delivered: 0, failed: 0, given_up: 0 }

  async function owned(signer: Signer, id: string): Promise<WebhookEndpointRecord & { secret: string }> {
    const endpoint = await read.webhooks.byId(id)
    const wallet = endpoint ? await read.wallets.byAddress(signer.address) : undefined
    if (!endpoint?.is_active) return fail('WEBHOOK_NOT_FOUND', 'webhook not found')
    if (endpoint.wallet_id !== wallet?.id) fail('UNAUTHORIZED', 'only the wallet that registered a webhook may do this')
    return endpoint
  }

  /** One signed POST of `payload` as delivery `id` to the endpoint, and what came of it. */
  async function send(endpoint: WebhookEndpointRecord & { secret: string }, id: string, payload: string): Promise<AttemptOutcome> {
    // One registered while the server allowed local webhooks is not sent plain http by a server that does not.
    if (!local && !endpoint.url.startsWith('https:'))
      return { status: null, error: 'plain http is refused: the endpoint was registered while local webhooks were allowed' }
    const sentAt = new Date()
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Trellis-Webhooks',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': new Signature(endpoint.secret).sign(id, sentAt, payload),
    }
    // With traces on, the attempt is a span and the POST carries its traceparent (the receiver may continue the trace).
    const post = () => postPublic(endpoint.url, withTraceContext(headers), payload, d.allowPrivate || local, ATTEMPT_TIMEOUT_S)
    const traces = tracer()
    const posted = await (traces === null
      ? post()
      : traces.span(
          'webhook delivery',
          { 'webhook.endpoint': endpoint.id, 'webhook.delivery': id },
          async (span) => {
            const p = await post()
            if (p.status !== null) span.set('http.response.status_code', p.status)
            if (!isSuccess(p.status)) span.fail(p.status === null ? 'not answered' : `answered ${p.status}`)
            return p
          },
          { kind: 'client' },
        ))
    const { failure } = posted
    if (posted.status === null && !(failure instanceof PublicFetchFailed && failure.kind === 'timed-out')) {
      d.log('a webhook attempt failed', {
        delivery: id,
        endpoint: endpoint.id,
        error: String((failure as Error).message)
          .split('\n')[0]!
          .slice(0, 500),
      })
    }
    return posted.status !== null
      ? { status: posted.status, error: isSuccess(posted.status) ? null : `answered ${posted.status}` }
      : { status: null, error: outwardReason(posted.failure) }
  }

  /** A signed ping to the endpoint now, written to its log once answered (never retried). */
  async function ping(endpoint: WebhookEndpointRecord & { secret: string }, now: number): Promise<WebhookTestResult> {
    const id = `ping_${newId()}`
    const payload = JSON.stringify({ type: 'ping', timestamp: new Date(now * 1000).toISOString(), data: { webhook_id: endpoint.id } })
    const started = performance.now()
    const outcome = await send(endpoint, id, payload)
    const duration_ms = Math.round(performance.now() - started)
    const delivered = isSuccess(outcome.status)
    const status = delivered ? 'delivered' : 'failed'
    const row = { id, endpoint_id: endpoint.id, payload, status, outcome, created_at: now, finished_at: nowSeconds() } as const
    await d.records.transact((tx) => tx.webhooks.logPing(row), unkept)
    return { event_id: id, delivered, status: outcome.status, error: outcome.error, duration_ms }
  }

  /** One attempt at one claimed delivery, and what it leads to. */
  async function attempt(delivery: DueDelivery, now: number): Promise<void> {
    const endpoint = (await read.webhooks.byId(delivery.endpoint_id))!
    if (!endpoint.is_active)
      return d.records.transact(
        (tx) => tx.webhooks.finish(delivery.id, 'cancelled', { status: null, error: 'the endpoint was removed' }, nowSeconds()),
        unkept,
      )
    let payload = delivery.payload
    if (payload === null) {
      const built = await payloadOf(d.records, delivery)
      payload = await d.records.transact((tx) => tx.webhooks.fixPayload(delivery.id, built), unkept)
    }
    const outcome = await send(endpoint, delivery.id, payload)
    if (isSuccess(outcome.status)) {
      counts.delivered++
      return d.records.transact(async (tx) => {
        await tx.webhooks.finish(delivery.id, 'delivered', outcome, nowSeconds())
        await tx.webhooks.endpointAnswered(endpoint.id)
      }, unkept)
    }
    // The endpoint rests as long as this delivery would before its next try, longer at each failure in a row.
    const { restUntil, next, givenUp } = sender.afterFailure(now, { ...delivery, failures: delivery.endpoint_failures })
    counts.failed++
    if (givenUp) {
      counts.given_up++
      d.log('a webhook delivery was given up after a day of retries', {
        delivery: delivery.id,
        endpoint: endpoint.id,
        error: outcome.error,
      })
    }
    await d.records.transact(async (tx) => {
      if (givenUp) await tx.webhooks.finish(delivery.id, 'failed', outcome, nowSeconds())
      else await tx.webhooks.retryAt(delivery.id, next, outcome)
      await tx.webhooks.endpointFailed(endpoint.id, restUntil)
    }, unkept)
  }

  return {
    /** Attempts delivered and failed, and deliveries given up, since start (the leader sends them all). */
    counts: (): Readonly<typeof counts> => counts,

    async register(signer: Signer, input: CreateWebhook): Promise<{ endpoint: WebhookEndpointRecord; secret: string }> {
      const url = await endpointUrl(input.url, d.allowPrivate, local)
      const events = WEBHOOK_EVENTS.filter((event) => (input.events ?? WEBHOOK_EVENTS).includes(event))
      const secret = `whsec_${randomBytes(32).toString('base64')}`
      const id = newId()
      const now = nowSeconds()
      await d.records.transact(async (tx) => {
        const walletId = await tx.wallets.ensure(newId(), signer.address, signer.network ?? d.network, now)
        await tx.feeds.lockOwner(walletId) // two registrations at once do not both see room for one more
        if ((await tx.webhooks.activeCountOf(walletId)) >= MAX_WEBHOOKS_PER_WALLET)
          fail('WEBHOOK_LIMIT_REACHED', `a wallet may register at most ${MAX_WEBHOOKS_PER_WALLET} webhooks`)
        await tx.webhooks.insert({ id, wallet_id: walletId, url, description: input.description ?? null, events, secret, created_at: now })
      })
      const { secret: _, ...endpoint } = (await read.webhooks.byId(id))!
      return { endpoint, secret }
    },

    async list(signer: Signer): Promise<WebhookEndpointRecord[]> {
      const wallet = await read.wallets.byAddress(signer.address)
      return wallet ? read.webhooks.activeOf(wallet.id) : []
    },

    async remove(signer: Signer, id: string): Promise<void> {
      await owned(signer, id)
      await d.records.transact((tx) => tx.webhooks.deactivate(id, nowSeconds()))
    },

    /**
     * A signed ping to the endpoint now, and how it went. One at a time per endpoint (none while a delivery is in
     * flight to it), TESTS_PER_WINDOW a minute, TESTS_IN_FLIGHT on this server: 429 otherwise.
     */
    async test(signer: Signer, id: string): Promise<WebhookTestResult> {
      const endpoint = await owned(signer, id)
      const now = nowSeconds()
      const recent = await read.webhooks.pingsSince(id, now - TEST_WINDOW_S + 1)
      if (recent.count >= TESTS_PER_WINDOW)
        refuseTest(`at most ${TESTS_PER_WINDOW} tests of one webhook a minute`, Math.max(1, (recent.first ?? now) + TEST_WINDOW_S - now))
      const ran = await sender.aside(id, TESTS_IN_FLIGHT, () => ping(endpoint, now))
      if ('done' in ran) return ran.done
      return refuseTest(
        ran.refused === 'busy' ? 'an attempt at this webhook is in flight' : 'too many webhook tests in flight on this server',
        ATTEMPT_TIMEOUT_S,
      )
    },

    async deliveries(signer: Signer, id: string, before: [number, string] | undefined, limit: number): Promise<WebhookDeliveryRecord[]> {
      await owned(signer, id)
      return read.webhooks.deliveries(id, before, limit)
    },

    /** The log's cleanup (a job): finished deliveries older than LOG_KEPT_S go, in batches. How many. */
    async forgetOld(now = nowSeconds()): Promise<number> {
      let removed = 0
      for (;;) {
        const batch = await d.records.transact((tx) => tx.webhooks.forget(now - LOG_KEPT_S, FORGET_BATCH), unkept)
        removed += batch
        if (batch < FORGET_BATCH) return removed
      }
    },

    /**
     * The job: starts what is due, the oldest of each endpoint that has no attempt in flight and is not resting, each
     * claimed first (so no two senders send one delivery at once), in the pool of its endpoint's standing, and returns
     * without waiting for the answers. How many it started. First it gives up what a resting endpoint held past the day.
     */
    async deliverDue(now = nowSeconds()): Promise<number> {
      if (now - staleCheckedAt >= Math.min(60, giveUpS)) {
        staleCheckedAt = now
        const stale = await d.records.transact((tx) => tx.webhooks.giveUpOld(now - giveUpS, now), unkept)
        counts.given_up += stale
        if (stale > 0) d.log('webhook deliveries were given up after a day: their endpoints kept failing', { deliveries: stale })
      }
      return sender.eachPool(async (pool, room) => {
        let started = 0
        for (const delivery of await read.webhooks.due(now, room, sender.busy(), pool === 'failing')) {
          const claim = () => d.records.transact((tx) => tx.webhooks.claim(delivery.id, now, now + CLAIM_S), unkept)
          const unrecorded = (error: unknown) =>
            d.log('a webhook attempt could not be recorded; it is due again once its claim lapses', {
              delivery: delivery.id,
              error: String(error),
            })
          if (await sender.launch(delivery.endpoint_id, pool, claim, () => attempt(delivery, now), unrecorded)) started++
        }
        return started
      })
    },
  }
}

export type WebhookService = ReturnType<typeof webhookService>
