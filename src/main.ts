// Entry point: flags + env → Config → server; SIGTERM/SIGINT shut down cleanly. The server and the stores (and
// with them the native addons) are loaded only by the commands that use them: --help and --version load neither.
import { ConfigError, HELP, urlHost } from './config.ts'
import { parseCommand } from './command-line.ts'
import { BuildCommitError, versionLine } from './version.ts'
import { setAddonDir } from './lib/native-addon.ts'
import { join } from 'node:path'

async function main(): Promise<void> {
  let command: ReturnType<typeof parseCommand>
  try {
    command = parseCommand(process.argv.slice(2), process.env)
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`trellis: ${error.message}\n`)
      process.exit(2)
    }
    throw error
  }
  if (command.kind === 'help') return void process.stdout.write(HELP)
  if (command.kind === 'version') {
    try {
      return void process.stdout.write(`${versionLine()}\n`)
    } catch (error) {
      if (!(error instanceof BuildCommitError)) throw error
      process.stderr.write(`trellis: ${error.message}\n`)
      process.exit(2)
    }
  }
  if (command.kind === 'mcp') {
    // Before anything touches a data directory or an addon: this process only speaks HTTP to a server, and its
    // stdout carries MCP messages alone (everything it says goes to stderr).
    const { runStdioMcp } = await import('./mcp/stdio.ts')
    return void (await runStdioMcp(command.options))
  }
  // The executable's native addons are put in the data directory, not $TMPDIR (see lib/native-addon.ts).
  setAddonDir(join(command.config.dataDir, 'cache', 'addons'))
  if (command.kind === 'healthcheck') {
    // The server on this host and port, as a container's HEALTHCHECK sees it from inside.
    const { host, port } = command.config
    const target = urlHost(host, host === '::' ? '[::1]' : '127.0.0.1') // the loopback of the wildcard's family
    const ok = await fetch(`http://${target}:${port}/health`, { signal: AbortSignal.timeout(5_000) }).then(
      (r) => r.status === 200,
      () => false,
    )
    if (!ok) process.stderr.write(`trellis: no healthy server at http://${target}:${port}/health\n`)
    process.exit(ok ? 0 : 1)
  }
  if (command.kind === 'data') {
    const loaded = await import('./ops/cli.ts').catch((error: Error) => {
      process.stderr.write(`trellis: ${error.message}\n`)
      process.exit(1)
    })
    process.exit(await loaded.runDataCommand(command.config, command.command, command.args, command.out))
  }
  if (command.kind === 'verify-ledger') {
    const loaded = await import('./verify-ledger.ts').catch((error: Error) => {
      process.stderr.write(`trellis: ${error.message}\n`)
      process.exit(1)
    })
    process.exit(await loaded.verifyLedger(command.config))
  }

  let server: Awaited<ReturnType<typeof import('./server.ts').startServer>>
  try {
    const { startServer } = await import('./server.ts') // loads the native addons: their failure is one line too
    server = await startServer(command.config)
  } catch (error) {
    process.stderr.write(`trellis: ${(error as Error).message}\n`)
    process.exit((error as { exitCode?: number }).exitCode ?? 1)
  }
  const shutdown = () => {
    server.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    )
  }
  // Every signal, not only the first: a supervisor that signals the whole group also reaches npm, which forwards its
  // own (and Ctrl-C reaches both), and a repeat must not kill the server halfway through its clean stop.
  process.on('SIGTERM', shutdown)
  process.on('SIGINT', shutdown)
}

await main()
