// Access links: create, list and revoke (entry owner), and open /v1/access/<token> in a browser.
import { Elysia, t } from 'elysia'
import type { AccessLinkRecord } from '../models/records.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { serveContent } from './content.ts'
import { uuid } from './params.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { contentResponses, errors, NoBody } from './openapi.ts'
import { AccessLink, CreateAccessLink, Page } from '../models/index.ts'

export const accessRoutes = (s: Services) => {
  const linkBody = (l: AccessLinkRecord, token: string) => {
    const url = `${s.publicUrl()}/v1/access/${token}`
    return {
      id: l.id, entry_id: l.entry_id, feed_id: l.feed_id, access_token: token, access_url: url, url,
      expires_at: l.expires_at, max_uses: l.max_uses, current_uses: l.current_uses, description: l.description,
      created_at: l.created_at, is_active: l.is_active, last_used_at: l.last_used_at,
    }
  }

  return new Elysia({ tags: ['Access links'] })
    .use(walletAuth(s.auth))
    .post('/v1/feeds/:feed_id/entries/:entry_id/access-link', async ({ params, body, signer, set }) => {
      const { link, token } = await s.accessLinks.create(signer, uuid(params.feed_id, 'feed_id'), uuid(params.entry_id, 'entry_id'), body ?? {})
      set.status = 201
      return linkBody(link, token)
    }, {
      wallet: true, body: t.Optional(CreateAccessLink),
      response: { 201: AccessLink, ...errors(403, 404) },
      detail: { summary: 'Create an access link (entry owner)', description: 'Works for free and paid entries; the link opens the entry without signature or payment until it expires or its uses run out.' },
    })
    .get('/v1/feeds/:feed_id/entries/:entry_id/access-links', async ({ params, query, signer }) => {
      const limit = pageSize(query.page_size)
      const entryId = uuid(params.entry_id, 'entry_id')
      const scope = `access-links:${entryId}`
      const rows = s.accessLinks.list(signer, uuid(params.feed_id, 'feed_id'), entryId, s.pages.decode<string>(scope, query.page_token), limit + 1)
      const result = page(rows, limit, s.pages, scope, (last) => last.id)
      return { data: await Promise.all(result.data.map(async (l) => linkBody(l, await s.accessLinks.tokenFor(l)))), pagination: result.pagination }
    }, {
      wallet: true, query: t.Object(pageQuery),
      response: { 200: Page(AccessLink), ...errors(403, 404, 422) },
      detail: { summary: "List an entry's access links with their usage (entry owner)" },
    })
    .delete('/v1/access-links/:id', ({ params, signer }) => {
      s.accessLinks.revoke(signer, params.id)
      return new Response(null, { status: 204 })
    }, {
      wallet: true,
      response: { 204: NoBody('Revoked'), ...errors(403, 404) },
      detail: { summary: 'Revoke an access link (entry owner)' },
    })
    .get('/v1/access/:token', async ({ params, request }) => {
      const { entry } = s.accessLinks.open(await s.accessTokens.verify(params.token))
      return serveContent(s.content, s.entries.servable(entry), request, 'private, no-store')
    }, {
      response: { ...contentResponses("The entry's bytes, inline"), ...errors(403, 404, 410) },
      detail: { summary: 'Open an access link', description: "Serves the entry's bytes inline (browser-usable). Every successful response counts one use. Expired, exhausted or revoked links answer 410; tampered or foreign tokens 403." },
    })
}
