// /v1/categories: the category list and one category.
import { Elysia, t } from 'elysia'
import type { CategoryRecord } from '../models/records.ts'
import type { Services } from './services.ts'
import { booleanQuery } from './params.ts'
import { page, pageQuery, pageSize } from './pagination.ts'
import { Category, Page, Text } from '../models/index.ts'
import { errors } from '../edge/openapi.ts'

/** A category on the wire is its record. */
export const categoryBody = (c: CategoryRecord): Category => c

export const categoryRoutes = (s: Services) =>
  new Elysia({ prefix: '/v1/categories', tags: ['Categories'] })
    .get(
      '',
      async ({ query }) => {
        const limit = pageSize(query.page_size)
        const scope = 'categories'
        const after = s.pages.decode<{ name: string; id: string }>(scope, query.page_token)
        const rows = await s.categories.list({
          search: query.search?.trim() || undefined,
          isActive: booleanQuery(query.is_active, 'is_active'),
          after,
          limit: limit + 1,
        })
        const result = page(rows, limit, s.pages, scope, (last) => ({ name: last.name, id: last.id }))
        return { data: result.data.map(categoryBody), pagination: result.pagination }
      },
      {
        query: t.Object({ ...pageQuery, search: t.Optional(Text({ description: 'part of the name' })), is_active: t.Optional(t.String()) }),
        response: { 200: Page(Category), ...errors(422) },
        detail: { summary: 'List categories', description: 'By name.' },
      },
    )
    .get('/:category_id', async ({ params }) => categoryBody(await s.categories.get(params.category_id)), {
      response: { 200: Category, ...errors(404) },
      detail: { summary: 'Get a category' },
    })
