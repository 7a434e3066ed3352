// A process that claims a data directory at an agreed instant (for the lock race in startup.test.ts):
//   bun test/helpers/claim-data-dir.ts <data dir> <epoch ms>  → prints "held" or "refused". A holder keeps its claim
// until <data dir>/release exists (at most 30 s): however late the other process starts on a loaded machine, it
// tries while this one still holds.
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { lockDataDir } from '../../src/store/lock.ts'

const [dataDir, at] = process.argv.slice(2)
while (performance.timeOrigin + performance.now() < Number(at)) {} // spin, not sleep: both wake within microseconds
try {
  lockDataDir(dataDir!)
  console.log('held')
  const until = Date.now() + 30_000
  while (!existsSync(join(dataDir!, 'release')) && Date.now() < until) await Bun.sleep(5)
} catch {
  console.log('refused')
}
