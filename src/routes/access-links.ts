// Access links: create, list and revoke (entry owner), and open /v1/access/<token> in a browser.
import { Elysia, t } from 'elysia'
import type { AccessLinkRecord } from '../models/records.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { serveContent } from './serve-content.ts'
import { uuid } from './params.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { contentResponses, errors, NoBody } from '../edge/openapi.ts'
import { AccessLink, CreateAccessLink, Page } from '../models/index.ts'

/** About how many characters what serving an entry needs weighs in the read memo. */
const SERVABLE_CHARS = 300

/** The length of a 206 answer and the size of the whole entry, from its Content-Range (`bytes a-b/size`). */
function rangeOf(answer: Response): { bytes: number; size: number } {
  const [, start, end, size] = /^bytes (\d+)-(\d+)\/(\d+)$/.exec(answer.headers.get('content-range') ?? '')!.map(Number)
  return { bytes: end! - start! + 1, size: size! }
}

export const accessRoutes = (s: Services) => {
  // A range session's client: its address (none in process) and User-Agent (bounded: it is part of a map key).
  const clientOf = (request: Request) => `${s.clientAddress?.(request) ?? '-'} ${(request.headers.get('user-agent') ?? '').slice(0, 200)}`

  /**
   * A link on the wire: the record without its creator and last update, with its token and URL (twice). Answered
   * through Elysia only, which writes the fields in the schema's order.
   */
  const linkBody = ({ created_by: _by, updated_at: _at, ...l }: AccessLinkRecord, token: string): AccessLink => {
    const url = `${s.publicUrl()}/v1/access/${token}`
    return { ...l, access_token: token, access_url: url, url }
  }

  return new Elysia({ tags: ['Access links'] })
    .use(walletAuth(s.auth))
    .post(
      '/v1/feeds/:feed_id/entries/:entry_id/access-link',
      async ({ params, body, signer, set }) => {
        const { link, token } = await s.accessLinks.create(
          signer,
          uuid(params.feed_id, 'feed_id'),
          uuid(params.entry_id, 'entry_id'),
          body ?? {},
        )
        set.status = 201
        return linkBody(link, token)
      },
      {
        wallet: true,
        body: t.Optional(CreateAccessLink),
        response: { 201: AccessLink, ...errors(403, 404) },
        detail: {
          summary: 'Create an access link (entry owner)',
          description:
            'Works for free and paid entries; the link opens the entry without signature or payment until it expires or its uses run out.',
        },
      },
    )
    .get(
      '/v1/feeds/:feed_id/entries/:entry_id/access-links',
      async ({ params, query, signer }) => {
        const limit = pageSize(query.page_size)
        const entryId = uuid(params.entry_id, 'entry_id')
        const scope = `access-links:${entryId}`
        const rows = await s.accessLinks.list(
          signer,
          uuid(params.feed_id, 'feed_id'),
          entryId,
          s.pages.decode<string>(scope, query.page_token),
          limit + 1,
        )
        const result = page(rows, limit, s.pages, scope, (last) => last.id)
        return {
          data: await Promise.all(result.data.map(async (l) => linkBody(l, await s.accessLinks.tokenFor(l)))),
          pagination: result.pagination,
        }
      },
      {
        wallet: true,
        query: t.Object(pageQuery),
        response: { 200: Page(AccessLink), ...errors(403, 404, 422) },
        detail: { summary: "List an entry's access links with their usage (entry owner)" },
      },
    )
    .delete(
      '/v1/access-links/:id',
      async ({ params, signer }) => {
        await s.accessLinks.revoke(signer, params.id)
        return new Response(null, { status: 204 })
      },
      {
        wallet: true,
        response: { 204: NoBody('Revoked'), ...errors(403, 404, 451) },
        detail: { summary: 'Revoke an access link (entry owner)' },
      },
    )
    .get(
      '/v1/access/:token',
      async ({ params, request }) => {
        const rangeClient = request.headers.has('range') ? clientOf(request) : null
        const { entry, link } = await s.accessLinks.admit(await s.accessTokens.verify(params.token), rangeClient)
        // What serving needs (its sealing key) is read once until the records change, as admit's reads are.
        const servable = await s.cached.get(
          `servable:${entry.id}`,
          () => s.entries.servable(entry),
          () => SERVABLE_CHARS,
        )
        const answer = await serveContent(s.content, servable, request, 'private, no-store')
        if (!link || request.method !== 'GET') return answer // HEAD (answered from this route) counts nothing
        const gone = () => request.signal.aborted
        let served: boolean
        if (answer.status === 200) served = await s.accessLinks.countOpen(link, gone)
        else if (answer.status === 206) {
          const { bytes, size } = rangeOf(answer)
          served = await s.accessLinks.countRange(link, rangeClient ?? clientOf(request), bytes, size, gone)
        } else return answer // 304, 416, a missing item: no bytes of the entry, no use
        // The client left before its use was counted: whatever is answered reaches nobody (nginx logs this as 499).
        return served ? answer : new Response(null, { status: 499 })
      },
      {
        response: { ...contentResponses("The entry's bytes, inline"), ...errors(403, 404, 410) },
        detail: {
          summary: 'Open an access link',
          description:
            "Serves the entry's bytes inline (browser-usable). A full 200 answer to a GET counts one use; a " +
            "range session (a client's 206 answers, while they come at most 30 minutes apart and add up to " +
            'at most 3 copies of the entry) counts one use, at its first range. HEAD, 304, 416, refusals and ' +
            'requests whose client left before the answer count none; a use is counted, durably, before the ' +
            'bytes are sent. Expired, exhausted or revoked links answer 410; tampered or foreign tokens 403.',
        },
      },
    )
}
