// WebSub's content distribution: an entry published (or made free) in a feed leaves one delivery per subscription of
// the feed in an outbox the database writes with the entry (migration 025), so no publication is lost and the
// publishing request waits for none; the leader's job POSTs each subscriber the topic's document as it stands (RSS,
// Atom or JSON Feed, as the topic names it) with the Link header (hub, self) and, when the subscriber gave a secret,
// X-Hub-Signature: sha256=<hex HMAC of the body>. One POST answers every delivery of that subscription found due
// before the document was rendered (it holds their entries). A subscription whose POST failed rests, none of its deliveries tried, for the
// webhooks' schedule (5 s, 5 min, 30 min, 2 h, 5 h, then 10 h) and what it was owed is given up after a day; 410
// Gone ends the subscription. As with webhooks, failing subscribers have slots of their own, apart from good ones.
import { createHmac } from 'node:crypto'
import type { Records } from '../store/stores.ts'
import type { TopicFormat, WebsubDeliveryRecord } from '../models/websub.ts'
import { PublicFetchFailed } from '../lib/public-fetch.ts'
import { nowSeconds } from '../lib/clock.ts'
import { DomainError } from './errors.ts'
import { topicLinks } from './websub-topics.ts'
import { CLAIM_S, isSuccess, outboundSender, postPublic, type Retries } from './outbound-post.ts'

/** A topic's document: its bytes and media type. */
export interface Rendered {
  body: string
  type: string
}

export interface DistributionDeps {
  records: Records
  publicUrl: () => string
  allowPrivate: boolean
  render: (feedId: string, format: TopicFormat) => Promise<Rendered>
  retries?: Retries | null
  log: (msg: string, fields?: Record<string, unknown>) => void
}

export const POST_TIMEOUT_S = 5
/** POSTs in flight at most, one per subscription: subscriptions in good standing, and those whose last POST failed. */
const IN_FLIGHT = { good: 64, failing: 16 }
/** Due rows read per POST slot: a subscription's backlog is one POST, so a pass reads a few of each. */
const DUE_PER_SUBSCRIPTION = 4

/** The signature of a distribution: the recommendation's X-Hub-Signature, with SHA-256. */
export const hubSignature = (secret: string, body: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`

export function distribution(d: DistributionDeps) {
  const read = d.records.read
  const unkept = { unkept: true }
  /** Subscriptions with a POST in flight, and the retry schedule. */
  const sender = outboundSender(IN_FLIGHT, d.retries)

  /** One POST of one claimed delivery, and what it leads to. `document`: the topic's, rendered once per pass. */
  async function send(delivery: WebsubDeliveryRecord, covered: string[], document: Promise<Rendered>, now: number): Promise<void> {
    let rendered: Rendered
    try {
      rendered = await document
    } catch (error) {
      if (!(error instanceof DomainError)) throw error
      return d.records.transact((tx) => tx.websub.drop(delivery.id), unkept) // the feed is no longer public: nothing to tell
    }
    const headers: Record<string, string> = {
      'content-type': rendered.type,
      link: topicLinks(d.publicUrl(), delivery.feed_id, delivery.format),
      'user-agent': 'Trellis-WebSub',
    }
    if (delivery.secret !== null) headers['x-hub-signature'] = hubSignature(delivery.secret, rendered.body)
    const { status, failure } = await postPublic(delivery.callback, headers, rendered.body, d.allowPrivate, POST_TIMEOUT_S)
    const error = status !== null ? `answered ${status}` : failure instanceof PublicFetchFailed ? failure.kind : 'unreachable'
    if (isSuccess(status)) return d.records.transact((tx) => tx.websub.delivered(delivery.subscription_id, covered), unkept)
    if (status === 410) {
      // The recommendation lets a hub end a subscription whose subscriber answers 410 Gone.
      return d.records.transact((tx) => tx.websub.removeById(delivery.subscription_id), unkept)
    }
    const { restUntil, next, givenUp } = sender.afterFailure(now, delivery)
    if (givenUp) d.log('a WebSub distribution was given up after a day of retries', { delivery: delivery.id, error })
    await d.records.transact(async (tx) => {
      await tx.websub.failed(delivery.subscription_id, delivery.id, next, restUntil, error)
      if (givenUp) await tx.websub.drop(delivery.id)
    }, unkept)
  }

  return {
    /**
     * The job: starts what is due, one POST per subscription with no POST in flight and not resting, its oldest
     * delivery claimed first (no two senders send one at once), without waiting for the answers; how many it started.
     * Each topic's document is rendered once per pass, after the due deliveries were read, so it holds the entries of
     * every one of them: a 2xx settles them all.
     */
    async deliverDue(now = nowSeconds()): Promise<number> {
      return sender.eachPool(async (pool, room) => {
        const due = await read.websub.dueDeliveries(now, room * DUE_PER_SUBSCRIPTION, sender.busy(), pool === 'failing')
        // Rendered after this read (never reused from a read before it), so each document holds what it settles.
        const documents = new Map<string, Promise<Rendered>>()
        const documentOf = (feedId: string, format: TopicFormat) => {
          const key = `${feedId}/${format}`
          let document = documents.get(key)
          if (!document) {
            document = d.render(feedId, format)
            document.catch(() => {}) // each send awaits it and settles its failure
            documents.set(key, document)
          }
          return document
        }
        let taken = 0
        for (const [subscriptionId, rows] of Map.groupBy(due, (row) => row.subscription_id)) {
          const delivery = rows[0]!
          if (taken >= room) continue
          const claim = () => d.records.transact((tx) => tx.websub.claimDelivery(delivery.id, now, now + CLAIM_S), unkept)
          const covered = rows.map((row) => row.id)
          const unrecorded = (error: unknown) =>
            d.log('a WebSub distribution could not be recorded; it is due again once its claim lapses', {
              delivery: delivery.id,
              error: String(error),
            })
          const sending = () => send(delivery, covered, documentOf(delivery.feed_id, delivery.format), now)
          if (await sender.launch(subscriptionId, pool, claim, sending, unrecorded)) taken++
        }
        return taken
      })
    },
  }
}
