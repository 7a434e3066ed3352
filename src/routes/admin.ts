// Category administration, behind the admin-api-key header (TRELLIS_ADMIN_KEY). Without a configured key the
// routes do not exist (404). Takedowns: moderation.ts.
import { Elysia } from 'elysia'
import { timingSafeEqual, createHash } from 'node:crypto'
import type { Services } from './services.ts'
import { DomainError } from '../domain/errors.ts'
import { categoryBody } from './categories.ts'
import { Category, CreateCategory, UpdateCategory } from '../models/index.ts'
import { errors } from '../edge/openapi.ts'
import { jsonBody } from '../edge/body.ts'

const digest = (value: string) => createHash('sha256').update(value).digest()

/**
 * Refuses a request without the configured admin-api-key (TRELLIS_ADMIN_KEY). Runs in the parse/transform phase,
 * before validation: a wrong key never learns anything about the body.
 */
export function adminKeyGuard(key: string): (context: { request: Request }) => void {
  const expected = digest(key)
  return ({ request }) => {
    const given = request.headers.get('admin-api-key')
    if (!given || !timingSafeEqual(digest(given), expected))
      throw new DomainError('ADMIN_KEY_REQUIRED', 'a valid admin-api-key header is required')
  }
}

/** The hooks of an admin route with a JSON body: the key checked before the body is read, and again before validation. */
export function adminBodyGuard(key: string) {
  const requireKey = adminKeyGuard(key)
  return {
    parse: [
      (c: { request: Request }) => {
        requireKey(c)
      },
      jsonBody(),
    ],
    transform: requireKey,
  }
}

export const adminRoutes = (s: Services) => {
  const key = s.config.adminKey
  if (!key) return new Elysia({ name: 'admin-disabled' })
  const guarded = adminBodyGuard(key)
  return new Elysia({ prefix: '/v1/categories', tags: ['Admin'] })
    .post(
      '',
      async ({ body, set }) => {
        set.status = 201
        return categoryBody(await s.categories.create(body))
      },
      {
        ...guarded,
        body: CreateCategory,
        response: { 201: Category, ...errors(409) },
        detail: { summary: 'Create a category (admin)', security: [{ adminApiKey: [] }] },
      },
    )
    .patch('/:category_id', async ({ params, body }) => categoryBody(await s.categories.update(params.category_id, body)), {
      ...guarded,
      body: UpdateCategory,
      response: { 200: Category, ...errors(404, 409) },
      detail: {
        summary: 'Update, rename or deactivate a category (admin)',
        security: [{ adminApiKey: [] }],
        description: 'Inactive categories leave category-stats and cannot be chosen for new feeds.',
      },
    })
}
