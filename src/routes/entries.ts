// /v1/feeds/{feed_id}/entries: create, list, read (JSON or bytes), soft delete.
import { Elysia, t } from 'elysia'
import type { EntryRecord } from '../models/records.ts'
import { isFreeNow } from '../domain/entries.ts'
import {
  CreateEntry,
  CreateEntryForm,
  Entry,
  Page,
  PaidHeaders,
  PaymentRequired,
  PaymentRequiredHeaders,
  PriceWarningHeaders,
  UpdateEntry,
} from '../models/index.ts'
import { cheapPriceWarning, costliest, warningHeaders } from '../domain/cheap-prices.ts'
import { RECEIPT_TTL_S } from '../domain/access-tokens.ts'
import { nowSeconds } from '../lib/clock.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { errorResponse } from '../edge/errors.ts'
import { booleanQuery, uuid } from './params.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { page, pageQuery, pageSize, queryKey } from './pagination.ts'
import { serveContent } from './serve-content.ts'
import { asResponse, entryGate } from './entry-gate.ts'
import { withHeaders } from '@elysiajs/openapi'
import { contentResponses, errors, NoBody } from '../edge/openapi.ts'
import { base64Content } from '../domain/base64.ts'
import { ENTRY_BODY_LIMIT, entryBodyReader, uploadOf } from './entry-uploads.ts'

const ENTRY_LIST_PARAMETERS = ['page_size', 'page_token', 'is_free'] as const

/**
 * An entry on the wire. Written out, not spread from the record: lists and the hot path serialise it as it is, so its
 * field order is the wire's, and the record's differs (price, size) and may hold more (a recent entry's placement).
 */
export function entryBody(e: EntryRecord, now = nowSeconds()): Entry {
  const free = isFreeNow(e, now)
  return {
    id: e.id,
    feed_id: e.feed_id,
    cid: e.cid,
    mime_type: e.mime_type,
    title: e.title,
    description: e.description,
    metadata: e.metadata,
    tags: e.tags,
    is_free: free,
    expires_at: e.expires_at,
    is_active: e.is_active,
    total_purchases: e.total_purchases,
    total_revenue: e.total_revenue.toString(),
    price: free ? '0' : e.price.toString(),
    asset: 'USDC',
    created_at: e.created_at,
    updated_at: e.updated_at,
  }
}

/** The rows behind every read of an entry, until the database next changes (they are only read, never modified). */
export const entryRows = (s: Services, feedId: string, entryId: string) =>
  s.cached.get(
    `rows:${feedId}/${entryId}`,
    () => s.entries.get(feedId, entryId),
    () => 2_000,
  )

