// The 402 of a feed's pass, answered before Elysia (a HotPost): a buyer's first POST, and every crawler's, asks for it
// with no payment, and it is the same for everyone until the feed or its offer changes, but for the sign-in-with-x
// nonce each answer gets. Anything else (a payment, a signature, a feed not prepared yet) goes to the route.
import type { Services } from './services.ts'
import type { HotPost } from '../edge/serve.ts'
import type { Prepared } from '../edge/request-wrapper.ts'
import type { PriceTag } from '../chain/x402/requirements.ts'
import { SIGNED_HEADER_NAMES } from '../models/auth.ts'
import { PAYING_OR_SIGNING_IN, wantsPage } from '../chain/x402/resource-server.ts'
import { isUuid } from '../lib/ids.ts'
import { entryGate } from './entry-gate.ts'
import { passPaywall } from './pass-purchases.ts'

const SIGNED_OR_PAYING = [...PAYING_OR_SIGNING_IN, ...SIGNED_HEADER_NAMES]
const PREFIX = '/v1/feeds/'
const SUFFIX = '/pass/purchases'

type HotPass = { feedId: string; answer: Prepared; page: Prepared; tag: PriceTag } | null

export function passChallenges(s: Services): HotPost {
  const gate = entryGate(s)
  async function prepare(feedId: string): Promise<HotPass> {
    try {
      const feed = await s.feeds.get(feedId)
      if (!feed.pass) return null
      const tag = s.passes.priceTag(feed, feed.pass, `${s.publicUrl()}${PREFIX}${feedId}${SUFFIX}`)
      return { feedId: feed.id, tag, answer: gate.plainChallenge(tag), page: await passPaywall(s, gate, feed, tag) }
    } catch {
      return null // a feed not found, taken down, or a store out of reach: the route answers it
    }
  }
  return async (request) => {
    const url = request.url
    const start = url.indexOf(PREFIX)
    const feedId = start < 0 ? '' : url.slice(start + PREFIX.length, url.length - SUFFIX.length)
    if (!isUuid(feedId) || !url.endsWith(SUFFIX) || SIGNED_OR_PAYING.some((h) => request.headers.has(h))) return request
    const key = `pass 402:${feedId}`
    const hot = s.cached.peek<HotPass>(key)
    if (hot === undefined)
      void s.cached.get(
        key,
        () => prepare(feedId),
        () => 8_000,
      )
    if (!hot) return request
    s.challenges.served(hot.feedId, null)
    return gate.freshChallenge(wantsPage(request.headers) ? hot.page : hot.answer, hot.tag)
  }
}
