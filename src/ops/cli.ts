// `trellis backup|restore|export-car|import-car|verify|gc`: on a running server's data directory the server does the
// work (over its control socket, while it serves); on a stopped one the command opens the stores itself.
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import type { Config, DataCommand } from '../config.ts'
import { lockDataDir, lockHolder } from '../store/lock.ts'
import { ownerOnlyFromNow } from '../store/permissions.ts'
import { databaseFile, recordsName, recordsPlace } from '../store/open.ts'
import { commandDataAccess, openDataContent, withDataStores } from './data-stores.ts'
import { restore, restoreIntoDatabase, type Progress, type VerifyReport } from './data.ts'
import { migrateToPostgres, type Migrated } from './migrate-to-postgres.ts'
import { CONTROL_SOCKET, runInServer } from './control.ts'
import { runOperation } from './commands.ts'
import { isUuid } from '../lib/ids.ts'
import { TAKEDOWN_STATES } from '../models/moderation.ts'

/** A progress line on a terminal, rewritten in place; nothing when stderr is not one. */
function terminalProgress(): Progress & { end(): void } {
  const tty = process.stderr.isTTY
  let shown = false
  const progress = ((what: string, done: number, total?: number) => {
    if (!tty) return
    shown = true
    process.stderr.write(`\r${what}: ${done}${total ? ` of ${total} (${Math.floor((100 * done) / total)}%)` : ''}   `)
  }) as Progress & { end(): void }
  progress.end = () => void (shown && process.stderr.write('\n'))
  return progress
}

/** The arguments the operation gets (absolute paths), or a usage error. */
function operationArgs(command: DataCommand, args: string[], out: string | undefined): string[] {
  const need = (ok: boolean, usage: string) => {
    if (!ok) throw new Error(`usage: trellis ${usage}`)
  }
  switch (command) {
    case 'backup':
      need(args.length === 1, 'backup <directory>')
      return [resolve(args[0]!)]
    case 'restore':
      need(
        args.filter((arg) => arg !== '--replace-nul').length === 1,
        'restore <backup directory> [--data-dir <empty directory> | --database-url <url> [--replace-nul]]',
      )
      return [resolve(args[0]!), ...args.slice(1)]
    case 'export-car':
      need(args.length >= 1 && out !== undefined, 'export-car <cid>... --out <file.car>')
      return [resolve(out!), ...args]
    case 'import-car':
      need(args.length === 1, 'import-car <file.car>')
      return [resolve(args[0]!)]
    case 'verify':
      need(args.length === 0, 'verify')
      return []
    case 'gc':
      need(
        args.every((arg) => arg === '--dry-run'),
        'gc [--dry-run]',
      )
      return args
    case 'takedown':
    case 'reinstate': {
      const usage = `${command} feed|entry <id> ${command === 'takedown' ? '--reason <why>' : '[--reason <why>]'}`
      const [kind, id, flag, reason, ...rest] = args
      need(
        (kind === 'feed' || kind === 'entry') &&
          id !== undefined &&
          rest.length === 0 &&
          (flag === undefined ? command === 'reinstate' : flag === '--reason'),
        usage,
      )
      need(isUuid(id!), `${usage} (the id is a UUID)`)
      return [kind!, id!.toLowerCase(), ...(flag ? [flag, reason!] : [])]
    }
    case 'takedowns':
      need(
        (args.length === 0 || (args[0] === '--state' && (TAKEDOWN_STATES as readonly string[]).includes(args[1]!))) && args.length <= 2,
        'takedowns [--state standing|reinstated|all]',
      )
      return args
    case 'migrate-to-postgres':
      need(
        args.every((arg) => arg === '--replace-nul'),
        'migrate-to-postgres --data-dir <dir> --database-url <postgres://…> [--replace-nul]',
      )
      return args
  }
}

/** Runs the operation on a stopped server's data directory, holding its lock meanwhile. */
async function runOffline(config: Config, command: DataCommand, args: string[], progress: Progress): Promise<unknown> {
  if (!config.databaseUrl && !existsSync(databaseFile(config.dataDir))) throw new Error(`no Trellis data directory at ${config.dataDir}`)
  await using locked = new AsyncDisposableStack()
  locked.defer(lockDataDir(config.dataDir))
  return await withDataStores(config, (records, content) =>
    runOperation(commandDataAccess(config, records, content), command, args, progress),
  )
}

/** A backup into the configured PostgreSQL (which holds no market yet): records, key, then content. */
async function restoreIntoConfigured(config: Config, backupDir: string, progress: Progress, replaceNul: boolean): Promise<unknown> {
  await using scratch = new AsyncDisposableStack()
  const dir = mkdtempSync(join(tmpdir(), 'trellis-restore-'))
  scratch.defer(() => rmSync(dir, { recursive: true, force: true }))
  return await withDataStores(config, async (records, content) =>
    restoreIntoDatabase(
      backupDir,
      { name: await recordsName(recordsPlace(config)), records, content, scratch: join(dir, 'schema.db') },
      progress,
      { replaceNul },
    ),
  )
}

/** The command's exit code: 0 done (verify: sound), 1 failed (verify: problems found), 2 bad usage. */
export async function runDataCommand(config: Config, command: DataCommand, positional: string[], out: string | undefined): Promise<number> {
  let args: string[]
  try {
    args = operationArgs(command, positional, out)
  } catch (error) {
    process.stderr.write(`trellis: ${(error as Error).message}\n`)
    return 2
  }
  // What a command writes (a restored data directory, the stores' new files, a backup, a CAR) holds the ledger, the
  // key or unpublished content: owner-only, as the server writes it.
  ownerOnlyFromNow()
  const progress = terminalProgress()
  const started = performance.now()
  try {
    let result: unknown
    const replaceNul = args.includes('--replace-nul')
    if (command === 'migrate-to-postgres') {
      result = await migrateToPostgres(config, progress, { replaceNul })
    } else if (command === 'restore' && config.databaseUrl) {
      result = await restoreIntoConfigured(config, args[0]!, progress, replaceNul)
    } else if (command === 'restore' && replaceNul) {
      throw new Error('--replace-nul is for a restore into PostgreSQL (--database-url): a data directory keeps text as it is')
    } else if (command === 'restore') {
      result = await restore(args[0]!, config.dataDir, (dir) => openDataContent({ ...config, dataDir: dir }, null), progress)
    } else if (lockHolder(config.dataDir) !== null) {
      // On either engine: the server's caches (an upload being spooled) live in the data directory it holds.
      const socket = join(config.dataDir, CONTROL_SOCKET)
      if (!existsSync(socket))
        throw new Error(
          `a server (pid ${lockHolder(config.dataDir)}) holds ${config.dataDir} but has no control socket: upgrade it or stop it first`,
        )
      result = await runInServer(socket, command, args, progress)
    } else {
      result = await runOffline(config, command, args, progress)
    }
    progress.end()
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`)
    process.stderr.write(`trellis ${command}: done in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
    if (command === 'migrate-to-postgres') return (result as Migrated).verify.ok ? 0 : 1
    return command === 'verify' && !(result as VerifyReport).ok ? 1 : 0
  } catch (error) {
    progress.end()
    process.stderr.write(`trellis ${command}: ${(error as Error).message}\n`)
    return 1
  }
}
