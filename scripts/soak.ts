// The soak: a server under a steady mixed load (reads of every kind, uploads, deletes) for many minutes, its resident
// memory sampled all along, so a leak or an unbounded cache shows as a slope instead of a plateau.
//
//   npx bun scripts/soak.ts [--minutes 30] [--rate 120] [--active 3000] [--binary dist/trellis] [--out soak.json]
//
// --active: once the market holds this many active entries, each upload is followed by the delete of an old one, so
// the market the server serves (lists, leaderboards, statistics) stops growing while writes go on; 0 lets it grow.
//
// The server runs from source (or --binary) on a fresh data directory, on 127.0.0.1 only. Every request of the mix is
// bounded: at most 64 in flight (a request that would pass that is counted as shed, not queued), and the run stops
// by itself. It prints a line every 30 s and at the end the RSS at each tenth of the run; it exits 1 when the last
// half grew by more than --max-growth percent (default 10) of the RSS at half time.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'
import { authHeaders, signer, signerKey } from './bench/signing.ts'
import { startTrellis } from './bench/processes.ts'
import { usageOf } from '../dev/usage.ts'

const ROOT = resolve(import.meta.dir, '..')
const HELP = 'npx bun scripts/soak.ts [--minutes 30] [--rate 120] [--active 3000] [--binary <path>] [--out <file.json>] [--max-growth 10]'
const args = process.argv.slice(2)
const usage = usageOf(HELP)
const OPTIONS = ['--minutes', '--rate', '--active', '--binary', '--out', '--max-growth']
for (let i = 0; i < args.length; i += 2)
  if (!OPTIONS.includes(args[i]!) || args[i + 1] === undefined) usage(`unknown or incomplete option: ${args[i]}`)
const option = (name: string) => {
  const i = args.indexOf(name)
  return i >= 0 ? args[i + 1] : undefined
}
const minutes = Number(option('--minutes') ?? 30)
const rate = Number(option('--rate') ?? 120)
const maxGrowthPct = Number(option('--max-growth') ?? 10)
const activeCap = Number(option('--active') ?? 3000)
if (![minutes, rate, maxGrowthPct, activeCap].every((n) => Number.isFinite(n) && n >= 0)) usage('numbers only, none negative')
const out = option('--out')
const binary = option('--binary')
const MAX_IN_FLIGHT = 64
const ENTRIES_PER_FEED = 900 // under the 1,000-entry limit of a feed, with room for the large items
const BOARDS = [
  'trending',
  'top-feeds',
  'category-stats',
  'recent-entries?page_size=100',
  'most-popular?period=7d',
  'top-revenue?period=all',
  'top-providers?period=30d',
  'top-buyers?period=1d',
]

const dataDir = mkdtempSync(join(tmpdir(), 'trellis-soak-'))
const command = binary ? resolve(binary) : process.execPath
const server = await startTrellis(command, dataDir, {}, '/health', binary ? [] : ['--no-env-file', join(ROOT, 'src/main.ts')])
const url = server.url
/** The server's own account of its memory (/metrics): JavaScript heap in use and its two bounded caches, in MiB. */
async function memory(): Promise<{ heap_mib: number; caches_mib: number }> {
  const text = await (await fetch(`${url}/metrics`)).text()
  const value = (series: string) =>
    Number(
      text
        .split('\n')
        .find((l) => l.startsWith(`${series} `))
        ?.split(' ')[1] ?? Number.NaN,
    ) /
    2 ** 20
  return {
    heap_mib: value('trellis_js_heap_bytes{kind="used"}'),
    caches_mib: value('trellis_cache_bytes{cache="content"}') + value('trellis_cache_bytes{cache="reads"}'),
  }
}
/** Resident memory from /proc, in MiB: all of it, and its anonymous (heap, buffers) and file-backed (mapped files) parts. */
const resident = () => {
  const status = readFileSync(`/proc/${server.pid}/status`, 'utf8')
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(status)?.[1] ?? Number.NaN) / 1024
  return { rss_mib: field('VmRSS'), anon_mib: field('RssAnon'), file_mib: field('RssFile') }
}