export const entryRoutes = (s: Services) => {
  const ids = (params: { feed_id: string; entry_id: string }) =>
    [uuid(params.feed_id, 'feed_id'), uuid(params.entry_id, 'entry_id')] as const
  const gate = entryGate(s)
  /**
   * The answer of a write (create, edit): the entry, warned about when it is paid below the network's typical
   * settlement cost (domain/cheap-prices.ts). The seed fixes no header and lists the fields a creation returns without
   * closing the list (DESIGN already adds price and asset), so the warning goes in a header every client may ignore
   * and in an optional price_warning field; an answer without a warning is exactly as before.
   */
  const written = (entry: EntryRecord, set: { headers: Record<string, unknown> }): Entry => {
    const warning = isFreeNow(entry) ? null : cheapPriceWarning(entry.price, costliest(s.config.networks), 'entry')
    Object.assign(set.headers, warningHeaders(warning))
    return warning ? { ...entryBody(entry), price_warning: warning } : entryBody(entry)
  }

  return new Elysia({ prefix: '/v1/feeds/:feed_id/entries', tags: ['Entries'] })
    .use(walletAuth(s.auth))
    .post(
      '',
      async ({ params, body, signer, set, request }) => {
        const { content_base64, ...fields } = body
        const entry = await s.entries.create(signer, uuid(params.feed_id, 'feed_id'), {
          ...fields,
          ...(uploadOf(request) ?? { content: base64Content(content_base64) }),
        })
        set.status = 201
        return written(entry, set)
      },
      {
        wallet: { bodyLimit: ENTRY_BODY_LIMIT, readBody: entryBodyReader(s) },
        body: CreateEntry,
        response: { 201: withHeaders(Entry, PriceWarningHeaders) as typeof Entry, ...errors(403, 404, 409, 415) },
        detail: {
          summary: 'Create an entry (feed owner)',
          description:
            'Stores the content on the private IPFS store. is_free defaults to true; a paid entry needs price ' +
            '{amount, currency: "USDC"}. The body is JSON, or multipart/form-data with the content as a file part ' +
            '(the same fields, the same checks and answers); another multipart type answers 415. A price below what ' +
            "one settlement typically costs on this server's network is accepted, with a warning: the Trellis-Warning " +
            'header and price_warning.',
          'x-forms': { 'multipart/form-data': { schema: CreateEntryForm, encoding: { price: { contentType: 'application/json' } } } },
        },
      },
    )
    .get(
      '',
      async ({ params, query }) => {
        const feedId = uuid(params.feed_id, 'feed_id')
        return jsonResponse(
          await s.cached.get(`entries:${feedId}${queryKey(query, ENTRY_LIST_PARAMETERS)}`, async (staleFrom) => {
            const now = nowSeconds()
            const limit = pageSize(query.page_size)
            const scope = `entries:${feedId}`
            const rows = await s.entries.list({
              feedId,
              isFree: booleanQuery(query.is_free, 'is_free'),
              beforeId: s.pages.decode<string>(scope, query.page_token),
              limit: limit + 1,
            })
            const result = page(rows, limit, s.pages, scope, (last) => last.id)
            // is_free and price change when a paid entry's early access ends.
            for (const e of result.data) if (!isFreeNow(e, now) && e.expires_at !== null) staleFrom(e.expires_at)
            return JSON.stringify({ data: result.data.map((e) => entryBody(e, now)), pagination: result.pagination })
          }),
        )
      },
      {
        query: t.Object({ ...pageQuery, is_free: t.Optional(t.String({ description: 'true or false' })) }),
        response: { 200: Page(Entry), ...errors(404, 422) },
        detail: { summary: 'List active entries of a feed', description: 'Newest first, cursor paginated.' },
      },
    )
    .get(
      '/:entry_id',
      async ({ params, signer, request }) => {
        const [feedId, entryId] = ids(params)
        const { feed, entry } = await entryRows(s, feedId, entryId)
        const passed = await gate(feed, entry, signer, request.headers, () => new URL(request.url).pathname)
        // A deleted entry keeps its record, but its content is withdrawn: no content_url, nothing to buy.
        if (passed.kind === 'withdrawn') return jsonResponse(JSON.stringify(entryBody(entry)))
        if (passed.kind === 'answered') return asResponse(passed.answer)
        const token = await s.accessTokens.sign({ kind: 'receipt', entryId: entry.id, feedId: feed.id, exp: nowSeconds() + RECEIPT_TTL_S })
        const body: Entry = { ...entryBody(entry), content_url: `${s.publicUrl()}/v1/access/${token}` }
        return jsonResponse(JSON.stringify(body), passed.receipt ?? undefined)
      },
      {
        walletOptional: true,
        response: {
          200: withHeaders(Entry, PaidHeaders) as typeof Entry,
          402: withHeaders(PaymentRequired, PaymentRequiredHeaders),
          ...errors(404, 502, 503),
        },
        detail: {
          summary: 'Get an entry',
          description:
            'Free entries: anyone. Paid entries: the owner, a buyer (signed), or a request that pays ' +
            '(x402); otherwise 402 with the payment requirements. The answer carries content_url, a signed ' +
            'link to the bytes valid one hour.',
        },
      },
    )
    .get(
      '/:entry_id/content',
      async ({ params, signer, request }) => {
        const [feedId, entryId] = ids(params)
        const { feed, entry } = await entryRows(s, feedId, entryId)
        const passed = await gate(feed, entry, signer, request.headers, () => new URL(request.url).pathname)
        if (passed.kind === 'withdrawn') return errorResponse('ENTRY_NOT_FOUND', 'entry is no longer available')
        if (passed.kind === 'answered') return asResponse(passed.answer)
        const response = await serveContent(
          s.content,
          await s.entries.servable(entry),
          request,
          isFreeNow(entry) ? 'public, max-age=300' : 'private, max-age=300',
        )
        if (passed.receipt) for (const name in passed.receipt) response.headers.set(name, passed.receipt[name]!)
        return response
      },
      {
        walletOptional: true,
        response: {
          ...contentResponses("The entry's bytes"),
          402: withHeaders(PaymentRequired, PaymentRequiredHeaders),
          ...errors(404, 502, 503),
        },
        detail: { summary: "Get an entry's bytes", description: 'The same rules as get entry; Range requests answer 206.' },
      },
    )
    .patch(
      '/:entry_id',
      async ({ params, body, signer, set }) => {
        const [feedId, entryId] = ids(params)
        return written(await s.entries.update(signer, feedId, entryId, body), set)
      },
      {
        wallet: true,
        body: UpdateEntry,
        response: { 200: withHeaders(Entry, PriceWarningHeaders) as typeof Entry, ...errors(403, 404, 409) },
        detail: {
          summary: 'Edit an entry (feed owner)',
          description:
            'Title, description, metadata, tags, price, is_free and expires_at; the content never changes ' +
            '(400 CONTENT_IMMUTABLE: create a new entry). A paid entry may become free, never the other way: ' +
            'a free one (published free, made free, or whose early access ended) answers 409 ' +
            'ENTRY_CONTENT_PUBLIC to a price, its bytes having been public. Past buyers keep access; a ' +
            'payment signed for the old price is refused with the price it now costs. A paid entry left below the ' +
            'settlement cost is answered with a warning, as at creation.',
        },
      },
    )
    .delete(
      '/:entry_id',
      async ({ params, signer }) => {
        const [feedId, entryId] = ids(params)
        await s.entries.remove(signer, feedId, entryId)
        return new Response(null, { status: 204 })
      },
      {
        wallet: true,
        response: { 204: NoBody('Deleted'), ...errors(403, 404) },
        detail: { summary: 'Delete an entry (feed owner)', description: 'Soft delete: the record stays, the entry leaves listings.' },
      },
    )
}
