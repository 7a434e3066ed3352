// `bun scripts/with-postgres.ts <command…>`: runs the command with TRELLIS_TEST_POSTGRES set to the admin URL of a
// throwaway PostgreSQL cluster (dev/postgres.ts: initdb + pg_ctl on 127.0.0.1, no systemd), then stops the cluster
// and exits with the command's code. CI runs `npm test` so, the second pass of the suite (.ci/run).
import { startPostgres } from '../dev/postgres.ts'

const command = process.argv.slice(2)
if (command.length === 0) {
  process.stderr.write('usage: bun scripts/with-postgres.ts <command> [arguments]\n')
  process.exit(2)
}
const postgres = await startPostgres()
process.stderr.write(`with-postgres: a throwaway cluster at ${postgres.adminUrl}\n`)
let code = 1
try {
  const child = Bun.spawn(command, {
    stdio: ['inherit', 'inherit', 'inherit'],
    env: { ...process.env, TRELLIS_TEST_POSTGRES: postgres.adminUrl },
  })
  const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
  process.on('SIGINT', forward('SIGINT'))
  process.on('SIGTERM', forward('SIGTERM'))
  code = await child.exited
} finally {
  await postgres.stop()
}
process.exit(code)
