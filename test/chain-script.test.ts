// scripts/chain.ts stops its anvil when told to: SIGTERM to the script itself, and SIGTERM to `npx bun
// scripts/chain.ts` as the README starts it (npm passes the signal to its shell only, never to the script).
import { afterEach, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { waitForLine } from '../dev/lines.ts'

const ROOT = join(import.meta.dir, '..')
let started: Subprocess<'ignore', 'pipe', 'pipe'> | undefined
let anvil: number | undefined
afterEach(async () => {
  if (anvil && alive(anvil)) process.kill(anvil, 'SIGKILL') // a failed test leaves no chain behind
  started?.kill('SIGKILL')
  await started?.exited
})

/** State and parent of a process, from /proc (null when it is gone). */
function stat(pid: number): { state: string; ppid: number } | null {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ')
    return { state: fields[0]!, ppid: Number(fields[1]) }
  } catch {
    return null
  }
}
const alive = (pid: number) => {
  const s = stat(pid)
  return s !== null && s.state !== 'Z' && s.state !== 'X'
}

/** The anvil process among the descendants of `root`. */
function anvilUnder(root: number): number | undefined {
  const pids = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
  const family = new Set([root])
  for (let grew = true; grew; ) {
    grew = false
    for (const pid of pids) {
      const s = stat(pid)
      if (s && family.has(s.ppid) && !family.has(pid)) {
        family.add(pid)
        grew = true
      }
    }
  }
  return [...family].find(
    (pid) =>
      pid !== root && existsSync(`/proc/${pid}/cmdline`) && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0]!.endsWith('/anvil'),
  )
}

async function startScript(command: string[]): Promise<{ rpcUrl: string }> {
  started = Bun.spawn(command, { cwd: ROOT, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  const rpcUrl = await waitForLine(started.stdout, (line) => /^anvil: (http:\/\/127\.0\.0\.1:\d+)/.exec(line)?.[1], {
    timeoutMs: 60_000,
    what: 'scripts/chain.ts',
  })
  anvil = anvilUnder(started.pid)
  expect(anvil).toBeNumber()
  return { rpcUrl }
}

async function expectGone(pid: number, rpcUrl: string) {
  for (let i = 0; i < 100 && alive(pid); i++) await Bun.sleep(100)
  expect(alive(pid)).toBe(false)
  const answer = await fetch(rpcUrl, {
    method: 'POST',
    body: '{"jsonrpc":"2.0","id":1,"method":"eth_chainId"}',
    headers: { 'content-type': 'application/json' },
  }).then(
    () => 'answered',
    () => 'refused',
  )
  expect(answer).toBe('refused')
}

test('SIGTERM to the script stops anvil', async () => {
  const { rpcUrl } = await startScript([process.execPath, 'scripts/chain.ts'])
  started!.kill('SIGTERM')
  expect(await started!.exited).toBe(0)
  await expectGone(anvil!, rpcUrl)
}, 90_000)

test('SIGTERM to `npx bun scripts/chain.ts` (the README way) stops anvil', async () => {
  const { rpcUrl } = await startScript(['npx', 'bun', 'scripts/chain.ts'])
  started!.kill('SIGTERM')
  await started!.exited
  await expectGone(anvil!, rpcUrl)
}, 90_000)
