// /v1/access/<token>: signed entry-access URLs, usable in a browser.
import { Elysia } from 'elysia'
import type { Services } from './services.ts'
import { errorResponse } from './errors.ts'
import { serveContent } from './content.ts'
import { DomainError } from '../domain/errors.ts'

export const accessRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/access', tags: ['Access'] })
    .get('/:token', async ({ params, request }) => {
      const claims = await s.accessTokens.verify(params.token)
      let found
      try {
        found = s.entries.get(claims.feedId, claims.entryId)
      } catch (error) {
        if (error instanceof DomainError) return errorResponse('ENTRY_NOT_FOUND', 'entry not found')
        throw error
      }
      if (!found.entry.is_active) return errorResponse('ENTRY_NOT_FOUND', 'entry is no longer available')
      return serveContent(s.content, found.entry, request, 'private, max-age=300')
    }, {
      detail: { summary: 'Open a signed access URL', description: "Serves the entry's bytes inline. Expired or tampered tokens answer 403/410." },
    })
