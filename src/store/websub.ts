// WebSub's subscriptions, the requests waiting for their verification of intent, and the outbox of content
// distribution (migration 025: its triggers write a delivery per subscription in the transaction that publishes an
// entry). A row's next_attempt_at is also the claim of the one verifying or sending it.
import { join, q, type Sql } from './query.ts'
import type { TopicFormat, WebsubDeliveryRecord, WebsubIntentRecord, WebsubSubscriptionRecord } from '../models/websub.ts'

/** One topic (a feed in one format) and one callback: a subscription's key, as the recommendation has it. */
export interface TopicCallback {
  feed_id: string
  format: TopicFormat
  callback: string
}

export interface WebsubStore {
  /** Records a request, replacing (with its new id) any still waiting for the same topic and callback. */
  request(intent: Omit<WebsubIntentRecord, 'attempts'>): Promise<void>
  /** Requests waiting, of one callback host or (null) of all. */
  waitingCount(host: string | null): Promise<number>
  /** Subscriptions, of one callback host or (null) of all. */
  subscribedCount(host: string | null): Promise<number>
  subscription(key: TopicCallback): Promise<WebsubSubscriptionRecord | undefined>
  /** Whether a request for this topic and callback waits. */
  waiting(key: TopicCallback): Promise<boolean>
  /** Requests due for a verification attempt, the longest waiting first. */
  dueIntents(now: number, limit: number): Promise<WebsubIntentRecord[]>
  /** Takes a due request until `until` (one attempt more): false when another verifier took it, or it was replaced. */
  claimIntent(id: string, now: number, until: number): Promise<boolean>
  /** Settles a request: gone (verified, refused, or out of attempts). False when it had been replaced. */
  dropIntent(id: string): Promise<boolean>
  retryIntent(id: string, at: number): Promise<void>
  /** A verified subscribe: the subscription, new or renewed (lease, secret, standing), from `now` to `expiresAt`. */
  subscribe(intent: WebsubIntentRecord, id: string, now: number, expiresAt: number): Promise<void>
  /** Removes a subscription and what it was still owed. False when there was none. */
  unsubscribe(key: TopicCallback): Promise<boolean>
  removeById(id: string): Promise<void>
  /** Removes the subscriptions whose lease ended by `now`, with what they were owed; how many. */
  expire(now: number): Promise<number>
  /**
   * Due deliveries of subscriptions not in `busy`, not resting, in good standing or failing (`failing`), whose lease
   * runs; the longest waiting first.
   */
  dueDeliveries(now: number, limit: number, busy: string[], failing: boolean): Promise<WebsubDeliveryRecord[]>
  claimDelivery(id: string, now: number, until: number): Promise<boolean>
  /** The subscription was answered 2xx with a document holding the entries of these deliveries: done; in good standing. */
  delivered(subscriptionId: string, ids: string[]): Promise<void>
  /** A failed attempt: the delivery is due again at `at`; the subscription rests until `restUntil`. */
  failed(subscriptionId: string, id: string, at: number, restUntil: number, error: string): Promise<void>
  /** Gives a delivery up (a day of failures, or its feed is gone). */
  drop(id: string): Promise<void>
}

const num = (row: Record<string, unknown>, ...keys: string[]) => {
  for (const key of keys) row[key] = Number(row[key])
  return row
}
const subscriptionRecord = (row: Record<string, unknown>) =>
  num(row, 'lease_seconds', 'expires_at', 'failures', 'resting_until', 'created_at', 'updated_at') as unknown as WebsubSubscriptionRecord
const intentRecord = (row: Record<string, unknown>) =>
  num(row, 'lease_seconds', 'attempts', 'next_attempt_at', 'created_at') as unknown as WebsubIntentRecord
const deliveryRecord = (row: Record<string, unknown>) => num(row, 'attempts', 'created_at', 'failures') as unknown as WebsubDeliveryRecord

const SUBSCRIPTION = q`SELECT id, feed_id, format, callback, callback_host, secret, lease_seconds, expires_at, failures, resting_until,
  created_at, updated_at FROM websub_subscriptions`
const INTENT = q`SELECT id, mode, feed_id, format, callback, callback_host, secret, lease_seconds, attempts, next_attempt_at, created_at
  FROM websub_intents`
const keyed = (k: TopicCallback) => q`feed_id = ${k.feed_id} AND format = ${k.format} AND callback = ${k.callback}`
const ofHost = (host: string | null) => (host === null ? q`` : q`WHERE callback_host = ${host}`)

