import { Type as t, type Static } from '@sinclair/typebox'
import { Nullable, Text, UnixSeconds } from './common.ts'

export const Category = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    name: t.String(),
    description: Nullable(t.String()),
    icon_url: Nullable(t.String()),
    is_active: t.Boolean(),
    created_at: UnixSeconds(),
    updated_at: UnixSeconds(),
  },
  { description: 'A category' },
)
export type Category = Static<typeof Category>

const Name = Text({ minLength: 1, maxLength: 100, pattern: '\\S' })
const IconUrl = Nullable(Text({ maxLength: 2048, pattern: '^https?://' }))
const Description = Nullable(Text({ maxLength: 2000 }))

export const CreateCategory = t.Object({ name: Name, description: t.Optional(Description), icon_url: t.Optional(IconUrl) })
export type CreateCategory = Static<typeof CreateCategory>

export const UpdateCategory = t.Object({
  name: t.Optional(Name),
  description: t.Optional(Description),
  icon_url: t.Optional(IconUrl),
  is_active: t.Optional(t.Boolean({ description: 'false: leaves category-stats and cannot be chosen for new feeds' })),
})
export type UpdateCategory = Static<typeof UpdateCategory>
