// /v1/admin: the operator takes a feed or an entry down (hidden everywhere, content 451, ledger untouched), reinstates
// it, and lists takedowns with their reasons. Behind admin-api-key; without TRELLIS_ADMIN_KEY the routes do not exist.
import { Elysia, t } from 'elysia'
import type { Services } from './services.ts'
import {
  Page,
  Reinstate,
  TAKEDOWN_STATES,
  TakeDown,
  Takedown,
  type TakedownKind,
  type TakedownRecord,
  type TakedownState,
} from '../models/index.ts'
import { errors } from '../edge/openapi.ts'
import { adminBodyGuard, adminKeyGuard } from './admin.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { uuid } from './params.ts'
import { DomainError } from '../domain/errors.ts'

export const takedownBody = (r: TakedownRecord): Takedown => ({
  id: r.id,
  kind: r.kind,
  feed_id: r.feed_id,
  entry_id: r.kind === 'entry' ? r.target_id : null,
  reason: r.reason,
  taken_down_at: r.taken_down_at,
  reinstated_at: r.reinstated_at,
  reinstate_reason: r.reinstate_reason,
})

export const moderationRoutes = (s: Services) => {
  const key = s.config.adminKey
  if (!key) return new Elysia({ name: 'moderation-disabled' })
  const requireKey = adminKeyGuard(key)
  const guarded = adminBodyGuard(key)
  const security = [{ adminApiKey: [] }]
  const app = new Elysia({ prefix: '/v1/admin', tags: ['Admin'] })
  for (const kind of ['feed', 'entry'] as TakedownKind[]) {
    const param = `${kind}_id`
    const path = `/${kind === 'feed' ? 'feeds' : 'entries'}/:${param}`
    const target = (params: Record<string, string>) => uuid(params[param]!, param)
    app.post(
      `${path}/takedown`,
      async ({ params, body, set }) => {
        const takedown = await s.moderation.takeDown(kind, target(params), body.reason)
        set.status = 201
        return takedownBody(takedown)
      },
      {
        ...guarded,
        body: TakeDown,
        response: { 201: Takedown, ...errors(404, 409) },
        detail: {
          summary: `Take down a ${kind} (admin)`,
          security,
          description:
            `Hides the ${kind} everywhere (listings, leaderboards, pages, feeds for readers, ` +
            `discovery)${kind === 'feed' ? ' with its entries' : ''}; ` +
            (`a direct read of it, and its content, answers 451 TAKEN_DOWN, its owner included. Sales stay ` +
              `in the ledger. 409 ALREADY_TAKEN_DOWN when it is.`),
        },
      },
    )
    app.post(
      `${path}/reinstate`,
      async ({ params, body }) => takedownBody(await s.moderation.reinstate(kind, target(params), body?.reason ?? null)),
      {
        ...guarded,
        body: t.Optional(Reinstate),
        response: { 200: Takedown, ...errors(404, 409) },
        detail: {
          summary: `Reinstate a ${kind} taken down (admin)`,
          security,
          description: `Gives the ${kind} back as its owner had it. 409 NOT_TAKEN_DOWN when it is not taken down.`,
        },
      },
    )
  }
  return app.get(
    '/takedowns',
    async ({ query }) => {
      const state = (query.state ?? 'standing') as TakedownState
      if (!TAKEDOWN_STATES.includes(state))
        throw new DomainError('INVALID_PARAMETER', 'invalid state', 'state must be standing, reinstated or all')
      const limit = pageSize(query.page_size)
      const scope = `takedowns:${state}`
      const rows = await s.moderation.list(state, s.pages.decode<string>(scope, query.page_token), limit + 1)
      const listed = page(rows, limit, s.pages, scope, (last) => last.id)
      return { data: listed.data.map(takedownBody), pagination: listed.pagination }
    },
    {
      transform: requireKey,
      query: t.Object({
        ...pageQuery,
        state: t.Optional(t.String({ description: 'standing (default: in force now), reinstated, or all' })),
      }),
      response: { 200: Page(Takedown, 'Takedowns, newest first'), ...errors(422) },
      detail: { summary: 'List takedowns and their reasons (admin)', security },
    },
  )
}
