import { Type as t, type Static } from '@sinclair/typebox'
import { Nullable, OneOf, Text, UnixSeconds } from './common.ts'
import { TransactionItem } from './transaction.ts'
import { Entry } from './entry.ts'
import { Feed } from './feed.ts'
import { Pass } from './pass.ts'

export const WEBHOOK_EVENTS = ['sale.recorded', 'entry.expired', 'pass.sold', 'pass.expired', 'entry.published'] as const
export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]
const Event = OneOf(WEBHOOK_EVENTS)
/** What a delivery may be: an event an endpoint subscribes to, or the `ping` its owner asked for (POST …/test). */
const DeliveredEvent = OneOf([...WEBHOOK_EVENTS, 'ping'] as const, {
  description: 'the event; ping: a test its owner asked for (POST /v1/webhooks/{id}/test)',
})

export const Webhook = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    url: t.String({ description: 'the HTTPS URL deliveries are POSTed to' }),
    description: Nullable(t.String()),
    events: t.Array(Event),
    is_active: t.Boolean(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { description: "A creator's webhook endpoint" },
)
export type Webhook = Static<typeof Webhook>

export const CreatedWebhook = t.Composite(
  [
    Webhook,
    t.Object({
      secret: t.String({
        description: 'whsec_…: verifies the webhook-signature of every delivery (Standard Webhooks). Shown this once only.',
      }),
    }),
  ],
  { description: 'A webhook endpoint just registered, with its signing secret' },
)
export type CreatedWebhook = Static<typeof CreatedWebhook>

export const CreateWebhook = t.Object({
  url: Text({
    minLength: 9,
    maxLength: 2048,
    description:
      'an https URL on the public internet: no loopback, private or link-local address, no user:password ' +
      '(400 INVALID_WEBHOOK_URL; a development server may allow http and local hosts: docs/webhooks.md)',
  }),
  description: t.Optional(Nullable(Text({ maxLength: 500 }))),
  events: t.Optional(
    t.Array(Event, { minItems: 1, maxItems: WEBHOOK_EVENTS.length, uniqueItems: true, description: 'default: every event' }),
  ),
})
export type CreateWebhook = Static<typeof CreateWebhook>

export const WebhookDelivery = t.Object(
  {
    id: t.String({ description: 'the webhook-id header of every attempt of this delivery' }),
    event: DeliveredEvent,
    status: t.Union([t.Literal('pending'), t.Literal('delivered'), t.Literal('failed'), t.Literal('cancelled')], {
      description: 'pending (being retried), delivered (a 2xx came), failed (no 2xx within 24 h), cancelled (the endpoint was removed)',
    }),
    attempts: t.Integer(),
    next_attempt_at: Nullable(UnixSeconds('when the next attempt is due, while pending')),
    last_status: Nullable(t.Integer({ description: 'the HTTP status of the last attempt; null when none came' })),
    last_error: Nullable(t.String({ description: 'why the last attempt failed' })),
    payload: Nullable(t.String({ description: 'the body sent (fixed by the first attempt)' })),
    created_at: UnixSeconds(),
    finished_at: Nullable(UnixSeconds()),
  },
  { description: 'One event for one endpoint, and how its delivery went' },
)
export type WebhookDelivery = Static<typeof WebhookDelivery>

const sale = TransactionItem.properties
const entry = Entry.properties
/** The ledger row's fields every sale event carries, whatever it sold. */
const ledgerRow = {
  transaction_id: sale.id,
  transaction_hash: sale.transaction_hash,
  network: t.String({ description: 'the network the sale was settled on (base, base-sepolia, …)' }),
  asset: sale.asset,
  amount: sale.amount,
  payer: sale.payer,
  pay_to: sale.pay_to,
}
/** What a delivery's `timestamp` is: when the event was recorded, as JavaScript's toISOString writes it. */
const Timestamp = t.String({
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  description: 'when the event was recorded (ISO 8601, UTC)',
})

/** A sale recorded in the ledger (`type` sale.recorded): the ledger row, and the entry sold. */
export const SaleRecordedData = t.Object(
  {
    ...ledgerRow,
    entry_id: sale.entry_id,
    feed_id: Nullable(entry.feed_id),
    entry_title: entry.title,
    created_at: sale.created_at,
  },
  { additionalProperties: false },
)
export type SaleRecordedData = Static<typeof SaleRecordedData>