// The market the readers walk: writers with one feed each (more are made as feeds fill), entries small and large.
interface Writer {
  account: ReturnType<typeof signer>
  feedId: string
  ownerId: string
  entries: string[]
  made: number
}
const writers: Writer[] = []
let nextSigner = 0
async function newWriter(): Promise<Writer> {
  const account = signer(signerKey(1000 + nextSigner++))
  const response = await fetch(`${url}/v1/feeds`, {
    method: 'POST',
    headers: await authHeaders(url, account),
    body: JSON.stringify({ name: `soak ${nextSigner}`, tags: ['soak', `s${nextSigner % 7}`] }),
  })
  if (response.status !== 201) throw new Error(`create feed: ${response.status} ${await response.text()}`)
  const feed = (await response.json()) as { id: string; owner_id: string }
  const writer = { account, feedId: feed.id, ownerId: feed.owner_id, entries: [], made: 0 }
  writers.push(writer)
  return writer
}
async function upload(writer: Writer, bytes: number, free = true): Promise<Response> {
  const body = JSON.stringify({
    content_base64: Buffer.alloc(bytes, `soak ${writer.made} `).toString('base64'),
    mime_type: 'text/plain',
    title: `soak ${writer.made}`,
    tags: ['soak'],
    ...(free ? {} : { is_free: false, price: { amount: '10000', currency: 'USDC' } }),
  })
  writer.made++
  const response = await fetch(`${url}/v1/feeds/${writer.feedId}/entries`, {
    method: 'POST',
    headers: await authHeaders(url, writer.account),
    body,
  })
  if (response.status === 201) writer.entries.push(((await response.clone().json()) as { id: string }).id)
  return response
}
for (let i = 0; i < 4; i++) {
  const writer = await newWriter()
  for (let j = 0; j < 20; j++) await upload(writer, 1024 + j * 256, j % 3 !== 0)
}
const large = writers[0]!
await upload(large, 1024 * 1024)
const largeEntry = large.entries.at(-1)!

let seed = 42
const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!
const anyEntry = () => {
  const writer = pick(writers)
  return { writer, id: writer.entries.length ? pick(writer.entries) : null }
}
let uploading = writers.at(-1)!
const activeEntries = () => writers.reduce((sum, writer) => sum + writer.entries.length, 0)
let balancingDeletes = 0
async function uploadSomewhere(bytes: number): Promise<Response> {
  if (uploading.made >= ENTRIES_PER_FEED) uploading = await newWriter()
  const response = await upload(uploading, bytes, random() < 0.7)
  if (response.status === 201 && activeCap > 0 && activeEntries() > activeCap) {
    // The oldest entry of the fullest feed other than the large item's: the market keeps its size.
    const writer = writers.filter((w) => w !== large).reduce((a, b) => (b.entries.length > a.entries.length ? b : a))
    const id = writer.entries.shift()!
    const deleted = await fetch(`${url}/v1/feeds/${writer.feedId}/entries/${id}`, {
      method: 'DELETE',
      headers: await authHeaders(url, writer.account),
    })
    await deleted.arrayBuffer()
    if (deleted.status !== 204) firstError ??= `balancing delete: ${deleted.status}`
    balancingDeletes++
  }
  return response
}

/** One request of the mix, by weight. */
async function oneRequest(): Promise<Response> {
  const roll = random() * 100
  if (roll < 30)
    return fetch(`${url}/v1/feeds?page_size=${1 + Math.floor(random() * 50)}${random() < 0.5 ? `&tags=s${Math.floor(random() * 7)}` : ''}`)
  if (roll < 45) return fetch(`${url}/v1/feeds/${pick(writers).feedId}/entries?page_size=${1 + Math.floor(random() * 50)}`)
  if (roll < 55) {
    const { writer, id } = anyEntry()
    return fetch(`${url}/v1/feeds/${writer.feedId}/entries/${id ?? largeEntry}`)
  }
  if (roll < 63) {
    const { writer, id } = anyEntry()
    return fetch(`${url}/v1/feeds/${writer.feedId}/entries/${id ?? largeEntry}/content`) // paid ones answer 402
  }
  if (roll < 65)
    return fetch(
      `${url}/v1/feeds/${large.feedId}/entries/${largeEntry}/content`,
      random() < 0.5 ? { headers: { range: `bytes=${Math.floor(random() * 900_000)}-` } } : {},
    )
  if (roll < 75) return fetch(`${url}/v1/leaderboards/${pick(BOARDS)}`)
  if (roll < 78) return fetch(`${url}/v1/wallets/${pick(writers).ownerId}/stats`)
  if (roll < 80) return fetch(`${url}/v1/transactions?page_size=20`)
  if (roll < 81) return fetch(`${url}/metrics`)
  if (roll < 90) return uploadSomewhere(1024 + Math.floor(random() * 15 * 1024))
  if (roll < 90.5) return uploadSomewhere(256 * 1024 + Math.floor(random() * 256 * 1024))
  if (roll < 91.5) {
    const writer = pick(writers)
    const id =
      writer.entries.length > 30 && writer !== large ? writer.entries.splice(Math.floor(random() * writer.entries.length), 1)[0] : null
    if (id)
      return fetch(`${url}/v1/feeds/${writer.feedId}/entries/${id}`, { method: 'DELETE', headers: await authHeaders(url, writer.account) })
  }
  return fetch(`${url}/v1/feeds/${pick(writers).feedId}`)
}

