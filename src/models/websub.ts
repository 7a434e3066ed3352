// WebSub (W3C Recommendation, 2018): the hub's request (form-encoded, as the recommendation has it; JSON is read
// too) and what the store keeps of subscriptions and their requests. Trellis is the hub of its public feeds.
import { Type as t, type Static } from '@sinclair/typebox'
import { OneOf, Text } from './common.ts'

export const WEBSUB_MODES = ['subscribe', 'unsubscribe'] as const
export type WebsubMode = (typeof WEBSUB_MODES)[number]

/** A topic is one public feed in one format: its URL is /v1/feeds/{feed_id}/{format}. */
export const TOPIC_FORMATS = ['feed.xml', 'feed.atom', 'feed.json'] as const
export type TopicFormat = (typeof TOPIC_FORMATS)[number]

/** hub.secret: less than 200 bytes (the recommendation's bound). */
export const MAX_SECRET_BYTES = 199

export const WebsubRequest = t.Object(
  {
    'hub.mode': OneOf(WEBSUB_MODES, { description: 'subscribe or unsubscribe' }),
    'hub.topic': Text({
      minLength: 1,
      maxLength: 2048,
      description: "the feed's own URL on this server: /v1/feeds/{feed_id}/feed.xml, feed.atom or feed.json",
    }),
    'hub.callback': Text({
      minLength: 8,
      maxLength: 2048,
      description: 'http or https URL of a public host (no loopback, private or link-local address, no user:password)',
    }),
    'hub.lease_seconds': t.Optional(
      t.Union([t.String({ pattern: '^[0-9]{1,10}$' }), t.Integer({ minimum: 0, maximum: 9_999_999_999 })], {
        description: 'the lease asked for, in seconds: 10 days when absent, at least 1 hour and at most 30 days',
      }),
    ),
    'hub.secret': t.Optional(
      Text({
        minLength: 1,
        maxLength: MAX_SECRET_BYTES,
        description: 'signs each content distribution: X-Hub-Signature: sha256=<hex HMAC-SHA256 of the body>; under 200 bytes',
      }),
    ),
  },
  {
    description: 'A WebSub subscription request (application/x-www-form-urlencoded, or JSON)',
    'x-media-types': ['application/x-www-form-urlencoded', 'application/json'],
  },
)
export type WebsubRequest = Static<typeof WebsubRequest>

/** A verified subscription: the topic (feed and format) and where its content goes, until `expires_at`. */
export interface WebsubSubscriptionRecord {
  id: string
  feed_id: string
  format: TopicFormat
  callback: string
  callback_host: string
  secret: string | null
  lease_seconds: number
  expires_at: number
  failures: number
  resting_until: number
  created_at: number
  updated_at: number
}

/** A request waiting for its verification of intent (next_attempt_at is also a verifier's claim on it). */
export interface WebsubIntentRecord {
  id: string
  mode: WebsubMode
  feed_id: string
  format: TopicFormat
  callback: string
  callback_host: string
  secret: string | null
  lease_seconds: number
  attempts: number
  next_attempt_at: number
  created_at: number
}

/** A distribution due: the subscription's topic and callback, and how it went so far. */
export interface WebsubDeliveryRecord {
  id: string
  subscription_id: string
  entry_id: string
  attempts: number
  created_at: number
  feed_id: string
  format: TopicFormat
  callback: string
  secret: string | null
  failures: number
}
