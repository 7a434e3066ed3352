// The data operations by name, as the command line and the control socket call them.
import { backup, fileChunks, verify, writeCar, type DataAccess, type Progress } from './data.ts'
import type { TakedownKind, TakedownState } from '../models/moderation.ts'
import type { TakedownRecord } from '../models/records.ts'

/** Every takedown in `state`, newest first. */
async function listTakedowns(access: DataAccess, state: TakedownState): Promise<TakedownRecord[]> {
  const all: TakedownRecord[] = []
  for (;;) {
    const rows = await access.moderation.list(state, all.at(-1)?.id, 1000)
    all.push(...rows)
    if (rows.length < 1000) return all
  }
}

/** Paths in `args` are absolute (the caller's working directory is not the server's). */
export async function runOperation(access: DataAccess, command: string, args: string[], progress: Progress): Promise<unknown> {
  switch (command) {
    case 'backup':
      return backup(access, args[0]!, progress)
    case 'verify':
      return verify(access, progress)
    case 'export-car': {
      const [out, ...cids] = args
      return { file: out, roots: cids, blocks: await writeCar(access.content, cids, out!, progress) }
    }
    case 'import-car': {
      let blocks = 0
      return access.content.importCar(fileChunks(args[0]!), () => progress('blocks', ++blocks))
    }
    case 'gc': {
      // One collection at a time over shared records (PostgreSQL, several instances); the embedded store's lock on the
      // data directory already makes it so.
      const lease = await access.lease('gc')
      if (!lease) throw new Error('another trellis gc is collecting from these records: run it again once that one is done')
      try {
        return await access.content.collect(() => access.cids(), { dryRun: args.includes('--dry-run'), progress })
      } finally {
        await lease.release()
      }
    }
    case 'takedown':
    case 'reinstate': {
      const [kind, id, , reason] = args as [TakedownKind, string, string?, string?]
      return command === 'takedown' ? access.moderation.takeDown(kind, id, reason!) : access.moderation.reinstate(kind, id, reason ?? null)
    }
    case 'takedowns':
      return listTakedowns(access, (args[1] ?? 'standing') as TakedownState)
    default:
      throw new Error(`unknown operation ${command}`)
  }
}
