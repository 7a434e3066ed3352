import { Type as t, type Static } from '@sinclair/typebox'
import { Nullable, Text, UnixSeconds } from './common.ts'

export const Takedown = t.Object(
  {
    id: t.String({ description: 'UUID of this takedown' }),
    kind: t.Union([t.Literal('feed'), t.Literal('entry')]),
    feed_id: t.String({ description: 'the feed taken down, or the feed of the entry taken down' }),
    entry_id: Nullable(t.String({ description: 'the entry taken down; null for a feed' })),
    reason: t.String({ description: "the operator's reason (never shown to the public)" }),
    taken_down_at: UnixSeconds(),
    reinstated_at: Nullable(UnixSeconds()),
    reinstate_reason: Nullable(t.String()),
  },
  {
    description: 'An operator takedown: hidden everywhere, content refused with 451, ledger untouched; reinstated_at is set once restored',
  },
)
export type Takedown = Static<typeof Takedown>
export type TakedownKind = Takedown['kind']

/** Which takedowns a listing asks for (GET /v1/admin/takedowns?state=, `trellis takedowns --state`). */
export const TAKEDOWN_STATES = ['standing', 'reinstated', 'all'] as const
export type TakedownState = (typeof TAKEDOWN_STATES)[number]

const Reason = Text({
  minLength: 1,
  maxLength: 1000,
  pattern: '\\S',
  description: 'why (1..1000 characters); kept with the takedown, shown to admins only',
})

export const TakeDown = t.Object({ reason: Reason })
export type TakeDown = Static<typeof TakeDown>

export const Reinstate = t.Object({ reason: t.Optional(Reason) })
export type Reinstate = Static<typeof Reinstate>
