// Through PgBouncer (transaction mode) against straight to PostgreSQL (issue 41): the signed POST of a 1 KiB entry
// and uncached list pages, on two servers built from the tree, one database each on one throwaway cluster, in the
// same run, rounds alternated. The pooled server names its direct URL too (LISTEN and leases go there), as a
// deployment behind a pooler must; its requests go through the pooler. Uncached: the read memo is off
// (TRELLIS_READ_MEMO_MB=0), so every list page is read from the database.
//
//   npx bun scripts/bench/measure-pooler.ts [--posts 2000] [--seconds 3] [--rounds 3]
import { startPostgres } from '../../dev/postgres.ts'
import { startPgBouncer } from '../../dev/pgbouncer.ts'
import { emptyDatabase } from '../../dev/test-database.ts'
import type { TestServer } from '../../dev/server.ts'
import { builtTestServers } from './built-server.ts'
import { b64, createEntry, createFeed, newWallet } from '../../dev/api.ts'
import { signedPosts } from './measure-writes.ts'
import { ensureWrk, wrk } from './wrk.ts'

const arg = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`)
  return at > 0 ? Number(process.argv[at + 1]) : fallback
}
const POSTS = arg('posts', 2000)
const SECONDS = arg('seconds', 3)
const ROUNDS = arg('rounds', 3)

const startTestServer = await builtTestServers()

ensureWrk((line) => console.error(line))
const postgres = await startPostgres({ settings: ['max_connections=300'] })
const bouncer = await startPgBouncer(postgres.port)
const servers: TestServer[] = []
try {
  const common = { TRELLIS_RATE_LIMIT: 'off', TRELLIS_LOG: 'warn', TRELLIS_READ_MEMO_MB: '0', TRELLIS_RPC_URL: 'http://127.0.0.1:9' }
  const directDb = await emptyDatabase(postgres.adminUrl)
  const pooledDb = await emptyDatabase(postgres.adminUrl)
  const direct = await startTestServer({ ...common, TRELLIS_DATABASE_URL: directDb })
  const pooled = await startTestServer({
    ...common,
    TRELLIS_DATABASE_URL: bouncer.pooled(pooledDb),
    TRELLIS_DATABASE_DIRECT_URL: pooledDb,
  })
  servers.push(direct, pooled)
  const targets = [
    ['direct', direct],
    ['through PgBouncer', pooled],
  ] as const

  // A market to list: 40 feeds of 25 entries each, on both.
  const listPaths = await Promise.all(
    targets.map(async ([, server]) => {
      let feedId = ''
      for (let f = 0; f < 40; f++) {
        const owner = newWallet()
        feedId = (await createFeed(server.url, owner, { name: `feed ${f}` })).id
        await Promise.all(Array.from({ length: 25 }, (_, e) => createEntry(server.url, owner, feedId, { content_base64: b64(`e${e}`) })))
      }
      return [`/v1/feeds?page_size=20`, `/v1/feeds/${feedId}/entries?page_size=25`]
    }),
  )

  const figures = new Map<string, number[]>()
  const note = (name: string, value: number) => figures.set(name, [...(figures.get(name) ?? []), value])
  for (let round = 0; round < ROUNDS; round++) {
    for (const [at, [name, server]] of targets.entries()) {
      const posts = await signedPosts(server.url, POSTS / ROUNDS)
      note(`signed POST of an entry, ${name}`, posts.rps)
      for (const path of listPaths[at]!)
        note(
          `GET ${path.split('?')[0]!.replace(/\/v1\/feeds\/[^/]+/, '/v1/feeds/{id}')}, uncached, ${name}`,
          (await wrk(`${server.url}${path}`, SECONDS)).rps,
        )
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
  for (const [name, values] of figures)
    console.log(`${name}: ${median(values).toFixed(0)} req/s (median of ${values.length}; ${values.map((v) => v.toFixed(0)).join(', ')})`)
} finally {
  for (const server of servers) await server.dispose()
  await bouncer.stop()
  await postgres.stop()
}
