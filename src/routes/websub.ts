// POST /v1/websub: the WebSub hub of this server's public feeds (domain/websub.ts). The recommendation's request is
// form-encoded (hub.mode, hub.topic, hub.callback, hub.lease_seconds, hub.secret); JSON with the same names is read
// too. 202: accepted, and the intent is verified with the callback out of band.
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import { DomainError } from '../domain/errors.ts'
import { errorResponse } from '../edge/errors.ts'
import { bodyTooLarge } from '../edge/body.ts'
import { errors, NoBody } from '../edge/openapi.ts'
import { WebsubRequest } from '../models/index.ts'

/** A request is a few short fields: a topic, a callback (2 KB each at most), a secret. */
const BODY_LIMIT = 8 * 1024
/** Seconds a subscriber told 429 waits: a verification takes seconds. */
const BUSY_RETRY_S = 60

/** The form's fields (the first of a repeated name), or the JSON object: validated by WebsubRequest after. */
async function readRequest({ request }: { request: Request }): Promise<unknown> {
  const declared = Number(request.headers.get('content-length') ?? 0)
  if (declared > BODY_LIMIT) throw bodyTooLarge(BODY_LIMIT)
  const bytes = new Uint8Array(await request.arrayBuffer())
  if (bytes.byteLength > BODY_LIMIT) throw bodyTooLarge(BODY_LIMIT)
  const text = new TextDecoder().decode(bytes)
  if ((request.headers.get('content-type') ?? '').toLowerCase().startsWith('application/json')) {
    try {
      return JSON.parse(text)
    } catch {
      throw new DomainError('INVALID_JSON', 'request body is not valid JSON')
    }
  }
  const fields: Record<string, string> = {}
  for (const [name, value] of new URLSearchParams(text)) if (!(name in fields)) fields[name] = value
  return fields
}

export const websubRoutes = (s: Services) =>
  new Elysia({ tags: ['WebSub'] }).post(
    '/v1/websub',
    async ({ body }) => {
      try {
        await s.websub.request(body)
      } catch (error) {
        if (!(error instanceof DomainError && error.code === 'WEBSUB_BUSY')) throw error
        const busy = errorResponse(error.code, error.message, error.details)
        busy.headers.set('retry-after', String(BUSY_RETRY_S))
        return busy
      }
      return new Response(null, { status: 202 })
    },
    {
      parse: readRequest,
      body: WebsubRequest,
      response: { 202: NoBody('Accepted: the intent is verified with the callback next'), ...errors(404) },
      detail: {
        summary: 'Subscribe to a feed, or unsubscribe (WebSub hub)',
        description:
          'The W3C WebSub hub of the public feeds (/v1/feeds/{feed_id}/feed.xml, feed.atom, feed.json name it in ' +
          'their Link header and body). Form-encoded as the recommendation has it (JSON is read too). 202, then the ' +
          'hub verifies the intent: GET callback?hub.mode=…&hub.topic=…&hub.challenge=…&hub.lease_seconds=…, which ' +
          'must answer 2xx with the challenge as its body (tried at most 3 times). A subscription is leased (10 days ' +
          'unless asked; 1 hour to 30 days) and renewed by subscribing again. Each entry published (or made free) ' +
          'in the feed is a POST of the topic document to the callback with Link (hub, self) and, when hub.secret ' +
          'was given, X-Hub-Signature: sha256=<hex HMAC-SHA256 of the body>; retried with backoff for a day; an ' +
          'answer 410 ends the subscription. The callback must be http or https on a public host (400 ' +
          'INVALID_WEBSUB_REQUEST, as a bad topic, mode or secret); a topic whose feed is not public is 404 ' +
          'FEED_NOT_FOUND; too many requests waiting for verification, or subscriptions, of one callback host or ' +
          'in all: 429 WEBSUB_BUSY.',
      },
    },
  )
