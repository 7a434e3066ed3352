// The studio, as a creator uses it (issue 39): Debian's Chromium with the test wallet on anvil signs in once, creates
// a feed with a cover dropped on it, publishes a Markdown entry (live preview) with a price and a 20 MB audio file
// (dropped, with its upload's progress shown), makes and revokes an access link, registers a webhook and sends a test
// event to a receiver on this machine, and sees a sale in its charts after a buyer pays through the paywall. What the
// API refuses is shown next to the field it names; pages of other origins can write nothing with the studio's cookie.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { Webhook } from 'standardwebhooks'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, newWallet, type Wallet } from '../dev/api.ts'
import { BASE_SEPOLIA_CHAIN_ID, startChain, type TestChain } from '../dev/chain.ts'
import { injectWallet, launchChromium, pageProblems, type WalletLog } from '../dev/browser.ts'

const SHOTS = process.env.TRELLIS_SCREENSHOTS
const AUDIO_BYTES = 20 * 1024 * 1024
const COVER =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 180"><rect width="320" height="180" fill="#fde9c9"/>' +
  '<circle cx="230" cy="95" r="26" fill="#f4a259"/><path d="M0 120 Q80 70 160 115 T320 100 V180 H0Z" fill="#2d6a4f"/></svg>'

let chain: TestChain
let server: TestServer
let browser: Browser
let context: BrowserContext
let page: Page
let creator: Wallet
let wallet: WalletLog
const problems: string[] = []
const hooks: { headers: Record<string, string>; body: string }[] = []
let receiver: ReturnType<typeof Bun.serve>
const made: { feedId?: string; notesId?: string; audioId?: string } = {}

beforeAll(async () => {
  chain = await startChain()
  // The documented way to try webhooks on a development machine: a server on loopback may deliver to plain http there.
  server = await startTestServer({ ...chain.env, TRELLIS_WEBHOOKS_ALLOW_LOCAL: '1' })
  receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      hooks.push({ headers: Object.fromEntries(request.headers as unknown as Iterable<[string, string]>), body: await request.text() })
      return new Response('thanks')
    },
  })
  browser = await launchChromium()
  creator = newWallet()
  context = await browser.newContext({ viewport: { width: 1200, height: 900 } })
  page = await context.newPage()
  page.on('dialog', (dialog) => void dialog.accept()) // the studio asks before it deletes or revokes
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('console', (message) => {
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of 4\d\d /.test(message.text()))
      problems.push(`console: ${message.text()}`)
  })
  page.on('request', (request) => {
    if (!request.url().startsWith(server.url) && !request.url().startsWith('blob:') && !request.url().startsWith('data:'))
      problems.push(`left the server: ${request.url()}`)
  })
  wallet = await injectWallet(page, creator, BASE_SEPOLIA_CHAIN_ID)
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
}, 60_000)
afterAll(async () => {
  await browser?.close()
  receiver?.stop(true)
  await server?.dispose()
  await chain?.stop()
})