/** A paid entry whose early access ended (`type` entry.expired): it is free from now on. */
export const EntryExpiredData = t.Object(
  {
    entry_id: entry.id,
    feed_id: entry.feed_id,
    entry_title: entry.title,
    price: entry.price,
    expires_at: entry.expires_at,
  },
  { additionalProperties: false },
)
export type EntryExpiredData = Static<typeof EntryExpiredData>

/** An entry published (`type` entry.published): a new active entry in one of the wallet's feeds. */
export const EntryPublishedData = t.Object(
  {
    entry_id: entry.id,
    feed_id: entry.feed_id,
    feed_name: Feed.properties.name,
    entry_title: entry.title,
    description: entry.description,
    mime_type: entry.mime_type,
    tags: entry.tags,
    is_free: entry.is_free,
    price: entry.price,
    expires_at: entry.expires_at,
    created_at: entry.created_at,
  },
  { additionalProperties: false },
)
export type EntryPublishedData = Static<typeof EntryPublishedData>

const pass = Pass.properties
/** The pass's fields both pass events carry. */
const heldPass = {
  feed_id: pass.feed_id,
  feed_name: Feed.properties.name,
  pass_id: pass.id,
  holder: pass.holder,
  starts_at: pass.starts_at,
  expires_at: pass.expires_at,
}
/** A pass sold (`type` pass.sold): its ledger row (as sale.recorded gives an entry's), the feed, and the pass's time. */
export const PassSoldData = t.Object(
  {
    ...ledgerRow,
    ...heldPass,
    created_at: sale.created_at,
  },
  { additionalProperties: false },
)
export type PassSoldData = Static<typeof PassSoldData>

/** A holder's time with a feed ran out (`type` pass.expired): no pass of theirs runs on from its end. */
export const PassExpiredData = t.Object(heldPass, { additionalProperties: false })
export type PassExpiredData = Static<typeof PassExpiredData>

/** A test delivery (`type` ping) its endpoint's owner asked for: POST /v1/webhooks/{id}/test. Nothing happened. */
export const PingData = t.Object({ webhook_id: t.String({ description: 'the endpoint tested (UUID)' }) }, { additionalProperties: false })
export type PingData = Static<typeof PingData>

/** The body of every webhook delivery, the same bytes on each attempt (routes/webhooks.ts tells how it is signed). */
export const WebhookPayload = t.Union(
  [
    t.Object({ type: t.Literal('sale.recorded'), timestamp: Timestamp, data: SaleRecordedData }, { additionalProperties: false }),
    t.Object({ type: t.Literal('entry.expired'), timestamp: Timestamp, data: EntryExpiredData }, { additionalProperties: false }),
    t.Object({ type: t.Literal('pass.sold'), timestamp: Timestamp, data: PassSoldData }, { additionalProperties: false }),
    t.Object({ type: t.Literal('pass.expired'), timestamp: Timestamp, data: PassExpiredData }, { additionalProperties: false }),
    t.Object({ type: t.Literal('entry.published'), timestamp: Timestamp, data: EntryPublishedData }, { additionalProperties: false }),
    t.Object({ type: t.Literal('ping'), timestamp: Timestamp, data: PingData }, { additionalProperties: false }),
  ],
  { description: 'A webhook delivery: {type, timestamp, data} as Standard Webhooks suggests' },
)
export type WebhookPayload = Static<typeof WebhookPayload>

/** What POST /v1/webhooks/{id}/test answers: how its one attempt went (it is in the delivery log too). */
export const WebhookTestResult = t.Object(
  {
    event_id: t.String({ description: "the ping's webhook-id (ping_…): its row in the delivery log" }),
    delivered: t.Boolean({ description: 'the endpoint answered 2xx' }),
    status: Nullable(t.Integer({ description: "the endpoint's HTTP status; null when none came" })),
    error: Nullable(t.String({ description: 'why it was not delivered, as the delivery log says it; null when it was' })),
    duration_ms: t.Integer({ description: 'how long the attempt took, from resolving the host to the answer (at most 5 s)' }),
  },
  { description: 'The outcome of a signed ping sent to a webhook endpoint now' },
)
export type WebhookTestResult = Static<typeof WebhookTestResult>
