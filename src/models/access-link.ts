import { Type as t, type Static } from '@sinclair/typebox'
import { Nullable, Text, UnixSeconds } from './common.ts'

export const AccessLink = t.Object(
  {
    id: t.String({ description: 'UUID' }),
    entry_id: t.String(),
    feed_id: t.String(),
    access_token: t.String({ description: 'JWT; confidential' }),
    access_url: t.String({ description: '{base_url}/v1/access/<access_token>' }),
    url: t.String({ description: 'the same as access_url' }),
    expires_at: UnixSeconds(),
    max_uses: Nullable(t.Integer(), { description: 'null: unlimited' }),
    current_uses: t.Integer(),
    description: Nullable(t.String()),
    created_at: UnixSeconds(),
    is_active: t.Boolean({ description: 'false once revoked' }),
    last_used_at: Nullable(UnixSeconds()),
  },
  { description: 'An access link' },
)
export type AccessLink = Static<typeof AccessLink>

export const CreateAccessLink = t.Object(
  {
    expires_at: t.Optional(Nullable(t.Integer({ description: 'Unix seconds in the future; default 24 hours from now' }))),
    max_uses: t.Optional(Nullable(t.Integer({ minimum: 1, description: 'default unlimited' }))),
    description: t.Optional(Nullable(Text({ maxLength: 1000 }))),
  },
  { 'x-field-codes': { expires_at: 'INVALID_EXPIRES_AT' } },
)
export type CreateAccessLink = Static<typeof CreateAccessLink>
