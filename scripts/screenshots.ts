// The README's and docs/browser.md's screenshots, made again: a server on a fresh data directory with a small market
// (feeds with covers, categories and tags, a Markdown entry, paid entries, a pass on sale), shot in Debian's Chromium
// at desktop (1280 px) and phone (390 px) width.
//
//   npx bun scripts/screenshots.ts [--out docs/screenshots]
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { startTestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { launchChromium } from '../dev/browser.ts'

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1]! : 'docs/screenshots'
mkdirSync(out, { recursive: true })

const cover = (sky: string, hill: string) =>
  `data:image/svg+xml;base64,${b64(
    `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 180"><rect width="320" height="180" fill="${sky}"/>` +
      `<circle cx="230" cy="70" r="24" fill="#f4a259"/><path d="M0 120 Q80 70 160 115 T320 100 V180 H0Z" fill="${hill}"/></svg>`,
  )}`
const NOTE = [
  '# The dawn chorus',
  '',
  'Recorded at **5:12 am** on the north ridge: a blackbird first, then the wrens.',
  '',
  '- Blackbird, 5:12',
  '- Wren, 5:14',
  '- Robin, 5:20',
  '',
  '> Stand still for ten minutes and the hill starts to sing.',
].join('\n')

const server = await startTestServer()
const browser = await launchChromium()
try {
  const creator = newWallet()
  const categories = (await call(server.url, 'GET', '/v1/categories?page_size=3')).body.data
  const feeds = []
  const made = [
    ['Field recordings', 'Sounds from the hills, weekly.', ['audio', 'nature'], '#fde9c9', '#2d6a4f'],
    ['Tide tables', 'High and low water for the bay, every day.', ['sea', 'data'], '#cde8f6', '#1d4e89'],
    ['Hill notes', 'Short notes from long walks.', ['nature', 'walking'], '#e9e4f7', '#5b4b8a'],
  ] as const
  for (const [i, [name, description, tags, sky, hill]] of made.entries()) {
    const body = { name, description, tags: [...tags], image_url: cover(sky, hill), category_id: categories[i % 3].id }
    feeds.push(await createFeed(server.url, creator, body))
  }
  const note = await createEntry(server.url, creator, feeds[0].id, {
    content_base64: b64(NOTE),
    mime_type: 'text/markdown',
    title: 'Dawn chorus notes',
    description: 'Where and when, bird by bird',
    tags: ['birds'],
  })
  const paid = await createEntry(server.url, creator, feeds[0].id, {
    content_base64: b64('The full recording.'),
    mime_type: 'text/plain',
    title: 'The whole dawn, 40 minutes',
    description: 'The recording, uncut',
    is_free: false,
    price: { amount: '250000', currency: 'USDC' },
  })
  await call(server.url, 'PUT', `/v1/feeds/${feeds[0].id}/pass`, {
    wallet: creator,
    body: { price: { amount: '2000000', currency: 'USDC' }, duration_s: 30 * 86_400 },
  })
  const shots: [string, string][] = [
    ['home', '/'],
    ['feeds', '/feeds'],
    ['feed', `/feeds/${feeds[0].id}`],
    ['entry', `/feeds/${feeds[0].id}/entries/${note.id}`],
    ['paywall', `/feeds/${feeds[0].id}/entries/${paid.id}`],
    ['search', '/search?q=dawn'],
  ]
  for (const [width, suffix] of [
    [1280, ''],
    [390, '-phone'],
  ] as const) {
    const page = await browser.newPage({ viewport: { width, height: width > 500 ? 900 : 844 } })
    for (const [name, path] of shots) {
      await page.goto(`${server.url}${path}`)
      await page.waitForLoadState('networkidle')
      await page.screenshot({ path: join(out, `${name}${suffix}.png`), fullPage: width > 500 })
    }
    await page.close()
  }
  console.log(`screenshots: ${shots.length * 2} in ${out}`)
} finally {
  await browser.close()
  await server.dispose()
}
