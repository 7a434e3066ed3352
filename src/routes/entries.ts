// /v1/feeds/{feed_id}/entries: create, list, read (JSON or bytes), soft delete.
import { Elysia, t } from 'elysia'
import type { EntryRecord } from '../models/records.ts'
import { isFreeNow, type NewEntryInput } from '../domain/entries.ts'
import {
  CreateEntry,
  Entry,
  MAX_CONTENT_BASE64_CHARS,
  Page,
  PaidHeaders,
  PaymentRequired,
  PaymentRequiredHeaders,
  UpdateEntry,
} from '../models/index.ts'
import { RECEIPT_TTL_S } from '../domain/access-tokens.ts'
import { nowSeconds } from '../lib/clock.ts'
import { isUuid } from '../lib/ids.ts'
import { memoryGuard } from '../lib/memory-guard.ts'
import type { Services } from './services.ts'
import { walletAuth, type BodyReader } from './wallet-auth.ts'
import { beforeErrorAnswer, errorResponse } from '../edge/errors.ts'
import { booleanQuery, uuid } from './params.ts'
import { jsonResponse } from '../edge/json-response.ts'
import { page, pageQuery, pageSize, queryKey } from './pagination.ts'
import { serveContent } from './serve-content.ts'
import { asResponse, entryGate } from './entry-gate.ts'
import { withHeaders } from '@elysiajs/openapi'
import { contentResponses, errors, NoBody } from '../edge/openapi.ts'
import { readJsonStreamingField } from '../edge/json-field-stream.ts'
import { base64Content, base64Decoder, type Base64Content } from '../domain/base64.ts'

// The base64 text may be 50 MB; the rest of the JSON is small.
const ENTRY_BODY_LIMIT = MAX_CONTENT_BASE64_CHARS + 256 * 1024
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

/** Uploads whose content_base64 was decoded while the body arrived (it is "" in the parsed body). */
const uploads = new WeakMap<Request, Pick<NewEntryInput, 'content' | 'arrived'>>()

/** An upload refused (by the schema, the rules or a failure) has its file removed before the answer is sent. */
const discardUpload = (request: Request) => async () =>
  void (await uploads.get(request)?.arrived?.then(
    (arrived) => arrived.discard(),
    () => {},
  ))

/** Bodies this large have their content written to a file while they arrive; smaller ones are read whole. */
const SPOOL_WHILE_READING_BYTES = 4 * 1024 * 1024
/** An upload's RSS growth is held near 1.25 times its decoded size (3/4 of the body): see memoryGuard. */
const MEMORY_BUDGET_PER_BODY_BYTE = 0.75 * 1.25

const entryBodyReader =
  (s: Services): BodyReader =>
  async (request, limit, { signer, params, rssAtArrival }) => {
    const declared = Number(request.headers.get('content-length') ?? Number.NaN)
    const known = Number.isSafeInteger(declared)
    const writer =
      known && declared >= SPOOL_WHILE_READING_BYTES && isUuid(params.feed_id)
        ? await s.entries.contentWriter(signer, params.feed_id.toLowerCase())
        : null
    const decoder = base64Decoder(known ? declared : undefined, writer?.push) // the body bounds the field
    const guard = writer ? memoryGuard(declared * MEMORY_BUDGET_PER_BODY_BYTE, rssAtArrival) : null
    let pushed = 0
    const push = (text: string) => ((pushed += text.length), decoder.push(text))
    const ready = writer && guard ? () => (guard(pushed), writer.ready()) : undefined
    let content: Base64Content | null = null
    let read: Awaited<ReturnType<typeof readJsonStreamingField>>
    try {
      read = await readJsonStreamingField(request, limit, 'content_base64', { push, end: () => void (content = decoder.end()), ready })
    } catch (error) {
      writer?.abort(error as Error)
      throw error
    }
    const decoded = read.streamed ? (content as Base64Content | null) : null
    if (writer && !decoded?.pieces) writer.abort(new Error('no valid content_base64 streamed'))
    if (decoded) uploads.set(request, { content: decoded, arrived: writer && decoded.pieces ? writer.end() : undefined })
    if (writer) beforeErrorAnswer(request, discardUpload(request)) // a stored entry has read (and so removed) its file
    return read.body
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

  return new Elysia({ prefix: '/v1/feeds/:feed_id/entries', tags: ['Entries'] })
    .use(walletAuth(s.auth))
    .post(
      '',
      async ({ params, body, signer, set, request }) => {
        const { content_base64, ...fields } = body
        const entry = await s.entries.create(signer, uuid(params.feed_id, 'feed_id'), {
          ...fields,
          ...(uploads.get(request) ?? { content: base64Content(content_base64) }),
        })
        set.status = 201
        return entryBody(entry)
      },
      {
        wallet: { bodyLimit: ENTRY_BODY_LIMIT, readBody: entryBodyReader(s) },
        body: CreateEntry,
        response: { 201: Entry, ...errors(403, 404, 409) },
        detail: {
          summary: 'Create an entry (feed owner)',
          description:
            'Stores the content on the private IPFS store. is_free defaults to true; a paid entry needs price {amount, currency: "USDC"}.',
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
      async ({ params, body, signer }) => {
        const [feedId, entryId] = ids(params)
        return entryBody(await s.entries.update(signer, feedId, entryId, body))
      },
      {
        wallet: true,
        body: UpdateEntry,
        response: { 200: Entry, ...errors(403, 404, 409) },
        detail: {
          summary: 'Edit an entry (feed owner)',
          description:
            'Title, description, metadata, tags, price, is_free and expires_at; the content never changes ' +
            '(400 CONTENT_IMMUTABLE: create a new entry). A paid entry may become free, never the other way: ' +
            'a free one (published free, made free, or whose early access ended) answers 409 ' +
            'ENTRY_CONTENT_PUBLIC to a price, its bytes having been public. Past buyers keep access; a ' +
            'payment signed for the old price is refused with the price it now costs.',
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
