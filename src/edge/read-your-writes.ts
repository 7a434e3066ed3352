// Read-your-writes across instances on one PostgreSQL database (docs/scale-out.md, "Reading your own writes"), at the
// edge: a write's answer carries the database's version after it (header Trellis-Version, and cookie trellis_version
// for browsers); a request carrying one (the header, else the cookie) is served once this instance has heard every
// commit up to it through its change feed, waited for up to VERSION_WAIT_MS; still behind, it reads fresh (no kept
// read, lib/fresh-reads.ts). Never an error: a version that is not one, or that was never written, is ignored, and a
// version that cannot be read after a write leaves that answer without one.
//
// The embedded engine has one process, which reads its own writes already: no version is given or waited for there.
import type { Reached } from '../store/records.ts'
import { readingAs, type RequestReads } from '../lib/fresh-reads.ts'
import type { Answer, Route } from './request-wrapper.ts'

/** The response header a write's answer carries, and the request header a client (or balancer) echoes it in. */
export const VERSION_HEADER = 'Trellis-Version'
/** The browser's copy: HttpOnly, SameSite=Lax, Path=/, for VERSION_COOKIE_MAX_AGE_S. */
export const VERSION_COOKIE = 'trellis_version'
/**
 * Seconds a browser keeps sending it: far beyond the change feed's delivery (milliseconds) and its worst case (an
 * instance that has not heard itself for 1.5 s keeps no read at all), short enough to be gone before it matters.
 */
export const VERSION_COOKIE_MAX_AGE_S = 10
/** How long a request carrying a version this instance has not heard yet waits for it before reading fresh. */
export const VERSION_WAIT_MS = 250

const header = VERSION_HEADER.toLowerCase()
/** Longer than any version (`FFFFFFFF/FFFFFFFF`): not even looked at. */
const MAX_VERSION_CHARS = 24
const COOKIE = new RegExp(`(?:^|;)\\s*${VERSION_COOKIE}=([^;]*)`)

export interface Versions {
  version(): Promise<string>
  reach(version: string, withinMs: number): Reached | Promise<Reached>
}

/** The version a request carries: its header, else its cookie (the slash percent-encoded or not); null when none. */
export function carriedVersion(headers: Headers): string | null {
  let text = headers.get(header)
  if (text === null) {
    const cookies = headers.get('cookie')
    if (cookies === null || !cookies.includes(VERSION_COOKIE)) return null
    text = COOKIE.exec(cookies)?.[1]?.replace(/%2F/i, '/') ?? null
  }
  return text === null || text.length > MAX_VERSION_CHARS ? null : text.trim()
}

const statusOf = (answer: Answer) => (typeof answer === 'string' ? 200 : answer instanceof Response ? answer.status : answer.init.status)

/** The answer as a Response carrying `version` (a new one where it was text or prepared: those are shared). */
function stamped(answer: Answer, version: string, secure: boolean): Response {
  const response =
    typeof answer === 'string'
      ? new Response(answer, { headers: { 'content-type': 'application/json' } })
      : answer instanceof Response
        ? answer
        : new Response(answer.body, { status: answer.init.status, headers: new Headers(answer.init.headers) })
  response.headers.set(VERSION_HEADER, version)
  response.headers.append(
    'set-cookie',
    `${VERSION_COOKIE}=${version}; Path=/; Max-Age=${VERSION_COOKIE_MAX_AGE_S}; HttpOnly; SameSite=Lax${secure ? '; Secure' : ''}`,
  )
  return response
}

/**
 * `around(request, route)` answers a request by its route as read-your-writes says. GET and HEAD without a version
 * run as they come (nothing more on the hot reads' path than looking for the header and the cookie); other methods run
 * with a record of whether they committed, and when they did and answer below 400, the answer names the version after
 * it. `secure`: the cookie is marked Secure (the public URL is https).
 */
export function readYourWrites(versions: Versions, secure: () => boolean) {
  const counts: Record<Reached | 'waited' | 'given', number> = { heard: 0, waited: 0, behind: 0, ignored: 0, given: 0 }
  let waitedMs = 0

  async function written(state: RequestReads, request: Request, route: Route): Promise<Answer> {
    const answer = await readingAs(state, () => route(request))
    if (!state.wrote || statusOf(answer) >= 400) return answer
    let version: string
    try {
      version = await versions.version()
    } catch {
      return answer // the database went away after the commit: the answer is no less true without a version
    }
    counts.given++
    return stamped(answer, version, secure())
  }

  function runAs(request: Request, route: Route, carried: string, reached: Reached): Answer | Promise<Answer> {
    counts[reached]++
    const state: RequestReads = { version: reached === 'ignored' ? null : carried, fresh: reached === 'behind', wrote: false }
    const method = request.method
    if (method === 'GET' || method === 'HEAD') return state.version === null ? route(request) : readingAs(state, () => route(request))
    return written(state, request, route)
  }

  function around(request: Request, route: Route): Answer | Promise<Answer> {
    const carried = carriedVersion(request.headers)
    if (carried === null) {
      const method = request.method
      return method === 'GET' || method === 'HEAD' ? route(request) : written({ version: null, fresh: false, wrote: false }, request, route)
    }
    const reached = versions.reach(carried, VERSION_WAIT_MS)
    if (!(reached instanceof Promise)) return runAs(request, route, carried, reached)
    const started = performance.now()
    return reached.then((outcome) => {
      waitedMs += performance.now() - started
      if (outcome === 'heard') counts.waited++
      return runAs(request, route, carried, outcome)
    })
  }

  /** The series of /metrics: requests by what became of the version they carried, the time waited, versions given. */
  function metrics(): string[] {
    return [
      '# HELP trellis_read_versions_total Requests that carried a version (read-your-writes), by outcome: heard (at ' +
        'once or after a wait), behind (read fresh after the wait), ignored (never written).',
      '# TYPE trellis_read_versions_total counter',
      ...(['heard', 'behind', 'ignored'] as const).map((outcome) => `trellis_read_versions_total{outcome="${outcome}"} ${counts[outcome]}`),
      '# HELP trellis_read_versions_waited_total Requests whose version was heard only after a wait.',
      '# TYPE trellis_read_versions_waited_total counter',
      `trellis_read_versions_waited_total ${counts.waited}`,
      '# HELP trellis_read_version_wait_seconds_total Time requests waited for the version they carried.',
      '# TYPE trellis_read_version_wait_seconds_total counter',
      `trellis_read_version_wait_seconds_total ${waitedMs / 1000}`,
      '# HELP trellis_write_versions_total Answers to writes that carried the version after them.',
      '# TYPE trellis_write_versions_total counter',
      `trellis_write_versions_total ${counts.given}`,
    ]
  }

  return { around, metrics }
}
export type ReadYourWrites = ReturnType<typeof readYourWrites>
