// WebSub (W3C Recommendation): Trellis is the hub of its own public feeds, so feed readers (Feedly, Inoreader, …) are
// told of a new entry instead of polling. A topic is a public feed in one format (/v1/feeds/{id}/feed.xml, .atom,
// .json); the feeds name the hub and themselves (routes/syndication.ts). A subscriber asks POST /v1/websub; the hub
// answers 202 and then verifies the intent out of band: a GET to the callback with a random hub.challenge, which
// the callback must echo with a 2xx, or nothing changes. Subscriptions are leased (10 days unless asked otherwise,
// between 1 hour and 30 days) and removed when the lease ends; a subscriber renews by subscribing again. Content
// distribution is websub-distribution.ts.
//
// Anyone may ask, so what a request can make this server do is bounded: the callback passes the SSRF guard of
// webhooks (public addresses only, resolved again at every request), requests waiting for verification are capped
// per callback host and in all (a flood is answered 429), a verification is tried at most 3 times, and subscriptions
// are capped per callback host and in all. A callback that never echoes a challenge costs at most its 3 GETs.
import { randomBytes } from 'node:crypto'
import type { Records } from '../store/stores.ts'
import type { TopicCallback } from '../store/websub.ts'
import { MAX_SECRET_BYTES, type TopicFormat, type WebsubIntentRecord, type WebsubRequest } from '../models/websub.ts'
import { PublicFetchFailed, requestPublic } from '../lib/public-fetch.ts'
import { newId } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'
import { distribution, type Rendered } from './websub-distribution.ts'
import { parseTopic, topicUrl } from './websub-topics.ts'
import { CLAIM_S, publicTarget } from './outbound-post.ts'

export const LEASE_S = { default: 10 * 86_400, min: 3_600, max: 30 * 86_400 }
/** Requests waiting for their verification: per callback host, and in all. */
export const MAX_WAITING = { perHost: 20, all: 1_000 }
/** Subscriptions: per callback host (a reader service subscribes all its users' feeds from one host), and in all. */
export const MAX_SUBSCRIPTIONS = { perHost: 10_000, all: 100_000 }
/** Attempts at verifying one request, and the seconds before each retry (after no answer, or a 5xx). */
const VERIFY_ATTEMPTS = 3
const VERIFY_RETRY_S = [10, 60]
export const VERIFY_TIMEOUT_S = 5
/** Verifications in flight at most. */
const VERIFYING = 32
/** The longest answer to a verification read: a challenge is 32 characters. */
const ANSWER_BYTES = 1_024

export interface WebsubDeps {
  records: Records
  /** The server's public base URL: topics and the hub are named from it, never from a request's Host. */
  publicUrl: () => string
  allowPrivate: boolean
  /** A topic's document as a reader gets it; throws when the feed is not public (inactive, taken down, gone). */
  render: (feedId: string, format: TopicFormat) => Promise<Rendered>
  retries?: { afterS: number[]; giveUpS: number } | null
  log: (msg: string, fields?: Record<string, unknown>) => void
}

const invalid = (message: string, details?: string): never => fail('INVALID_WEBSUB_REQUEST', message, details)
const busy = (): never => fail('WEBSUB_BUSY', 'too many subscription requests for now', 'retry later')

/** The lease granted for the one asked (a hint, as the recommendation has it). */
function leaseFor(asked: WebsubRequest['hub.lease_seconds']): number {
  if (asked === undefined || asked === '') return LEASE_S.default
  return Math.min(LEASE_S.max, Math.max(LEASE_S.min, Number(asked)))
}

/** The first `limit` bytes of an answer's body, as text; the rest is not read. */
async function head(response: Response, limit: number): Promise<string> {
  if (!response.body) return ''
  const reader = response.body.getReader()
  const chunks: Uint8Array[] = []
  let total = 0
  while (total < limit) {
    const { done, value } = await reader.read()
    if (done) break
    chunks.push(value)
    total += value.byteLength
  }
  await reader.cancel().catch(() => {})
  return new TextDecoder().decode(Buffer.concat(chunks).subarray(0, limit))
}