export function websubStore(sql: Sql): WebsubStore {
  const count = async (query: ReturnType<typeof q>) => Number((await sql.get<{ n: number }>(query))!.n)
  async function removeById(id: string) {
    await sql.run(q`DELETE FROM websub_deliveries WHERE subscription_id = ${id}`)
    await sql.run(q`DELETE FROM websub_subscriptions WHERE id = ${id}`)
  }
  return {
    async request(i) {
      await sql.run(q`INSERT INTO websub_intents (id, mode, feed_id, format, callback, callback_host, secret, lease_seconds,
          next_attempt_at, created_at)
        VALUES (${i.id}, ${i.mode}, ${i.feed_id}, ${i.format}, ${i.callback}, ${i.callback_host}, ${i.secret}, ${i.lease_seconds},
          ${i.next_attempt_at}, ${i.created_at})
        ON CONFLICT (feed_id, format, callback) DO UPDATE SET id = excluded.id, mode = excluded.mode, secret = excluded.secret,
          lease_seconds = excluded.lease_seconds, attempts = 0, next_attempt_at = excluded.next_attempt_at,
          created_at = excluded.created_at`)
    },
    waitingCount: (host) => count(q`SELECT COUNT(*) AS n FROM websub_intents ${ofHost(host)}`),
    subscribedCount: (host) => count(q`SELECT COUNT(*) AS n FROM websub_subscriptions ${ofHost(host)}`),
    async subscription(key) {
      const row = await sql.get<Record<string, unknown>>(q`${SUBSCRIPTION} WHERE ${keyed(key)}`)
      return row ? subscriptionRecord(row) : undefined
    },
    waiting: async (key) => (await sql.get(q`SELECT id FROM websub_intents WHERE ${keyed(key)}`)) !== undefined,
    dueIntents: async (now, limit) =>
      (
        await sql.all<Record<string, unknown>>(q`${INTENT} WHERE next_attempt_at <= ${now} ORDER BY next_attempt_at, id LIMIT ${limit}`)
      ).map(intentRecord),
    claimIntent: async (id, now, until) =>
      (await sql.run(q`UPDATE websub_intents SET next_attempt_at = ${until}, attempts = attempts + 1
        WHERE id = ${id} AND next_attempt_at <= ${now}`)) === 1,
    dropIntent: async (id) => (await sql.run(q`DELETE FROM websub_intents WHERE id = ${id}`)) === 1,
    async retryIntent(id, at) {
      await sql.run(q`UPDATE websub_intents SET next_attempt_at = ${at} WHERE id = ${id}`)
    },
    async subscribe(i, id, now, expiresAt) {
      await sql.run(q`INSERT INTO websub_subscriptions (id, feed_id, format, callback, callback_host, secret, lease_seconds, expires_at,
          created_at, updated_at)
        VALUES (${id}, ${i.feed_id}, ${i.format}, ${i.callback}, ${i.callback_host}, ${i.secret}, ${i.lease_seconds}, ${expiresAt},
          ${now}, ${now})
        ON CONFLICT (feed_id, format, callback) DO UPDATE SET secret = excluded.secret, lease_seconds = excluded.lease_seconds,
          expires_at = excluded.expires_at, failures = 0, resting_until = 0, updated_at = excluded.updated_at`)
    },
    async unsubscribe(key) {
      const row = await sql.get<{ id: string }>(q`SELECT id FROM websub_subscriptions WHERE ${keyed(key)}`)
      if (!row) return false
      await removeById(row.id)
      return true
    },
    removeById,
    async expire(now) {
      await sql.run(q`DELETE FROM websub_deliveries WHERE subscription_id IN
        (SELECT id FROM websub_subscriptions WHERE expires_at <= ${now})`)
      return sql.run(q`DELETE FROM websub_subscriptions WHERE expires_at <= ${now}`)
    },
    // Driven by the due index: nothing due costs one index seek.
    dueDeliveries: async (now, limit, busy, failing) =>
      (
        await sql.all<Record<string, unknown>>(q`SELECT d.id, d.subscription_id, d.entry_id, d.attempts, d.created_at,
          s.feed_id, s.format, s.callback, s.secret, s.failures
        FROM websub_deliveries d JOIN websub_subscriptions s ON s.id = d.subscription_id
        WHERE d.next_attempt_at <= ${now} AND s.resting_until <= ${now} AND s.expires_at > ${now}
          AND ${failing ? q`s.failures > 0` : q`s.failures = 0`}
          ${
            busy.length
              ? q`AND s.id NOT IN (${join(
                  busy.map((id) => q`${id}`),
                  ', ',
                )})`
              : q``
          }
        ORDER BY d.next_attempt_at, d.id LIMIT ${limit}`)
      ).map(deliveryRecord),
    claimDelivery: async (id, now, until) =>
      (await sql.run(q`UPDATE websub_deliveries SET next_attempt_at = ${until}, attempts = attempts + 1
        WHERE id = ${id} AND next_attempt_at <= ${now}`)) === 1,
    async delivered(subscriptionId, ids) {
      await sql.run(
        q`DELETE FROM websub_deliveries WHERE id IN (${join(
          ids.map((id) => q`${id}`),
          ', ',
        )})`,
      )
      await sql.run(q`UPDATE websub_subscriptions SET failures = 0, resting_until = 0 WHERE id = ${subscriptionId} AND failures > 0`)
    },
    async failed(subscriptionId, id, at, restUntil, error) {
      await sql.run(q`UPDATE websub_deliveries SET next_attempt_at = ${at}, last_error = ${error} WHERE id = ${id}`)
      await sql.run(q`UPDATE websub_subscriptions SET failures = failures + 1, resting_until = ${restUntil} WHERE id = ${subscriptionId}`)
    },
    async drop(id) {
      await sql.run(q`DELETE FROM websub_deliveries WHERE id = ${id}`)
    },
  }
}
