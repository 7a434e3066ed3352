// A creator's analytics on the full benchmark market (issue 39): the p50 and p99 latency of
// GET /v1/wallets/{id}/analytics for the creator with the most sales (the manifest's top_seller_wallet_id: about 55k
// sales, most of them in the last 90 days), over the last 90 days by day, week and month, one signed request at a
// time on the embedded engine; and the time to stream the same range as CSV. Target: p99 ≤ 50 ms.
//
// The seeded creators' addresses have no keys. The copy gives the top seller's wallet, and the ledger rows paid to it,
// the address of a key made here, before the server opens it (and migrates it, building 026's tallies from those rows).
//
// --postgres: the rekeyed copy is moved into a throwaway PostgreSQL cluster (trellis migrate-to-postgres) and served
// from there.
//
//   npx bun scripts/bench/measure-analytics.ts [--requests N] [--postgres]
import { Database } from 'bun:sqlite'
import { SQL } from 'bun'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { anySeededDir, freshCopy } from './dataset.ts'
import { jobsSettled, startTrellis } from './processes.ts'
import { authHeaders, signer, signerKey } from './signing.ts'
import { openCluster, type Cluster } from './postgres.ts'

const at = process.argv.indexOf('--requests')
const REQUESTS = at > 0 ? Number(process.argv[at + 1]) : 200
const WARM_UP = 20
const DAY = 86_400
const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const log = (line: string) => console.error(line)
const POSTGRES = process.argv.includes('--postgres')

/** The copy moved into a new database of a throwaway cluster: the environment a server reads it there with. */
async function onPostgres(cluster: Cluster, dataDir: string): Promise<Record<string, string>> {
  const { url } = await cluster.createDatabase()
  const started = performance.now()
  const moved = Bun.spawnSync([process.execPath, MAIN, 'migrate-to-postgres', '--data-dir', dataDir, '--database-url', url], {
    env: { ...process.env, TRELLIS_LOG: 'warn' },
    stdout: 'pipe',
    stderr: 'pipe',
  })
  if (moved.exitCode !== 0)
    throw new Error(
      `migrate-to-postgres exited ${moved.exitCode}: ${moved.stdout.toString().slice(-800)} ${moved.stderr.toString().slice(-500)}`,
    )
  log(`bench: moved into PostgreSQL in ${Math.round(performance.now() - started)} ms`)
  await cluster.settle(url)
  return { TRELLIS_DATABASE_URL: url }
}

/** rekey, in the PostgreSQL a copy was moved into (moved first: its verify compares the copy as it was seeded). */
async function rekeyPostgres(url: string, walletId: string, address: string): Promise<number> {
  const db = new SQL(url, { max: 1 })
  try {
    return await db.begin(async (tx) => {
      const [{ address_lc: old }] = await tx`SELECT address_lc FROM wallets WHERE id = ${walletId}`
      const lc = address.toLowerCase()
      await tx`UPDATE wallets SET address = ${address}, address_lc = ${lc} WHERE id = ${walletId}`
      await tx`UPDATE seller_buyer_days SET pay_to_lc = ${lc} WHERE pay_to_lc = ${old}`
      return (await tx`UPDATE transactions SET pay_to = ${address}, pay_to_lc = ${lc} WHERE pay_to_lc = ${old}`).count
    })
  } finally {
    await db.close()
  }
}

/** The copy's top seller takes `address`: its wallet, its ledger rows, and (when the copy has them) 026's tallies of them. */
function rekey(dataDir: string, walletId: string, address: string): number {
  const db = new Database(join(dataDir, 'trellis.db'))
  try {
    const old = db.query<{ address_lc: string }, [string]>('SELECT address_lc FROM wallets WHERE id = ?').get(walletId)!.address_lc
    const tallied = db.query("SELECT 1 FROM sqlite_master WHERE name = 'seller_buyer_days'").get() !== null
    return db.transaction(() => {
      db.query('UPDATE wallets SET address = ?, address_lc = ? WHERE id = ?').run(address, address.toLowerCase(), walletId)
      if (tallied) db.query('UPDATE seller_buyer_days SET pay_to_lc = ? WHERE pay_to_lc = ?').run(address.toLowerCase(), old)
      return db.query('UPDATE transactions SET pay_to = ?, pay_to_lc = ? WHERE pay_to_lc = ?').run(address, address.toLowerCase(), old)
        .changes
    })()
  } finally {
    db.close()
  }
}

const day = (seconds: number) => new Date(seconds * 1000).toISOString().slice(0, 10)

