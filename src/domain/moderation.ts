// Operator takedowns (the admin routes and `trellis takedown`): a feed or an entry taken down is hidden everywhere
// and its content refused with 451 until reinstated; its sales stay in the ledger. A takedown keeps the target's
// activity so reinstatement gives back exactly what the owner had: owners cannot act on it meanwhile (feeds.ts,
// entries.ts refuse with TAKEN_DOWN), and other writes skip a taken-down row (store/entries.ts).
import type { Records } from '../store/stores.ts'
import type { TakedownKind, TakedownState } from '../models/moderation.ts'
import type { TakedownRecord } from '../models/records.ts'
import type { EntryStanding } from '../store/entries.ts'
import { newId } from '../lib/ids.ts'
import { nowSeconds } from '../lib/clock.ts'
import { fail } from './errors.ts'

/** What a direct read of a taken-down feed or entry answers (451: Unavailable For Legal Reasons). */
export const takenDown = (kind: TakedownKind): never => fail('TAKEN_DOWN', `this ${kind} was taken down by the operator of this server`)

const missing = (kind: TakedownKind): never =>
  kind === 'feed' ? fail('FEED_NOT_FOUND', 'feed not found') : fail('ENTRY_NOT_FOUND', 'entry not found')

/** Where an entry lands once reinstated: as it was, or withdrawn with its feed when that is deleted now. */
function reinstatedEntry(wasActive: boolean, feedLive: boolean): EntryStanding {
  return { is_active: wasActive && feedLive, taken_down: false, deactivated_with_feed: wasActive && !feedLive }
}

/** The rule of models/moderation.ts, for the commands that reach here without the route's schema. */
function checkedReason(reason: string): string {
  if (reason.length < 1 || reason.length > 1000 || !/\S/.test(reason) || reason.includes('\u0000'))
    fail('INVALID_PARAMETER', 'invalid reason', 'reason must be 1 to 1000 characters, not all blank, without NUL')
  return reason
}

const standingTakedown = (
  kind: TakedownKind,
  targetId: string,
  feedId: string,
  reason: string,
  wasActive: boolean,
  now: number,
): TakedownRecord => ({
  id: newId(),
  kind,
  target_id: targetId,
  feed_id: feedId,
  reason,
  was_active: wasActive,
  taken_down_at: now,
  reinstated_at: null,
  reinstate_reason: null,
})

/** `changed`: after each commit, so this instance's leaderboards drop (or regain) a feed before the answer. */
export function moderationService(d: { records: Records; changed?: () => Promise<void> }) {
  async function committed<T>(work: Promise<T>): Promise<T> {
    const done = await work
    await d.changed?.()
    return done
  }

  return {
    async takeDown(kind: TakedownKind, id: string, reason: string): Promise<TakedownRecord> {
      return committed(
        d.records.transact(async (tx) => {
          const now = nowSeconds()
          let takedown: TakedownRecord
          if (kind === 'feed') {
            const feed = (await tx.feeds.held(id)) ?? missing(kind)
            takedown = standingTakedown(kind, id, id, checkedReason(reason), feed.is_active, now)
          } else {
            const entry = (await tx.entries.held(id)) ?? missing(kind)
            takedown = standingTakedown(
              kind,
              id,
              entry.feed_id,
              checkedReason(reason),
              entry.is_active || (await tx.entries.withdrawnWithFeed(id)),
              now,
            )
          }
          if (!(await tx.takedowns.insert(takedown))) fail('ALREADY_TAKEN_DOWN', `this ${kind} is taken down already`)
          if (kind === 'feed') await tx.feeds.update(id, { is_active: false, taken_down: true }, now)
          else await tx.entries.moderate(id, takedown.feed_id, { is_active: false, taken_down: true, deactivated_with_feed: false }, now)
          return takedown
        }),
      )
    },

    async reinstate(kind: TakedownKind, id: string, reason: string | null): Promise<TakedownRecord> {
      if (reason !== null) checkedReason(reason)
      return committed(
        d.records.transact(async (tx) => {
          const now = nowSeconds()
          const target = kind === 'feed' ? await tx.feeds.held(id) : await tx.entries.held(id)
          if (!target) missing(kind)
          const standing = await tx.takedowns.standing(id)
          if (!standing || standing.kind !== kind) return fail('NOT_TAKEN_DOWN', `this ${kind} is not taken down`)
          if (kind === 'feed') {
            await tx.feeds.update(id, { is_active: standing.was_active, taken_down: false }, now)
          } else {
            // The feed's row after the entry's: the order every writer of both takes (store/entries.ts).
            const feed = (await tx.feeds.held(standing.feed_id))!
            const feedLive = feed.taken_down ? (await tx.takedowns.standing(feed.id))!.was_active : feed.is_active
            await tx.entries.moderate(id, standing.feed_id, reinstatedEntry(standing.was_active, feedLive), now)
          }
          await tx.takedowns.close(standing.id, now, reason)
          return { ...standing, reinstated_at: now, reinstate_reason: reason }
        }),
      )
    },

    list: (state: TakedownState, beforeId: string | undefined, limit: number) => d.records.read.takedowns.list(state, beforeId, limit),
  }
}

export type ModerationService = ReturnType<typeof moderationService>