const statuses: Record<string, number> = {}
const samples: {
  t_s: number
  rss_mib: number
  anon_mib: number
  file_mib: number
  heap_mib: number
  caches_mib: number
  requests: number
}[] = []
let inFlight = 0
let sent = 0
let shed = 0
let firstError: string | null = null
const started = performance.now()
const endAt = started + minutes * 60_000
const tick = 100 // ms; rate/10 requests are started each tick
let owed = 0
let lastPrint = started
samples.push({ t_s: 0, ...resident(), ...(await memory()), requests: 0 })
while (performance.now() < endAt) {
  owed += (rate * tick) / 1000
  for (; owed >= 1; owed--) {
    if (inFlight >= MAX_IN_FLIGHT) {
      shed++
      continue
    }
    inFlight++
    sent++
    oneRequest()
      .then(
        async (response) => {
          await response.arrayBuffer()
          const key = String(response.status)
          statuses[key] = (statuses[key] ?? 0) + 1
          if (response.status >= 500) firstError ??= `${response.status} ${response.url}`
        },
        (error) => {
          statuses.error = (statuses.error ?? 0) + 1
          firstError ??= String(error)
        },
      )
      .finally(() => inFlight--)
  }
  await Bun.sleep(tick)
  const now = performance.now()
  if (now - lastPrint >= 10_000) {
    samples.push({ t_s: Math.round((now - started) / 1000), ...resident(), ...(await memory()), requests: sent })
    if (now - lastPrint >= 30_000 || samples.length % 3 === 1) {
      const last = samples.at(-1)!
      console.log(
        `soak: t=${String(last.t_s).padStart(5)} s  rss=${last.rss_mib.toFixed(1)} MiB ` +
          `(anon ${last.anon_mib.toFixed(1)}, files ${last.file_mib.toFixed(1)})  ` +
          `heap=${last.heap_mib.toFixed(1)} MiB  caches=${last.caches_mib.toFixed(1)} MiB  ` +
          `requests=${sent}  shed=${shed}  feeds=${writers.length}  active=${activeEntries()}  ` +
          `statuses=${JSON.stringify(statuses)}`,
      )
    }
    lastPrint = now
  }
}
while (inFlight > 0) await Bun.sleep(50)
samples.push({ t_s: Math.round((performance.now() - started) / 1000), ...resident(), ...(await memory()), requests: sent })
await server.stop()
rmSync(dataDir, { recursive: true, force: true })

const at = (fraction: number) => samples[Math.min(samples.length - 1, Math.round(fraction * (samples.length - 1)))]!
const half = at(0.5).rss_mib
const lastHalf = samples.slice(Math.floor(samples.length / 2))
const growthPct = ((Math.max(...lastHalf.map((s) => s.rss_mib)) - half) / half) * 100
const summary = {
  minutes,
  rate,
  active_cap: activeCap,
  requests: sent,
  shed,
  statuses,
  balancing_deletes: balancingDeletes,
  active_entries: activeEntries(),
  first_error: firstError,
  rss_mib_by_tenth: Array.from({ length: 11 }, (_, i) => Number(at(i / 10).rss_mib.toFixed(1))),
  anon_mib_by_tenth: Array.from({ length: 11 }, (_, i) => Number(at(i / 10).anon_mib.toFixed(1))),
  file_mib_by_tenth: Array.from({ length: 11 }, (_, i) => Number(at(i / 10).file_mib.toFixed(1))),
  heap_mib_by_tenth: Array.from({ length: 11 }, (_, i) => Number(at(i / 10).heap_mib.toFixed(1))),
  caches_mib_by_tenth: Array.from({ length: 11 }, (_, i) => Number(at(i / 10).caches_mib.toFixed(1))),
  rss_max_mib: Number(Math.max(...samples.map((s) => s.rss_mib)).toFixed(1)),
  last_half_growth_pct: Number(growthPct.toFixed(1)),
  plateau: growthPct <= maxGrowthPct,
}
console.log(JSON.stringify(summary))
if (out) writeFileSync(out, JSON.stringify({ ...summary, samples }, null, 2))
process.exit(summary.plateau && !firstError ? 0 : 1)
