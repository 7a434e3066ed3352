// Category administration, behind the admin-api-key header (TRELLIS_ADMIN_KEY). Without a configured key the
// routes do not exist (404).
import { Elysia, t } from 'elysia'
import { timingSafeEqual, createHash } from 'node:crypto'
import type { Services } from './services.ts'
import { DomainError } from '../domain/errors.ts'
import { categoryBody, CategorySchema } from './categories.ts'
import { jsonBody } from './body.ts'

const digest = (value: string) => createHash('sha256').update(value).digest()

const Name = t.String({ minLength: 1, maxLength: 100, pattern: '\\S' })
const IconUrl = t.Nullable(t.String({ maxLength: 2048, pattern: '^https?://' }))

export const adminRoutes = (s: Services) => {
  const key = s.config.adminKey
  if (!key) return new Elysia({ name: 'admin-disabled' })
  const expected = digest(key)
  // Runs in the parse/transform phase, before validation: a wrong key never learns anything about the body.
  const requireKey = ({ request }: { request: Request }) => {
    const given = request.headers.get('admin-api-key')
    if (!given || !timingSafeEqual(digest(given), expected)) throw new DomainError('ADMIN_KEY_REQUIRED', 'a valid admin-api-key header is required')
  }
  return new Elysia({ prefix: '/v1/categories', tags: ['Admin'] })
    .post('', ({ body, set }) => {
      set.status = 201
      return categoryBody(s.categories.create(body))
    }, {
      parse: [(c) => { requireKey(c) }, jsonBody()], transform: requireKey,
      body: t.Object({ name: Name, description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))), icon_url: t.Optional(IconUrl) }),
      response: { 201: CategorySchema },
      detail: { summary: 'Create a category (admin)', security: [{ adminApiKey: [] }] },
    })
    .patch('/:category_id', ({ params, body }) => categoryBody(s.categories.update(params.category_id, body)), {
      parse: [(c) => { requireKey(c) }, jsonBody()], transform: requireKey,
      body: t.Object({
        name: t.Optional(Name),
        description: t.Optional(t.Nullable(t.String({ maxLength: 2000 }))),
        icon_url: t.Optional(IconUrl),
        is_active: t.Optional(t.Boolean()),
      }),
      response: { 200: CategorySchema },
      detail: { summary: 'Update, rename or deactivate a category (admin)', security: [{ adminApiKey: [] }], description: 'Inactive categories leave category-stats and cannot be chosen for new feeds.' },
    })
}
