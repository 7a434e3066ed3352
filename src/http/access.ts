// Access links: create, list and revoke (entry owner), and open /v1/access/<token> in a browser.
import { Elysia, t } from 'elysia'
import type { AccessLinkRow } from '../store/access-links.ts'
import type { Services } from './services.ts'
import { walletAuth } from './wallet-auth.ts'
import { serveContent } from './content.ts'
import { uuid } from './params.ts'
import { page, pageQuery, pageSize, paginationSchema } from './pagination.ts'

export const AccessLinkSchema = t.Object({
  id: t.String(),
  entry_id: t.String(),
  feed_id: t.String(),
  access_token: t.String({ description: 'JWT; confidential' }),
  access_url: t.String({ description: '{base_url}/v1/access/<access_token>' }),
  url: t.String({ description: 'the same as access_url' }),
  expires_at: t.Number(),
  max_uses: t.Nullable(t.Number({ description: 'null: unlimited' })),
  current_uses: t.Number(),
  description: t.Nullable(t.String()),
  created_at: t.Number(),
  is_active: t.Boolean(),
  last_used_at: t.Nullable(t.Number()),
}, { $id: '#/components/schemas/AccessLink' })

const CreateLink = t.Object({
  expires_at: t.Optional(t.Nullable(t.Integer({ description: 'Unix seconds in the future; default 24 hours from now' }))),
  max_uses: t.Optional(t.Nullable(t.Integer({ minimum: 1, description: 'default unlimited' }))),
  description: t.Optional(t.Nullable(t.String({ maxLength: 1000 }))),
}, { 'x-field-codes': { expires_at: 'INVALID_EXPIRES_AT' } })

export const accessRoutes = (s: Services) => {
  const linkBody = (l: AccessLinkRow, token: string) => {
    const url = `${s.publicUrl()}/v1/access/${token}`
    return {
      id: l.id, entry_id: l.entry_id, feed_id: l.feed_id, access_token: token, access_url: url, url,
      expires_at: l.expires_at, max_uses: l.max_uses, current_uses: l.current_uses, description: l.description,
      created_at: l.created_at, is_active: l.is_active === 1, last_used_at: l.last_used_at,
    }
  }

  return new Elysia({ tags: ['Access links'] })
    .use(walletAuth(s.auth))
    .post('/v1/feeds/:feed_id/entries/:entry_id/access-link', async ({ params, body, signer, set }) => {
      const { link, token } = await s.accessLinks.create(signer, uuid(params.feed_id, 'feed_id'), uuid(params.entry_id, 'entry_id'), body ?? {})
      set.status = 201
      return linkBody(link, token)
    }, {
      wallet: true, body: t.Optional(CreateLink),
      response: { 201: AccessLinkSchema },
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
      response: { 200: t.Object({ data: t.Array(AccessLinkSchema), pagination: paginationSchema }) },
      detail: { summary: "List an entry's access links with their usage (entry owner)" },
    })
    .delete('/v1/access-links/:id', ({ params, signer }) => {
      s.accessLinks.revoke(signer, params.id)
      return new Response(null, { status: 204 })
    }, {
      wallet: true,
      detail: { summary: 'Revoke an access link (entry owner)' },
    })
    .get('/v1/access/:token', async ({ params, request }) => {
      const { entry } = s.accessLinks.open(await s.accessTokens.verify(params.token))
      return serveContent(s.content, entry, request, 'private, no-store')
    }, {
      detail: { summary: 'Open an access link', description: "Serves the entry's bytes inline (browser-usable). Every successful response counts one use. Expired, exhausted or revoked links answer 410; tampered or foreign tokens 403." },
    })
}
