// A process that claims a data directory at an agreed instant (for the lock race in command-line.test.ts):
//   bun test/helpers/claim-data-dir.ts <data dir> <epoch ms>  → prints "held" or "refused", holds the claim 100 ms.
import { lockDataDir } from '../../src/store/lock.ts'

const [dataDir, at] = process.argv.slice(2)
while (performance.timeOrigin + performance.now() < Number(at)) {} // spin, not sleep: both wake within microseconds
try {
  lockDataDir(dataDir!)
  console.log('held')
  await Bun.sleep(100)
} catch {
  console.log('refused')
}
