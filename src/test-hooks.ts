// Hooks the tests use to reach states a real run takes hours or a crash to reach. One of them turns the SSRF guard
// off, so none may work by accident: the executable has none (scripts/build.ts defines TRELLIS_BUILD_COMMIT, and the
// check below then drops them) unless built for the test suite (--test-hooks), and they need TRELLIS_TEST_HOOKS=1
// as well. The server warns at start
// about every hook set, whether it is active or ignored.
export const TEST_HOOKS = [
  'TRELLIS_TEST_ALLOW_PRIVATE_FETCH',
  'TRELLIS_TEST_CLOCK_OFFSET_S',
  'TRELLIS_TEST_CLOCK_FILE',
  'TRELLIS_TEST_CRASH_AFTER_SETTLE',
  'TRELLIS_TEST_PAUSE_BEFORE_PENDING_MS',
  'TRELLIS_TEST_WEBHOOK_RETRY_S',
  'TRELLIS_TEST_WEBHOOK_GIVE_UP_S',
] as const

import { readFileSync } from 'node:fs'
import { setClockOffset } from './lib/clock.ts'

declare const TRELLIS_BUILD_COMMIT: string
declare const TRELLIS_BUILD_TEST_HOOKS: boolean

export interface TestHooks {
  /** Whether the hooks set take effect. */
  allowed: boolean
  /** The hook variables set (non-empty). */
  set: string[]
  /** Why they are ignored, when they are. */
  ignoredBecause: string | null
}

export function testHooks(env: Record<string, string | undefined>): TestHooks {
  const set = TEST_HOOKS.filter((name) => Boolean(env[name]))
  if (typeof TRELLIS_BUILD_COMMIT === 'string' && typeof TRELLIS_BUILD_TEST_HOOKS === 'undefined')
    return { allowed: false, set, ignoredBecause: 'the executable has no test hooks' }
  if (env.TRELLIS_TEST_HOOKS !== '1') return { allowed: false, set, ignoredBecause: 'test hooks need TRELLIS_TEST_HOOKS=1' }
  return { allowed: true, set, ignoredBecause: null }
}

/**
 * TRELLIS_TEST_CLOCK_FILE: on each SIGUSR2 the server's clock offset becomes the seconds the file holds, so a test
 * moves a running server past a deadline (its caches and jobs with it) instead of racing the deadline in real time.
 * `moved` hears each move; the function returned stops following.
 */
export function followTestClock(file: string, moved: (offsetS: number) => void): () => void {
  const onSignal = () => {
    const offset = Number(readFileSync(file, 'utf8').trim())
    if (!Number.isSafeInteger(offset)) return
    setClockOffset(offset)
    moved(offset)
  }
  process.on('SIGUSR2', onSignal)
  return () => void process.off('SIGUSR2', onSignal)
}