const shoot = async (name: string) => {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

/** Drops a file made in the page (so 20 MB never crosses the test's pipe) on a drop zone, as a person's drag would. */
async function dropFile(zone: string, file: { name: string; type: string; size?: number; text?: string }) {
  await page.locator(zone).evaluate((target, f) => {
    const bytes = f.text !== undefined ? new TextEncoder().encode(f.text) : new Uint8Array(f.size!).map((_, i) => (i * 31) & 0xff)
    const transfer = new DataTransfer()
    transfer.items.add(new File([bytes], f.name, { type: f.type }))
    target.dispatchEvent(new DragEvent('dragover', { dataTransfer: transfer, bubbles: true, cancelable: true }))
    target.dispatchEvent(new DragEvent('drop', { dataTransfer: transfer, bubbles: true, cancelable: true }))
  }, file)
}

/** Submits a studio form and waits for the page it reloads once the API has answered. */
const submitAndReload = (form: string) => Promise.all([page.waitForEvent('load'), page.locator(`#${form} button[type="submit"]`).click()])
/** An entry as the feed's listing shows it (asking for the entry itself would be a 402: a challenge counted). */
const listedEntry = async (id: string) =>
  (await call(server.url, 'GET', `/v1/feeds/${made.feedId}/entries`)).body.data.find((e: { id: string }) => e.id === id)

const fieldError = (form: string, field: string) => page.locator(`#${form} [data-field="${field}"] .field-error`)

describe('a creator in the studio', () => {
  test('signs in once with the wallet (one signature, no transaction)', async () => {
    const answer = await page.goto(`${server.url}/studio`)
    expect(answer!.status()).toBe(200)
    expect(answer!.headers()['content-security-policy']).toContain("script-src 'self'")
    expect(answer!.headers()['cache-control']).toBe('private, no-store')
    await page.locator('#studio-sign-in').click()
    await page.locator('.studio-nav').waitFor()
    expect(wallet.calls).toEqual(['eth_requestAccounts', 'personal_sign'])
    const cookie = (await context.cookies()).find((c) => c.name === 'trellis_studio')
    expect(cookie).toMatchObject({ httpOnly: true, sameSite: 'Strict' })
    expect(await page.locator('h1').textContent()).toBe('Your studio')
  })

  test('creates a feed with a cover dropped on the form; a refusal is shown next to its field', async () => {
    await page.locator('#new-feed-name').fill('Field recordings')
    await page.locator('#new-feed-description').fill('Sounds from the hills, weekly.')
    await page.locator('#new-feed-tags').fill('audio, nature')
    await dropFile('[data-drop-for="new-feed-image_url"]', { name: 'cover.svg', type: 'image/svg+xml', text: COVER })
    expect(await page.locator('[data-drop-for="new-feed-image_url"]').textContent()).toContain('cover.svg')
    await page.locator('#new-feed-name').fill('   ')
    await page.locator('#new-feed button[type="submit"]').click()
    await fieldError('new-feed', 'name').waitFor()
    expect(await fieldError('new-feed', 'name').textContent()).toBe('name must not be blank')
    expect(await page.locator('#new-feed-name').getAttribute('aria-invalid')).toBe('true')

    await page.locator('#new-feed-name').fill('Field recordings')
    await page.locator('#new-feed button[type="submit"]').click()
    await page.waitForURL(/\/studio\/feeds\/[0-9a-f-]{36}$/)
    made.feedId = page.url().split('/').at(-1)!
    expect(await page.locator('h1').textContent()).toBe('Field recordings')
    const feed = (await call(server.url, 'GET', `/v1/feeds/${made.feedId}`)).body
    expect(feed).toMatchObject({ name: 'Field recordings', tags: ['audio', 'nature'], owner_wallet_address: creator.address })
    expect(feed.image_cid).toBeString()
    expect(await page.locator('img.cover-now').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
  })

  test('publishes Markdown with a live preview and a price; a bad price is refused next to the price', async () => {
    await page.locator('#publish-markdown').fill('# Dawn chorus\n\nWhere and **when**: <script>alert(1)</script>5:12 am.')
    await page.locator('#publish-preview h1').waitFor()
    expect(await page.locator('#publish-preview h1').textContent()).toBe('Dawn chorus')
    expect(await page.locator('#publish-preview strong').textContent()).toBe('when')
    expect(await page.locator('#publish-preview script').count()).toBe(0)
    await page.locator('#publish-title').fill('Dawn chorus notes')
    await page.locator('#publish-price').fill('a quarter')
    await page.locator('#publish button[type="submit"]').click()
    await fieldError('publish', 'price').waitFor()
    expect(await fieldError('publish', 'price').textContent()).toContain('price')

    await page.locator('#publish-price').fill('0.25')
    await page.locator('#publish button[type="submit"]').click()
    const row = page.locator('table.studio-entries tbody tr', { hasText: 'Dawn chorus notes' })
    await row.waitFor()
    expect(await row.locator('td.num').first().textContent()).toBe('0.25 USDC')
    const [entry] = (await call(server.url, 'GET', `/v1/feeds/${made.feedId}/entries`)).body.data
    expect(entry).toMatchObject({ title: 'Dawn chorus notes', mime_type: 'text/markdown', is_free: false, price: '250000' })
    made.notesId = entry.id
  })

  test('publishes at 0.001 USDC, below the settlement cost: published, and the creator is warned to sell a pass', async () => {
    // Before anything is sent, the hints under the prices name the network's cost.
    const cost = 'a price below about 0.0014 USDC costs more to settle on Base Sepolia than it brings: sell a pass instead'
    expect(await page.locator('#publish-price-hint').textContent()).toContain(cost)
    expect(await page.locator('#pass-price-hint').textContent()).toContain('above about 0.0014 USDC')
    await page.locator('#publish-markdown').fill('A thought for a tenth of a cent.')
    await page.locator('#publish-title').fill('Penny thought')
    await page.locator('#publish-price').fill('0.001')
    await submitAndReload('publish')
    const warned = (form: string) => page.locator(`#${form}-result .price-warning[role="status"]`)
    await warned('publish').waitFor()
    expect(await warned('publish').textContent()).toStartWith('This entry costs 0.001 USDC, below about 0.0014 USDC')
    expect(await warned('publish').textContent()).toContain('Sell a pass instead')
    const entries = (await call(server.url, 'GET', `/v1/feeds/${made.feedId}/entries`)).body.data
    const cheap = entries.find((e: { title: string }) => e.title === 'Penny thought')
    expect(cheap).toMatchObject({ is_free: false, price: '1000' })
    // Shown once, after the answer: the next visit shows it no more.
    await page.reload()
    expect(await warned('publish').count()).toBe(0)

    // Saving the entry at that price warns again; so does a pass priced below the cost.
    await page.goto(`${server.url}/studio/feeds/${made.feedId}/entries/${cheap.id}`)
    await submitAndReload('edit-entry')
    await warned('edit-entry').waitFor()
    await page.goto(`${server.url}/studio/feeds/${made.feedId}`)
    await page.locator('#pass-price').fill('0.001')
    await submitAndReload('pass')
    expect(await warned('pass').textContent()).toStartWith('This pass costs 0.001 USDC')
    await shoot('studio-cheap-price')
    // Left as the rest of the walk expects: no pass on sale, and no third entry in the charts.
    await page.getByRole('button', { name: 'Stop selling the pass' }).click()
    await page.getByRole('button', { name: 'Sell a pass' }).waitFor()
    expect((await call(server.url, 'DELETE', `/v1/feeds/${made.feedId}/entries/${cheap.id}`, { wallet: creator })).status).toBe(204)
  })

  test('publishes a 20 MB audio file dropped on the form, the upload’s progress shown', async () => {
    const seen: string[] = []
    await page.exposeFunction('__progressSeen', (text: string) => void seen.push(text))
    await page.evaluate(() => {
      const shown = document.getElementById('publish-percent')!
      const record = (window as unknown as { __progressSeen: (t: string) => void }).__progressSeen
      new MutationObserver(() =>
        record(`${shown.textContent} ${shown.closest('.progress')!.hasAttribute('hidden') ? 'hidden' : 'shown'}`),
      ).observe(shown, { childList: true, characterData: true, subtree: true })
    })
    await dropFile('[data-drop-for="publish-content"]', { name: 'morning.mp3', type: 'audio/mpeg', size: AUDIO_BYTES })
    await page.locator('#publish-title').fill('Morning, recorded')
    await page.locator('#publish-is_free').check()
    await page.locator('#publish button[type="submit"]').click()
    const row = page.locator('table.studio-entries tbody tr', { hasText: 'Morning, recorded' })
    await row.waitFor({ timeout: 60_000 })
    expect(seen.length).toBeGreaterThan(0)
    expect(seen.at(-1)).toBe('100% shown')
    expect(seen.every((s) => s.endsWith(' shown'))).toBe(true)
    const entries = (await call(server.url, 'GET', `/v1/feeds/${made.feedId}/entries`)).body.data
    const audio = entries.find((e: { title: string }) => e.title === 'Morning, recorded')
    expect(audio).toMatchObject({ mime_type: 'audio/mpeg', is_free: true })
    const stored = new Uint8Array(await (await fetch(`${server.url}/v1/feeds/${made.feedId}/entries/${audio.id}/content`)).arrayBuffer())
    expect(stored.byteLength).toBe(AUDIO_BYTES)
    expect(Bun.hash(stored)).toBe(Bun.hash(new Uint8Array(AUDIO_BYTES).map((_, i) => (i * 31) & 0xff)))
    made.audioId = audio.id
    await shoot('studio-feed')
  }, 90_000)
})

describe('running the feed', () => {
  test('edits the feed and an entry, sells and stops a pass, deletes and reactivates the feed, names the profile', async () => {
    const feedPage = `${server.url}/studio/feeds/${made.feedId}`
    await page.goto(feedPage)
    await page.locator('#edit-feed-description').fill('Sounds from the hills, every week.')
    await submitAndReload('edit-feed')
    expect((await call(server.url, 'GET', `/v1/feeds/${made.feedId}`)).body.description).toBe('Sounds from the hills, every week.')

    await page.locator('#pass-price').fill('2.5')
    await page.locator('#pass-duration_s').fill('7')
    await page.locator('#pass button[type="submit"]').click()
    await page.getByRole('button', { name: 'Stop selling the pass' }).waitFor()
    expect((await call(server.url, 'GET', `/v1/feeds/${made.feedId}/pass`)).body).toMatchObject({
      price: { amount: '2500000', currency: 'USDC' },
      duration_s: 7 * 86_400,
      is_active: true,
    })
    await page.getByRole('button', { name: 'Stop selling the pass' }).click()
    await page.getByRole('button', { name: 'Sell a pass' }).waitFor()
    expect((await call(server.url, 'GET', `/v1/feeds/${made.feedId}`)).body.pass).toBeNull()

    await page.goto(`${feedPage}/entries/${made.notesId}`)
    await page.locator('#edit-entry-description').fill('Where and when, minute by minute')
    await page.locator('#edit-entry-price').fill('0.30')
    await submitAndReload('edit-entry')
    expect((await listedEntry(made.notesId!)).price).toBe('300000')
    await page.locator('#edit-entry-price').fill('0.25')
    await submitAndReload('edit-entry')
    expect((await listedEntry(made.notesId!)).price).toBe('250000')

    await page.goto(feedPage)
    await page.getByRole('button', { name: 'Delete the feed' }).click()
    await page.getByRole('button', { name: 'Reactivate the feed' }).waitFor()
    expect((await call(server.url, 'GET', `/v1/feeds/${made.feedId}`)).body.is_active).toBe(false)
    await page.getByRole('button', { name: 'Reactivate the feed' }).click()
    await page.getByRole('button', { name: 'Delete the feed' }).waitFor()
    expect((await call(server.url, 'GET', `/v1/feeds/${made.feedId}`)).body.is_active).toBe(true)

    await page.goto(`${server.url}/studio/profile`)
    await page.locator('#profile-username').fill('no spaces allowed')
    await page.locator('#profile button[type="submit"]').click()
    await fieldError('profile', 'username').waitFor()
    await page.locator('#profile-username').fill('marta')
    await submitAndReload('profile')
    expect((await call(server.url, 'GET', `/v1/wallets/address/${creator.address}`)).body.username).toBe('marta')
  }, 60_000)
})

describe('access links and webhooks from the studio', () => {
  test('makes an access link (shown to copy), sees it used, revokes it', async () => {
    await page.goto(`${server.url}/studio/feeds/${made.feedId}/entries/${made.notesId}`)
    await page.locator('#new-link-max_uses').fill('3')
    await page.locator('#new-link-description').fill('for the reviewer')
    await page.locator('#new-link button[type="submit"]').click()
    await page.locator('#new-link-value').waitFor()
    const link = await page.locator('#new-link-value').inputValue()
    expect(link).toStartWith(`${server.url}/v1/access/`)
    const opened = await fetch(link)
    expect(opened.status).toBe(200)
    expect(await opened.text()).toContain('Dawn chorus')
    await page.reload()
    const row = page.locator('table.access-links tbody tr', { hasText: 'for the reviewer' })
    expect(await row.locator('td.num').textContent()).toBe('1 of 3')
    await row.getByRole('button', { name: /^Revoke/ }).click()
    await page.locator('table.access-links td.link-state', { hasText: 'Revoked' }).waitFor()
    expect((await fetch(link)).status).toBe(410)
  })

  test('registers a webhook (its secret shown once) and sends a signed test event to a local receiver', async () => {
    await page.goto(`${server.url}/studio/webhooks`)
    await page.locator('#new-webhook-url').fill('ftp://example.com/hook')
    await page.locator('#new-webhook button[type="submit"]').click()
    await fieldError('new-webhook', 'url').waitFor()
    expect(await fieldError('new-webhook', 'url').textContent()).toContain('https')

    await page.locator('#new-webhook-url').fill(`http://127.0.0.1:${receiver.port}/hook`)
    await page.locator('#new-webhook button[type="submit"]').click()
    await page.locator('#new-webhook-value').waitFor()
    const secret = await page.locator('#new-webhook-value').inputValue()
    expect(secret).toStartWith('whsec_')
    await page.getByRole('button', { name: 'Send a test event' }).click()
    await page.locator('.action-status.good').waitFor()
    expect(await page.locator('.action-status').textContent()).toMatch(/^Test event delivered: HTTP 200 in \d+ ms$/)
    const ping = hooks.find((h) => JSON.parse(h.body).type === 'ping')!
    expect((new Webhook(secret).verify(ping.body, ping.headers) as { type: string }).type).toBe('ping')
    await page.getByRole('link', { name: 'Delivery log' }).click()
    const logged = page.locator('table.deliveries tbody tr', { hasText: 'ping' })
    expect(await logged.locator('td').nth(2).textContent()).toBe('delivered')
    await shoot('studio-webhooks')
  })
})

describe('pages of other origins, in the same browser as the studio session', () => {
  const ownFeeds = async () =>
    (await call(server.url, 'GET', `/v1/feeds?owner_id=${creator.address}&is_active=true`)).body.data.map((f: { name: string }) => f.name)

  test('a form posted from another origin or site writes nothing; a credentialed fetch writes nothing', async () => {
    const before = await ownFeeds()
    const hostilePage = (target: string) =>
      `<!doctype html><title>Win a prize</title><form id="f" method="post" action="${target}/v1/feeds"><input name="name" value="evil">` +
      `</form><script>document.getElementById('f').submit()</script>`
    const hostile = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => new Response(hostilePage(server.url), { headers: { 'content-type': 'text/html' } }),
    })
    try {
      // Same site (127.0.0.1, another port): the SameSite=Strict cookie is sent, its Origin is not ours: 403.
      const attacked = await context.newPage()
      const posted = attacked.waitForResponse((r) => r.url() === `${server.url}/v1/feeds`)
      await attacked.goto(`http://127.0.0.1:${hostile.port}/`)
      const answer = await posted
      expect(answer.status()).toBe(403)
      expect((await answer.json()).code).toBe('CROSS_SITE_REQUEST')
      // Another site (localhost): the cookie is not even sent.
      const elsewhere = attacked.waitForResponse((r) => r.url() === `${server.url}/v1/feeds`)
      await attacked.goto(`http://localhost:${hostile.port}/`)
      expect((await elsewhere).status()).toBe(401)
      // A credentialed cross-origin fetch with a made-up token: refused before or at the server, nothing written.
      await attacked.goto(`http://127.0.0.1:${hostile.port}/`)
      const fetched = await attacked.evaluate(async (target) => {
        try {
          const r = await fetch(`${target}/v1/feeds`, {
            method: 'POST',
            credentials: 'include',
            headers: { 'content-type': 'application/json', 'x-trellis-csrf': 'guessed' },
            body: JSON.stringify({ name: 'evil by fetch' }),
          })
          return `answered ${r.status}`
        } catch (error) {
          return `blocked: ${(error as Error).name}`
        }
      }, server.url)
      expect(fetched).toMatch(/^(blocked: TypeError|answered 403)$/)
      await attacked.close()
    } finally {
      hostile.stop(true)
    }
    expect(await ownFeeds()).toEqual(before)
  })
})

