// The README's screenshots of the studio, made again: a local chain (anvil, the EIP-3009 test token) and a server on a
// fresh data directory; a creator's feed with paid entries and a pass, bought by a dozen buyers over four weeks (each
// purchase a real payment on the chain, the server's clock moved back for its day), and the studio signed in to with
// the creator's wallet in Debian's Chromium.
//
//   npx bun scripts/studio-screenshots.ts [--out docs/screenshots]
import { join } from 'node:path'
import { mkdirSync } from 'node:fs'
import { startTestServer, testClockFile } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { BASE_SEPOLIA_CHAIN_ID, encodePaymentHeader, startChain, v1Payment } from '../dev/chain.ts'
import { injectWallet, launchChromium } from '../dev/browser.ts'

const out = process.argv.includes('--out') ? process.argv[process.argv.indexOf('--out') + 1]! : 'docs/screenshots'
mkdirSync(out, { recursive: true })
const DAY = 86_400
const COVER =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 180"><rect width="320" height="180" fill="#fde9c9"/>' +
  '<circle cx="230" cy="70" r="24" fill="#f4a259"/><path d="M0 120 Q80 70 160 115 T320 100 V180 H0Z" fill="#2d6a4f"/></svg>'
const NOTE = '# The dawn chorus\n\nRecorded at **5:12 am** on the north ridge: a blackbird first, then the wrens.'

const chain = await startChain()
const server = await startTestServer({ ...chain.env, TRELLIS_TEST_CLOCK_FILE: testClockFile() })
const browser = await launchChromium()
try {
  const creator = newWallet()
  const feed = await createFeed(server.url, creator, {
    name: 'Field recordings',
    description: 'Sounds from the hills, weekly.',
    tags: ['audio', 'nature'],
    image_url: `data:image/svg+xml;base64,${b64(COVER)}`,
  })
  const paid = async (title: string, price: bigint) =>
    createEntry(server.url, creator, feed.id, {
      content_base64: b64(`${title}: notes and a recording.`),
      mime_type: 'text/plain',
      title,
      is_free: false,
      price: { amount: String(price), currency: 'USDC' },
    })
  const entries = [
    { entry: await paid('Dawn chorus notes', 250_000n), price: 250_000n },
    { entry: await paid('Curlews at low tide', 400_000n), price: 400_000n },
    { entry: await paid('Night rain on the tin roof', 150_000n), price: 150_000n },
    { entry: await paid('The ridge in a gale', 300_000n), price: 300_000n },
  ]
  await createEntry(server.url, creator, feed.id, { content_base64: b64(NOTE), mime_type: 'text/markdown', title: 'Start here' })
  await call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, {
    wallet: creator,
    body: { price: { amount: '2000000', currency: 'USDC' }, duration_s: 30 * DAY, description: 'Every recording for a month' },
  })

  // Buyers over four weeks, some coming back: each buys on its day (the server's clock moved back to it).
  const buyers = await Promise.all(Array.from({ length: 24 }, () => chain.newFundedBuyer(5_000_000n)))
  let sales = 0
  for (let daysAgo = 27; daysAgo >= 0; daysAgo -= 1) {
    await server.moveClock(-daysAgo * DAY)
    const today = 1 + ((daysAgo * 7) % 4) + (daysAgo < 8 ? 1 : 0)
    for (let k = 0; k < today; k++) {
      const buyer = buyers[(daysAgo * 11 + k * 5) % buyers.length]!
      const { entry, price } = entries[(Math.floor(daysAgo / 2) + k) % entries.length]!
      const path = `/v1/feeds/${feed.id}/entries/${entry.id}`
      await call(server.url, 'GET', path) // the 402 a buyer is shown first
      const payment = encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: price }))
      const answer = await fetch(`${server.url}${path}`, { headers: { 'x-payment': payment } })
      if (answer.status === 200) sales += 1 // a charge, or nothing charged when the buyer owned it already
    }
    // Visitors who looked and did not buy.
    for (let n = 0; n < 3 + (daysAgo % 4); n++) await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entries[n % 4]!.entry.id}`)
  }
  await server.moveClock(0)
  const ledger = (await call(server.url, 'GET', `/v1/transactions?feed_id=${feed.id}&page_size=100`)).body.data
  const report = (await call(server.url, 'GET', `/v1/wallets/${feed.owner_id}/analytics`, { wallet: creator })).body
  console.log(`studio screenshots: ${sales} purchases, ${ledger.length} sales in the ledger, ${report.totals.sales} in the analytics`)

  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
  await injectWallet(page, creator, BASE_SEPOLIA_CHAIN_ID)
  await page.goto(`${server.url}/studio`)
  await page.locator('#studio-sign-in').click()
  await page.locator('#chart-revenue').waitFor()
  await page.screenshot({ path: join(out, 'studio.png'), fullPage: true, clip: { x: 0, y: 0, width: 1200, height: 1180 } })
  await page.goto(`${server.url}/studio/feeds/${feed.id}`)
  await page.locator('#publish-markdown').fill(NOTE)
  await page.locator('#publish-preview h1').waitFor()
  await page.locator('#publish-title').fill('The dawn chorus')
  await page.screenshot({ path: join(out, 'studio-feed.png'), fullPage: true, clip: { x: 0, y: 0, width: 1200, height: 2050 } })
  console.log(`studio screenshots: 2 in ${out}`)
} finally {
  await browser.close()
  await server.dispose()
  await chain.stop()
}
