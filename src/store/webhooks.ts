// Webhook endpoints and the outbox of their deliveries (migration 014: the triggers there write the outbox rows in
// the transaction that records each event). A delivery's next_attempt_at is also its sender's claim on it.
import { join, q, type Sql } from './query.ts'
import { textListJson } from '../lib/text.ts'
import type { WebhookEvent } from '../models/webhook.ts'
import type { WebhookDeliveryRecord, WebhookEndpointRecord } from '../models/records.ts'

/** What an attempt came to: an HTTP status, or none (`error` says why). */
export interface AttemptOutcome {
  status: number | null
  error: string | null
}

/** A delivery due now, with its endpoint's failed attempts in a row (0: in good standing). */
export interface DueDelivery extends WebhookDeliveryRecord {
  endpoint_failures: number
}

/** A ping (POST …/test) as the log keeps it, its one attempt over. */
export interface PingRow {
  id: string
  endpoint_id: string
  payload: string
  status: 'delivered' | 'failed'
  outcome: AttemptOutcome
  created_at: number
  finished_at: number
}

export interface WebhookStore {
  insert(row: Omit<WebhookEndpointRecord, 'is_active' | 'updated_at'> & { secret: string }): Promise<void>
  activeCountOf(walletId: string): Promise<number>
  activeOf(walletId: string): Promise<WebhookEndpointRecord[]>
  /** The endpoint with its signing secret. */
  byId(id: string): Promise<(WebhookEndpointRecord & { secret: string }) | undefined>
  /** Deactivates it and cancels what it was still owed. False when it was not active. */
  deactivate(id: string, now: number): Promise<boolean>
  /**
   * The oldest due delivery of each endpoint not in `busy` and not resting, of endpoints in good standing or of those
   * whose last attempt failed (`failing`); the longest waiting first.
   */
  due(now: number, limit: number, busy: string[], failing: boolean): Promise<DueDelivery[]>
  /** Takes a due delivery until `until` (one attempt more): false when another sender took it first. */
  claim(id: string, now: number, until: number): Promise<boolean>
  /** The body every attempt signs, fixed by the first; the one already fixed wins. */
  fixPayload(id: string, payload: string): Promise<string>
  finish(id: string, status: 'delivered' | 'failed' | 'cancelled', outcome: AttemptOutcome, now: number): Promise<void>
  retryAt(id: string, at: number, outcome: AttemptOutcome): Promise<void>
  /** A 2xx from the endpoint: in good standing again. */
  endpointAnswered(id: string): Promise<void>
  /** An attempt with no 2xx: one failure more, and none of its deliveries is attempted before `restUntil`. */
  endpointFailed(id: string, restUntil: number): Promise<void>
  /** Fails what is still pending and unclaimed though created before `before` (held back while its endpoint rested); how many. */
  giveUpOld(before: number, now: number): Promise<number>
  /** Removes up to `limit` deliveries that finished before `before`; how many. */
  forget(before: number, limit: number): Promise<number>
  /** A ping its owner asked for (POST …/test), written once its one attempt ended: finished, never retried. */
  logPing(row: PingRow): Promise<void>
  /** The endpoint's pings created at `since` or later: how many, and when the first was. */
  pingsSince(endpointId: string, since: number): Promise<{ count: number; first: number | null }>
  /** An endpoint's deliveries, newest first, before the cursor [created_at, id]. */
  deliveries(endpointId: string, before: [number, string] | undefined, limit: number): Promise<WebhookDeliveryRecord[]>
}

interface EndpointRow extends Omit<WebhookEndpointRecord, 'events' | 'is_active'> {
  events: string
  is_active: number
  secret: string
}

const endpointRecord = ({ secret: _, ...row }: EndpointRow): WebhookEndpointRecord => ({
  ...row,
  events: JSON.parse(row.events) as WebhookEvent[],
  is_active: Number(row.is_active) === 1,
  created_at: Number(row.created_at),
  updated_at: Number(row.updated_at),
})

const num = (value: number | null) => (value === null ? null : Number(value))
const deliveryRecord = (row: WebhookDeliveryRecord): WebhookDeliveryRecord => ({
  ...row,
  attempts: Number(row.attempts),
  next_attempt_at: Number(row.next_attempt_at),
  last_status: num(row.last_status),
  created_at: Number(row.created_at),
  finished_at: num(row.finished_at),
})

const ENDPOINT = q`SELECT id, wallet_id, url, description, events, secret, is_active, created_at, updated_at FROM webhook_endpoints`
const DELIVERY = q`SELECT id, endpoint_id, event, subject_id, payload, status, attempts, next_attempt_at, last_status, last_error,
  created_at, finished_at FROM webhook_deliveries`