export function websubService(d: WebsubDeps) {
  const read = d.records.read
  /** No read memo depends on these tables. */
  const unkept = { unkept: true }
  const verifying = new Set<string>()

  /** An http(s) URL of a public host (checked again at every request: DNS may change), without its fragment. */
  async function vetCallback(raw: string): Promise<URL> {
    const url =
      (await publicTarget(raw, ['https:', 'http:'], d.allowPrivate, VERIFY_TIMEOUT_S * 1000)) ??
      invalid('hub.callback must be an http or https URL of a public host', 'no loopback, private or link-local address')
    url.hash = ''
    return url
  }

  /** Asks the callback to echo a challenge: whether it confirmed, refused, or may be asked again. */
  async function ask(intent: WebsubIntentRecord): Promise<'confirmed' | 'refused' | 'retry'> {
    const challenge = randomBytes(24).toString('base64url')
    const url = new URL(intent.callback)
    url.searchParams.append('hub.mode', intent.mode)
    url.searchParams.append('hub.topic', topicUrl(d.publicUrl(), intent.feed_id, intent.format))
    url.searchParams.append('hub.challenge', challenge)
    if (intent.mode === 'subscribe') url.searchParams.append('hub.lease_seconds', String(intent.lease_seconds))
    try {
      const response = await requestPublic(url, { headers: { 'user-agent': 'Trellis-WebSub' } }, d.allowPrivate, VERIFY_TIMEOUT_S * 1000)
      const answer = await head(response, ANSWER_BYTES)
      if (response.ok && answer.trim() === challenge) return 'confirmed'
      return response.status >= 500 ? 'retry' : 'refused'
    } catch (error) {
      if (error instanceof PublicFetchFailed && error.kind === 'not-public') return 'refused'
      return 'retry'
    }
  }

  async function verify(intent: WebsubIntentRecord): Promise<void> {
    const verdict = await ask(intent)
    const now = nowSeconds()
    if (verdict === 'confirmed') {
      const key: TopicCallback = { feed_id: intent.feed_id, format: intent.format, callback: intent.callback }
      return d.records.transact(async (tx) => {
        if (!(await tx.websub.dropIntent(intent.id))) return // replaced meanwhile: the newer request is verified on its own
        if (intent.mode === 'subscribe') await tx.websub.subscribe(intent, newId(), now, now + intent.lease_seconds)
        else await tx.websub.unsubscribe(key)
      }, unkept)
    }
    if (verdict === 'retry' && intent.attempts < VERIFY_ATTEMPTS) {
      const after = VERIFY_RETRY_S[Math.min(intent.attempts - 1, VERIFY_RETRY_S.length - 1)]!
      return d.records.transact((tx) => tx.websub.retryIntent(intent.id, now + after), unkept)
    }
    await d.records.transact((tx) => tx.websub.dropIntent(intent.id), unkept)
  }

  return {
    /**
     * A subscriber's request: checked now (the topic, the callback, the caps), verified later (verifyDue). An
     * unsubscribe from what is not subscribed nor asked is accepted and asks nothing.
     */
    async request(input: WebsubRequest): Promise<void> {
      const base = d.publicUrl()
      const topic = parseTopic(input['hub.topic'], base) ?? invalid('hub.topic is not a feed of this hub', `${base}/v1/feeds/{id}/feed.xml`)
      const secret = input['hub.secret'] ?? null
      if (secret !== null && Buffer.byteLength(secret) > MAX_SECRET_BYTES) invalid('hub.secret must be less than 200 bytes')
      const callback = await vetCallback(input['hub.callback'])
      const key: TopicCallback = { ...topic, callback: callback.href }
      const mode = input['hub.mode']
      const [subscribed, waiting] = await Promise.all([read.websub.subscription(key), read.websub.waiting(key)])
      if (mode === 'subscribe') {
        const feed = await read.feeds.byId(topic.feed_id)
        if (!feed?.is_active || feed.taken_down) fail('FEED_NOT_FOUND', 'feed not found', 'the topic names no public feed')
      } else if (!subscribed && !waiting) return
      const host = callback.hostname
      if (!waiting) {
        if ((await read.websub.waitingCount(host)) >= MAX_WAITING.perHost || (await read.websub.waitingCount(null)) >= MAX_WAITING.all)
          busy()
      }
      if (mode === 'subscribe' && !subscribed) {
        if (
          (await read.websub.subscribedCount(host)) >= MAX_SUBSCRIPTIONS.perHost ||
          (await read.websub.subscribedCount(null)) >= MAX_SUBSCRIPTIONS.all
        )
          busy()
      }
      const now = nowSeconds()
      await d.records.transact(
        (tx) =>
          tx.websub.request({
            id: newId(),
            mode,
            ...key,
            callback_host: host,
            secret,
            lease_seconds: leaseFor(input['hub.lease_seconds']),
            next_attempt_at: now,
            created_at: now,
          }),
        unkept,
      )
    },

    /** The job: starts the verifications due (each claimed first), without waiting for their answers; how many. */
    async verifyDue(now = nowSeconds()): Promise<number> {
      const room = VERIFYING - verifying.size
      if (room <= 0) return 0
      let started = 0
      for (const intent of await read.websub.dueIntents(now, room)) {
        if (verifying.has(intent.id)) continue
        if (!(await d.records.transact((tx) => tx.websub.claimIntent(intent.id, now, now + CLAIM_S), unkept))) continue
        verifying.add(intent.id)
        started++
        void verify({ ...intent, attempts: intent.attempts + 1 })
          .catch((error: unknown) =>
            d.log('a WebSub verification could not be recorded; it is due again once its claim lapses', {
              intent: intent.id,
              error: String(error),
            }),
          )
          .finally(() => verifying.delete(intent.id))
      }
      return started
    },

    /** The deadline job: subscriptions whose lease ended are removed; how many. */
    expire: (now = nowSeconds()) => d.records.transact((tx) => tx.websub.expire(now), unkept),

    ...distribution(d),
  }
}

export type WebsubService = ReturnType<typeof websubService>
