// The weight of each page type a reader sees: its HTML and the stylesheets and scripts it links (the same bytes a
// browser fetches; nothing else is linked, the CSP allows nothing from outside), as sent and gzipped.
//
//   npx bun scripts/bench/page-weights.ts [--small] [--url http://127.0.0.1:port]
//
// Without --url: builds nothing, starts dist/trellis on a copy of the seeded market (scripts/bench/dataset.ts) and stops
// it after. Prints one line per page type and a Markdown table (docs/performance.md).
import { rmSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { gzipSync } from 'bun'
import { freshCopy, seededDir } from './dataset.ts'
import { startTrellis } from './processes.ts'
import type { Manifest } from './seed.ts'
import { authHeaders, signer, signerKey } from './signing.ts'

const BROWSER = { accept: 'text/html,application/xhtml+xml', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0' }

const pageTypes = (m: Manifest): [string, string][] => [
  ['home', '/'],
  ['every feed', '/feeds'],
  ['category', `/categories/${m.category_id}`],
  ['tag', `/tags/${encodeURIComponent(m.tag)}`],
  ['search', '/search?q=benchmark'],
  ['feed', `/feeds/${m.hot_feed_id}`],
  ['free entry', `/feeds/${m.free_entry.feed_id}/entries/${m.free_entry.entry_id}`],
  ['paywall (402)', `/feeds/${m.paid_entry.feed_id}/entries/${m.paid_entry.entry_id}`],
  ['wallet (a buyer)', `/creators/${m.heavy_buyer_address}`],
  ['leaderboards', '/leaderboards'],
  ['not found (404)', '/no-such-page'],
]

/** The same-origin stylesheets and scripts a page links. */
const linked = (page: string): string[] =>
  [...page.matchAll(/<(?:link[^>]+rel="stylesheet"[^>]+href|script[^>]+src)="([^"]+)"/g)].map((match) => match[1]!.replaceAll('&amp;', '&'))

/**
 * The studio's pages as a creator with one feed sees them: the sign-in page, then (signed in to the studio, its
 * cookie sent as a browser's navigation sends it) the dashboard and the feed's page.
 */
async function studioPages(url: string): Promise<{ pages: [string, string][]; headers: Record<string, string> }> {
  const creator = signer(signerKey(901))
  const feed = await fetch(`${url}/v1/feeds`, { method: 'POST', headers: await authHeaders(url, creator), body: '{"name":"weighed"}' })
  const { id } = (await feed.json()) as { id: string }
  const opened = await fetch(`${url}/v1/auth/studio`, {
    method: 'POST',
    headers: { ...(await authHeaders(url, creator)), origin: url, 'sec-fetch-site': 'same-origin' },
  })
  const cookie = opened.headers.getSetCookie()[0]!.split(';')[0]!
  return {
    pages: [
      ['studio: dashboard (30 days, 4 charts)', '/studio'],
      ['studio: a feed (publish form)', `/studio/feeds/${id}`],
    ],
    headers: { ...BROWSER, cookie, 'sec-fetch-site': 'same-origin' },
  }
}

async function weigh(url: string, m: Manifest) {
  const rows: { type: string; status: number; html: number; assets: number; total: number; gzip: number }[] = []
  const studio = await studioPages(url)
  const asked: [string, string, Record<string, string>][] = [
    ...pageTypes(m).map(([type, path]): [string, string, Record<string, string>] => [type, path, BROWSER]),
    ['studio: sign-in', '/studio', BROWSER],
    ...studio.pages.map(([type, path]): [string, string, Record<string, string>] => [type, path, studio.headers]),
  ]
  for (const [type, path, headers] of asked) {
    const answer = await fetch(url + path, { headers })
    const page = await answer.text()
    let assets = 0
    let gzip = gzipSync(Buffer.from(page)).length
    for (const asset of linked(page)) {
      const bytes = Buffer.from(await (await fetch(new URL(asset, url + path), { headers: BROWSER })).arrayBuffer())
      assets += bytes.length
      gzip += gzipSync(bytes).length
    }
    const html = Buffer.byteLength(page)
    rows.push({ type, status: answer.status, html, assets, total: html + assets, gzip })
  }
  return rows
}

const kib = (n: number) => `${(n / 1024).toFixed(1)} KiB`

if (import.meta.main) {
  const args = process.argv.slice(2)
  const given = args.includes('--url') ? args[args.indexOf('--url') + 1] : undefined
  const seeded = await seededDir(args.includes('--small'), (line) => console.error(line))
  const dir = given ? null : freshCopy(seeded.dir)
  const server = dir ? await startTrellis(join(resolve(import.meta.dir, '..', '..'), 'dist', 'trellis'), dir, {}, '/health') : null
  try {
    const rows = await weigh(given ?? server!.url, seeded.manifest)
    console.log('| page type | status | HTML | CSS + JS | total | gzipped |\n|---|---|---|---|---|---|')
    for (const r of rows) console.log(`| ${r.type} | ${r.status} | ${kib(r.html)} | ${kib(r.assets)} | ${kib(r.total)} | ${kib(r.gzip)} |`)
  } finally {
    await server?.stop()
    if (dir) rmSync(dir, { recursive: true, force: true })
  }
}