/** The studio's dashboard (totals, four charts, the feeds) for the owner, as its browser asks for it, one at a time. */
async function studioDashboard(url: string, path: string) {
  const opened = await fetch(`${url}/v1/auth/studio`, {
    method: 'POST',
    headers: { ...(await authHeaders(url, owner)), origin: url, 'sec-fetch-site': 'same-origin' },
  })
  if (opened.status !== 200) throw new Error(`POST /v1/auth/studio answered ${opened.status}`)
  const headers = { cookie: opened.headers.getSetCookie()[0]!.split(';')[0]!, 'sec-fetch-site': 'same-origin', accept: 'text/html' }
  const times: number[] = []
  let bytes = 0
  for (let i = 0; i < WARM_UP + REQUESTS; i++) {
    const t = performance.now()
    const answer = await fetch(`${url}${path}`, { headers })
    const page = await answer.text()
    if (answer.status !== 200 || !page.includes('id="chart-revenue"'))
      throw new Error(`${path} answered ${answer.status} without its charts`)
    if (i >= WARM_UP) times.push(performance.now() - t)
    bytes = page.length
  }
  times.sort((a, b) => a - b)
  return { p50_ms: percentile(times, 0.5), p99_ms: percentile(times, 0.99), requests: REQUESTS, bytes }
}

const percentile = (sorted: number[], q: number) => Number(sorted[Math.floor(q * (sorted.length - 1))]!.toFixed(2))

const { dir, manifest } = await anySeededDir(false, log)
log(`bench: copying ${dir}`)
const copy = freshCopy(dir)
const owner = signer(signerKey(39))
try {
  const cluster = POSTGRES ? await openCluster(null, log) : null
  const records = cluster ? await onPostgres(cluster, copy) : {}
  const sales = records.TRELLIS_DATABASE_URL
    ? await rekeyPostgres(records.TRELLIS_DATABASE_URL, manifest.top_seller_wallet_id, owner.address)
    : rekey(copy, manifest.top_seller_wallet_id, owner.address)
  log(`bench: the top seller's ${sales} sales are paid to ${owner.address}; starting the server (it migrates the copy)`)
  const started = performance.now()
  const env = { TRELLIS_STATS_REFRESH_S: '3600', TRELLIS_RANKINGS_REFRESH_S: '3600', ...records }
  const server = await startTrellis(process.execPath, copy, env, '/health', [MAIN])
  const startMs = Math.round(performance.now() - started)
  await jobsSettled(server.url)
  log(`bench: serving after ${startMs} ms (the migration included); the start-up jobs are done`)
  try {
    const url = (query: string) => `${server.url}/v1/wallets/${manifest.top_seller_wallet_id}/analytics?${query}`
    const to = Math.floor(Date.now() / 1000)
    const from = to - 90 * DAY
    /** Each request signed afresh (every nonce made before the clock starts), one at a time; its answer's last body. */
    async function timed(path: string) {
      const signed = await Promise.all(Array.from({ length: WARM_UP + REQUESTS }, () => authHeaders(server.url, owner)))
      const times: number[] = []
      let body: any = null
      for (const [i, headers] of signed.entries()) {
        const t = performance.now()
        const answer = await fetch(path, { headers })
        body = await answer.json()
        if (answer.status !== 200) throw new Error(`${path} answered ${answer.status}: ${JSON.stringify(body)}`)
        if (i >= WARM_UP) times.push(performance.now() - t)
      }
      times.sort((a, b) => a - b)
      return { figures: { p50_ms: percentile(times, 0.5), p99_ms: percentile(times, 0.99), requests: REQUESTS }, body }
    }
    // What any signed read costs here (the signature checked, its nonce spent): the wallet's webhooks, none.
    const results: Record<string, unknown> = {
      'signed GET /v1/webhooks (for comparison)': (await timed(`${server.url}/v1/webhooks`)).figures,
    }
    for (const interval of ['day', 'week', 'month']) {
      const { figures, body } = await timed(url(`from=${from}&to=${to}&interval=${interval}`))
      results[`90 days by ${interval}`] = { ...figures, totals: body.totals, series_points: body.series.length }
    }
    const t = performance.now()
    const csv = await fetch(url(`from=${from}&to=${to}&format=csv`), { headers: await authHeaders(server.url, owner) })
    const text = await csv.text()
    if (csv.status !== 200) throw new Error(`the CSV answered ${csv.status}`)
    results['90 days as CSV'] = { ms: Math.round(performance.now() - t), rows: text.split('\n').length - 2, bytes: text.length }
    results['studio dashboard, 90 days by day'] = await studioDashboard(server.url, `/studio?from=${day(from)}&to=${day(to - DAY)}`)
    console.log(
      JSON.stringify(
        {
          engine: cluster ? `PostgreSQL ${cluster.version}` : 'embedded',
          wallet: manifest.top_seller_wallet_id,
          start_ms: startMs,
          ...results,
        },
        null,
        2,
      ),
    )
  } finally {
    await server.stop()
    await cluster?.close()
  }
} finally {
  rmSync(copy, { recursive: true, force: true })
}
