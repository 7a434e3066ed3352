// Entry point: flags + env → Config → server; SIGTERM/SIGINT shut down cleanly.
import { ConfigError, HELP, parseCommand } from './config.ts'
import { startServer } from './server.ts'
import { verifyLedger } from './verify-ledger.ts'
import { VERSION } from './version.ts'

async function main(): Promise<void> {
  let command
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
  if (command.kind === 'version') return void process.stdout.write(`trellis ${VERSION}\n`)
  if (command.kind === 'verify-ledger') process.exit(await verifyLedger(command.config))

  let server
  try {
    server = await startServer(command.config)
  } catch (error) {
    process.stderr.write(`trellis: ${(error as Error).message}\n`)
    process.exit(1)
  }
  const shutdown = () => {
    server.stop().then(() => process.exit(0), () => process.exit(1))
  }
  process.once('SIGTERM', shutdown)
  process.once('SIGINT', shutdown)
}

await main()