export function webhookStore(sql: Sql): WebhookStore {
  return {
    async insert(e) {
      await sql.run(q`INSERT INTO webhook_endpoints (id, wallet_id, url, description, events, secret, created_at, updated_at)
        VALUES (${e.id}, ${e.wallet_id}, ${e.url}, ${e.description}, ${textListJson(e.events)}, ${e.secret}, ${e.created_at},
        ${e.created_at})`)
    },
    activeCountOf: async (walletId) =>
      Number(
        (await sql.get<{ n: number }>(q`SELECT COUNT(*) AS n FROM webhook_endpoints WHERE wallet_id = ${walletId} AND is_active = 1`))!.n,
      ),
    activeOf: async (walletId) =>
      (await sql.all<EndpointRow>(q`${ENDPOINT} WHERE wallet_id = ${walletId} AND is_active = 1 ORDER BY id`)).map(endpointRecord),
    async byId(id) {
      const row = await sql.get<EndpointRow>(q`${ENDPOINT} WHERE id = ${id}`)
      return row ? { ...endpointRecord(row), secret: row.secret } : undefined
    },
    async deactivate(id, now) {
      const changed =
        (await sql.run(q`UPDATE webhook_endpoints SET is_active = 0, updated_at = ${now} WHERE id = ${id} AND is_active = 1`)) === 1
      if (changed)
        await sql.run(
          q`UPDATE webhook_deliveries SET status = 'cancelled', finished_at = ${now} WHERE endpoint_id = ${id} AND status = 'pending'`,
        )
      return changed
    },
    // One per endpoint, found by an index seek per endpoint (its oldest due), so an endpoint's backlog neither stands
    // in front of another endpoint's delivery nor adds to the cost of a pass (scripts/bench-webhook-due.ts).
    due: async (now, limit, busy, failing) =>
      (
        await sql.all<DueDelivery>(q`SELECT d.id, d.endpoint_id, d.event, d.subject_id, d.payload, d.status,
        d.attempts, d.next_attempt_at, d.last_status, d.last_error, d.created_at, d.finished_at, e.failures AS endpoint_failures
      FROM webhook_endpoints e JOIN webhook_deliveries d ON d.id = (
        SELECT n.id FROM webhook_deliveries n WHERE n.endpoint_id = e.id AND n.status = 'pending' AND n.next_attempt_at <= ${now}
        ORDER BY n.next_attempt_at, n.id LIMIT 1)
      WHERE e.resting_until <= ${now} AND ${failing ? q`e.failures > 0` : q`e.failures = 0`}
        ${
          busy.length
            ? q`AND e.id NOT IN (${join(
                busy.map((id) => q`${id}`),
                ', ',
              )})`
            : q``
        }
      ORDER BY d.next_attempt_at, d.id LIMIT ${limit}`)
      ).map((row) => ({ ...deliveryRecord(row), endpoint_failures: Number(row.endpoint_failures) })),
    claim: async (id, now, until) =>
      (await sql.run(q`UPDATE webhook_deliveries SET next_attempt_at = ${until}, attempts = attempts + 1
      WHERE id = ${id} AND status = 'pending' AND next_attempt_at <= ${now}`)) === 1,
    async fixPayload(id, payload) {
      await sql.run(q`UPDATE webhook_deliveries SET payload = ${payload} WHERE id = ${id} AND payload IS NULL`)
      return (await sql.get<{ payload: string }>(q`SELECT payload FROM webhook_deliveries WHERE id = ${id}`))!.payload
    },
    async finish(id, status, outcome, now) {
      await sql.run(q`UPDATE webhook_deliveries
        SET status = ${status}, last_status = ${outcome.status}, last_error = ${outcome.error}, finished_at = ${now}
        WHERE id = ${id} AND status = 'pending'`)
    },
    async retryAt(id, at, outcome) {
      await sql.run(q`UPDATE webhook_deliveries SET next_attempt_at = ${at}, last_status = ${outcome.status}, last_error = ${outcome.error}
        WHERE id = ${id} AND status = 'pending'`)
    },
    async endpointAnswered(id) {
      await sql.run(q`UPDATE webhook_endpoints SET failures = 0, resting_until = 0 WHERE id = ${id} AND failures > 0`)
    },
    async endpointFailed(id, restUntil) {
      await sql.run(q`UPDATE webhook_endpoints SET failures = failures + 1, resting_until = ${restUntil} WHERE id = ${id}`)
    },
    // A claimed one (next_attempt_at ahead) is its sender's to settle.
    giveUpOld: (before, now) =>
      sql.run(q`UPDATE webhook_deliveries SET status = 'failed', finished_at = ${now},
      last_error = COALESCE(last_error, 'not attempted: the endpoint kept failing')
      WHERE status = 'pending' AND created_at < ${before} AND next_attempt_at <= ${now}`),
    forget: (before, limit) =>
      sql.run(q`DELETE FROM webhook_deliveries WHERE id IN
      (SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND finished_at < ${before} LIMIT ${limit})`),
    async logPing(p) {
      await sql.run(q`INSERT INTO webhook_deliveries (id, endpoint_id, event, subject_id, payload, status, attempts, next_attempt_at,
        last_status, last_error, created_at, finished_at) VALUES (${p.id}, ${p.endpoint_id}, 'ping', ${p.endpoint_id}, ${p.payload},
        ${p.status}, 1, ${p.finished_at}, ${p.outcome.status}, ${p.outcome.error}, ${p.created_at}, ${p.finished_at})`)
    },
    async pingsSince(endpointId, since) {
      const row = await sql.get<{ n: number; first: number | null }>(q`SELECT COUNT(*) AS n, MIN(created_at) AS first
        FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND created_at >= ${since} AND event = 'ping'`)
      return { count: Number(row?.n ?? 0), first: num(row?.first ?? null) }
    },
    async deliveries(endpointId, before, limit) {
      const after = before ? q`AND (created_at < ${before[0]} OR (created_at = ${before[0]} AND id < ${before[1]}))` : q``
      return (
        await sql.all<WebhookDeliveryRecord>(
          q`${DELIVERY} WHERE endpoint_id = ${endpointId} ${after} ORDER BY created_at DESC, id DESC LIMIT ${limit}`,
        )
      ).map(deliveryRecord)
    },
  }
}
