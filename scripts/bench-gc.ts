// Content garbage collection at scale: a store of N small blocks (a tenth of them orphans, the rest named), collected
// as a dry run and for real, against a baseline from the same run — listing the same store's keys alone. Also the
// longest the event loop waited meanwhile (what a request served during an online collection would wait).
//
//   bun scripts/bench-gc.ts [blocks=100000]
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LevelBlockstore } from 'blockstore-level'
import { openContent } from '../src/content/open.ts'
import { usageOf } from '../dev/usage.ts'

const usage = usageOf('bun scripts/bench-gc.ts [blocks=100000]')
const count = Number(process.argv[2] ?? 100_000)
if (!Number.isInteger(count) || count < 1000) usage('blocks must be an integer ≥ 1000')

const dir = mkdtempSync(join(tmpdir(), 'trellis-bench-gc-'))
try {
  let content = await openContent(dir)
  const cids: string[] = []
  for (let i = 0; i < count; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, count - i) }, (_, j) =>
      content.put(new TextEncoder().encode(`item ${i + j} ${'x'.repeat(500)}`)),
    )
    cids.push(...(await Promise.all(batch)).map((stored) => stored.cid))
  }
  await content.close()
  const named = cids.slice(0, Math.floor(count * 0.9))

  const keys = new LevelBlockstore(join(dir, 'blocks'))
  await keys.open()
  let started = performance.now()
  let listed = 0
  for await (const _ of keys.db.keys()) listed++
  const baselineMs = performance.now() - started
  await keys.close()

  content = await openContent(dir)
  let longestWait = 0
  let last = performance.now()
  const ticker = setInterval(() => {
    const now = performance.now()
    longestWait = Math.max(longestWait, now - last)
    last = now
  }, 1)
  const timed = async (dryRun: boolean) => {
    longestWait = 0
    last = started = performance.now()
    const result = await content.collect(() => named, { dryRun, progress: () => {} })
    return { ms: performance.now() - started, wait: longestWait, result }
  }
  const dry = await timed(true)
  const real = await timed(false)
  clearInterval(ticker)
  await content.close()

  console.log(`baseline: listing ${listed} keys alone: ${baselineMs.toFixed(0)} ms`)
  for (const [name, run] of [
    ['gc --dry-run', dry],
    ['gc', real],
  ] as const) {
    console.log(
      `${name}: ${run.ms.toFixed(0)} ms = ${(run.ms / baselineMs).toFixed(1)} x baseline; longest ` +
        `event-loop wait ${run.wait.toFixed(0)} ms; ${JSON.stringify(run.result)}`,
    )
  }
} finally {
  rmSync(dir, { recursive: true, force: true })
}