describe('the business in charts', () => {
  test('a buyer pays through the paywall; the sale is in the studio’s totals and charts', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const buying = await browser.newPage()
    await injectWallet(buying, buyer, BASE_SEPOLIA_CHAIN_ID)
    expect((await buying.goto(`${server.url}/feeds/${made.feedId}/entries/${made.notesId}`))!.status()).toBe(402)
    await buying.locator('#pay:not([disabled])').click()
    await buying.locator('#bought').waitFor({ timeout: 30_000 })
    await buying.locator('#status.good').waitFor({ timeout: 30_000 })
    await buying.close()

    await page.goto(`${server.url}/studio`)
    expect(await page.locator('#totals').textContent()).toContain('0.25 USDC')
    const sold = page.locator('#chart-entries table tbody tr', { hasText: 'Dawn chorus notes' })
    expect(await sold.locator('td.num').first().textContent()).toBe('1')
    expect(await page.locator('#chart-entries svg rect.bar title').first().textContent()).toBe('Dawn chorus notes: 1 sales, 0.25 USDC')
    expect(await page.locator('#chart-buyers figcaption').textContent()).toContain('1 buyers')
    // One 402 was served for it (the buyer's paywall) and one sale made: every payment request became a sale.
    expect(await page.locator('#chart-conversion figcaption').textContent()).toBe(
      'Conversion100.0% of 1 payment requests (402) became sales',
    )
    await shoot('studio-charts')
    const csv = await page.evaluate(async () => (await fetch('/studio/sales.csv')).text())
    expect(csv.split('\n').filter(Boolean)).toHaveLength(2)
    expect(csv).toContain('250000')
  }, 60_000)

  test('at 360 px, light and dark: no page scrolls sideways, axe-core finds no serious or critical violation', async () => {
    const small = await context.newPage()
    await small.setViewportSize({ width: 360, height: 800 })
    const found: Record<string, unknown> = {}
    const paths = {
      dashboard: '/studio',
      feed: `/studio/feeds/${made.feedId}`,
      entry: `/studio/feeds/${made.feedId}/entries/${made.notesId}`,
      webhooks: '/studio/webhooks',
      profile: '/studio/profile',
    }
    const shown = Object.entries(paths).flatMap(([name, path]) =>
      (['light', 'dark'] as const).map((scheme) => [name, path, scheme] as const),
    )
    for (const [name, path, scheme] of shown) {
      await small.emulateMedia({ colorScheme: scheme })
      await small.goto(`${server.url}${path}`)
      found[`${name} (${scheme})`] = await pageProblems(small)
    }
    expect(found).toEqual(Object.fromEntries(shown.map(([name, , scheme]) => [`${name} (${scheme})`, { sideways: false, violations: [] }])))
    await small.close()
    expect(problems).toEqual([])
  }, 60_000)
})
