// The pages kept in the read memo, by key: made once until the records (or, when the key names them, the
// leaderboards) change, and served from there by the route or, once made, by the hot path (routes/hot-reads.ts).
import type { Services } from './services.ts'
import { withCors, type Prepared } from '../edge/request-wrapper.ts'
import { PAGE_HEADERS } from '../pages/layout.ts'

const HEADERS = withCors(PAGE_HEADERS)
const ok = (body: string): Prepared => ({ body, init: { status: 200, headers: HEADERS } })

/** A page the memo keeps under `key` until the records (or, when the key names them, the leaderboards) change. */
export const keptPage = (s: Services, key: string, make: (staleFrom: (at: number) => void) => Promise<string>) =>
  s.cached.get<Prepared>(
    `page:${key}`,
    async (staleFrom) => ok(await make(staleFrom)),
    (p) => 2 * p.body.length,
  )

/** The memo's copy of a page, for the hot path (routes/hot-reads.ts); undefined until a request made it. */
export const heldPage = (s: Services, key: string): Prepared | undefined => s.cached.peek<Prepared>(`page:${key}`)
export const homeKey = (s: Services) => `/#${s.stats.boardsGeneration()}`
export const feedKey = (feedId: string, token = '') => `feed:${feedId}?${token}`
