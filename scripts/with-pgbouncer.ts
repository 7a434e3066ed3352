// `bun scripts/with-pgbouncer.ts <command…>`: as scripts/with-postgres.ts, with Debian's PgBouncer in transaction mode
// in front of the throwaway cluster (dev/pgbouncer.ts): TRELLIS_TEST_POSTGRES is the cluster's admin URL (databases
// are made and dropped directly), TRELLIS_TEST_POOLER the pooler's, and each test server gets TRELLIS_DATABASE_URL
// through the pooler and TRELLIS_DATABASE_DIRECT_URL beside it (dev/test-database.ts). CI runs a subset so (.ci/run).
import { startPostgres } from '../dev/postgres.ts'
import { startPgBouncer } from '../dev/pgbouncer.ts'

const command = process.argv.slice(2)
if (command.length === 0) {
  process.stderr.write('usage: bun scripts/with-pgbouncer.ts <command> [arguments]\n')
  process.exit(2)
}
const postgres = await startPostgres()
let code = 1
try {
  const pooler = await startPgBouncer(postgres.port)
  const poolerUrl = pooler.pooled(postgres.adminUrl)
  process.stderr.write(`with-pgbouncer: a throwaway cluster at ${postgres.adminUrl}, PgBouncer (transaction mode) at ${poolerUrl}\n`)
  try {
    const child = Bun.spawn(command, {
      stdio: ['inherit', 'inherit', 'inherit'],
      env: { ...process.env, TRELLIS_TEST_POSTGRES: postgres.adminUrl, TRELLIS_TEST_POOLER: poolerUrl },
    })
    const forward = (signal: NodeJS.Signals) => () => child.kill(signal)
    process.on('SIGINT', forward('SIGINT'))
    process.on('SIGTERM', forward('SIGTERM'))
    code = await child.exited
  } finally {
    await pooler.stop()
  }
} finally {
  await postgres.stop()
}
process.exit(code)
