// The pages, as a person with a browser and a wallet uses them: Debian's headless Chromium with a test wallet behind
// window.ethereum (dev/browser.ts), a real server on anvil with the EIP-3009 token. A person opens /, goes to a feed,
// buys a paid entry through the paywall and sees it; the chain and the ledger show one sale. Stored text made to
// break out of the markup never runs. API clients keep getting exactly the JSON they got.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdirSync } from 'node:fs'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, challengeOf, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { BASE_SEPOLIA_CHAIN_ID, encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { injectWallet, launchChromium } from '../dev/browser.ts'

const PRICE = 250_000n // 0.25 USDC
const HOSTILE = {
  name: `<script>alert("name")</script>"onerror="alert(1)`,
  description: `"><img src=x onerror=alert("description")> </script><script>alert(2)</script>`,
  title: `<svg onload=alert("title")>"onerror=alert(3)`,
  tag: `</script><script>alert("tag")</script>`,
}
// Hills at dawn, as the feed's cover.
const COVER =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 320 180"><defs><linearGradient id="sky" ` +
  `x1="0" y1="0" x2="0" y2="1"><stop offset="0" stop-color="#f9c784"/><stop offset="1" ` +
  `stop-color="#fde9c9"/></linearGradient></defs><rect width="320" height="180" ` +
  `fill="url(#sky)"/><circle cx="230" cy="95" r="26" fill="#f4a259"/><path d="M0 120 Q80 70 160 ` +
  `115 T320 100 V180 H0Z" fill="#74a57f"/><path d="M0 150 Q100 110 200 145 T320 140 V180 H0Z" ` +
  `fill="#2d6a4f"/></svg>`
const SHOTS = process.env.TRELLIS_SCREENSHOTS // a folder to keep the pages' screenshots in

let chain: TestChain
let server: TestServer
let browser: Browser
let creator: Wallet
let feed: any
let paid: any
let free: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_STATS_REFRESH_S: '1' })
  browser = await launchChromium()
  creator = newWallet()
  expect(
    (
      await call(server.url, 'PATCH', `/v1/wallets/${(await createFeed(server.url, creator, { name: 'first' })).owner_id}`, {
        body: { username: 'marta' },
        wallet: creator,
      })
    ).status,
  ).toBe(200)
  feed = await createFeed(server.url, creator, {
    name: 'Field recordings',
    description: 'Sounds from the hills, weekly.',
    tags: ['audio', 'nature'],
    image_url: `data:image/svg+xml;base64,${b64(COVER)}`,
  })
  free = await createEntry(server.url, creator, feed.id, {
    content_base64: b64('Welcome: this one is free.'),
    mime_type: 'text/plain',
    title: 'Welcome',
    is_free: true,
  })
  paid = await createEntry(server.url, creator, feed.id, {
    content_base64: b64('{"secret":"the dawn chorus, 5:12 am"}'),
    mime_type: 'application/json',
    title: 'Dawn chorus notes',
    description: 'Where and when',
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
  if (SHOTS) mkdirSync(SHOTS, { recursive: true })
})
afterAll(async () => {
  await browser?.close()
  await server?.dispose()
  await chain?.stop()
})

/** A page that records everything that would show a script ran or was blocked: dialogs, console errors, page errors. */
async function watchedPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } })
  const problems: string[] = []
  page.on('dialog', (dialog) => {
    problems.push(`dialog: ${dialog.message()}`)
    void dialog.dismiss()
  })
  // Chromium logs every 4xx answer as a console error; a page answered 402 or 404 on purpose is no problem.
  page.on('console', (message) => {
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[024] /.test(message.text()))
      problems.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('request', (request) => {
    if (!request.url().startsWith(server.url) && !request.url().startsWith('blob:')) problems.push(`left the server: ${request.url()}`)
  })
  return { page, problems }
}

const shoot = async (page: Page, name: string) => {
  if (SHOTS) await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true })
}

describe('a person with a browser and a wallet', () => {
  test('opens /, goes to a feed, buys a paid entry through the paywall and sees it; the creator is ' +
    'paid once, the ledger has one row', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const before = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address) }
    const { page, problems } = await watchedPage()
    const wallet = await injectWallet(page, buyer, BASE_SEPOLIA_CHAIN_ID)

    const home = await page.goto(`${server.url}/`)
    expect(home!.status()).toBe(200)
    expect(home!.headers()['content-security-policy']).toContain("script-src 'self'")
    expect(await page.locator('h1').textContent()).toBe('Trellis')
    expect(await page.locator('.network').textContent()).toBe('base-sepolia')
    expect(await page.locator('a[href="/v1/docs"]').count()).toBeGreaterThan(0)
    await shoot(page, 'home')

    await page.locator(`.card a[href="/feeds/${feed.id}"]`).first().click()
    await page.waitForURL(`${server.url}/feeds/${feed.id}`)
    expect(await page.locator('h1').textContent()).toBe('Field recordings')
    expect(await page.locator('.byline').textContent()).toContain('marta')
    expect(await page.locator('.feed-head .cover img').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0)).toBe(true)
    const rows = page.locator('table.entries tbody tr')
    expect(await rows.count()).toBe(2)
    expect(await rows.filter({ hasText: 'Welcome' }).locator('.badge.free').textContent()).toBe('Free')
    expect(await rows.filter({ hasText: 'Dawn chorus notes' }).locator('td.num').first().textContent()).toBe('0.25 USDC')
    await shoot(page, 'feed')

    const paywall = page.waitForResponse((r) => r.url().endsWith(`/feeds/${feed.id}/entries/${paid.id}`))
    await rows.filter({ hasText: 'Dawn chorus notes' }).locator('a.button.primary').click()
    expect((await paywall).status()).toBe(402)
    expect(await page.locator('h1').textContent()).toBe('Dawn chorus notes')
    expect(await page.locator('.price').textContent()).toBe('0.25 USDC')
    await page.locator('#pay:not([disabled])').waitFor()
    await shoot(page, 'paywall')

    await page.locator('#pay').click()
    await page.locator('#bought pre.content').waitFor({ timeout: 30_000 })
    expect(JSON.parse((await page.locator('#bought pre.content').textContent()) ?? '')).toEqual({ secret: 'the dawn chorus, 5:12 am' })
    expect(await page.locator('#status').textContent()).toMatch(/^Paid\. Transaction 0x[0-9a-f]{64}$/)
    expect(wallet.calls).toEqual(['eth_requestAccounts', 'eth_chainId', 'eth_signTypedData_v4'])
    await shoot(page, 'bought')

    expect(await chain.balanceOf(creator.address)).toBe(before.creator + PRICE)
    expect(await chain.balanceOf(buyer.address)).toBe(before.buyer - PRICE)
    const ledger = (await call(server.url, 'GET', `/v1/transactions?entry_id=${paid.id}`)).body
    expect(ledger.data).toHaveLength(1)
    expect(ledger.data[0]).toMatchObject({ amount: String(PRICE), payer: buyer.address })
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  test('a paid entry’s own API URLs answer a browser with the paywall, which pays for exactly what was asked', async () => {
    const image = await createEntry(server.url, creator, feed.id, {
      content_base64: b64(
        Buffer.from(
          'GIF89a\x01\x00\x01\x00\x80\x00\x00\x00\x00\x00\xff\xff\xff!\xf9\x04\x01\x00\x00\x00\x00,' +
            '\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;',
          'latin1',
        ),
      ),
      mime_type: 'image/gif',
      title: 'A pixel',
      is_free: false,
      price: { amount: '10000', currency: 'USDC' },
    })
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const { page, problems } = await watchedPage()
    await injectWallet(page, buyer, BASE_SEPOLIA_CHAIN_ID)
    const url = `${server.url}/v1/feeds/${feed.id}/entries/${image.id}/content`
    const answer = await page.goto(url)
    expect(answer!.status()).toBe(402)
    expect(answer!.headers()['content-type']).toBe('text/html; charset=utf-8')
    const offered = JSON.parse(Buffer.from(answer!.headers()['payment-required']!, 'base64').toString())
    expect(offered.resource.url).toBe(url)
    expect(await page.locator('.price').textContent()).toBe('0.01 USDC')
    await page.locator('#pay:not([disabled])').click()
    await page.locator('#bought img.content').waitFor({ timeout: 30_000 })
    expect(await page.locator('#bought img.content').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1)
    const ledger = (await call(server.url, 'GET', `/v1/transactions?entry_id=${image.id}`)).body
    expect(ledger.data).toHaveLength(1)
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)

  test('a browser without a wallet is told so; the button stays off', async () => {
    const { page, problems } = await watchedPage()
    expect((await page.goto(`${server.url}/feeds/${feed.id}/entries/${paid.id}`))!.status()).toBe(402)
    await page.locator('#status.bad').waitFor()
    expect(await page.locator('#status').textContent()).toContain('No wallet found')
    expect(await page.locator('#pay').isDisabled()).toBe(true)
    expect(problems).toEqual([])
    await page.close()
  })

  test('a free entry’s page shows its text; unknown and deleted things are 404 pages', async () => {
    const { page, problems } = await watchedPage()
    expect((await page.goto(`${server.url}/feeds/${feed.id}/entries/${free.id}`))!.status()).toBe(200)
    await page.locator('.content.text', { hasText: 'Welcome: this one is free.' }).waitFor()
    for (const path of [
      `/feeds/${crypto.randomUUID()}`,
      '/feeds/not-a-uuid',
      `/feeds/${feed.id}/entries/${crypto.randomUUID()}`,
      `/creators/0x${'0'.repeat(40)}`,
    ]) {
      const answer = await page.goto(`${server.url}${path}`)
      expect(answer!.status()).toBe(404)
      expect(await page.locator('h1').textContent()).toBe('Not found')
    }
    expect(problems).toEqual([])
    await page.close()
  })
})

describe('the creator and the leaderboards', () => {
  test('the creator page shows the profile, the public statistics and the feeds; the leaderboards show the sales', async () => {
    const { page, problems } = await watchedPage()
    const creatorPage = await page.goto(`${server.url}/creators/${creator.address}`)
    expect(creatorPage!.status()).toBe(200)
    expect(await page.locator('h1').textContent()).toBe('marta')
    expect(await page.locator('.intro code').textContent()).toBe(creator.address)
    const figures = Object.fromEntries(
      await page
        .locator('.figures div')
        .evaluateAll((items) => items.map((d) => [d.querySelector('span')!.textContent, d.querySelector('strong')!.textContent])),
    )
    const stats = (await call(server.url, 'GET', `/v1/wallets/${feed.owner_id}/stats`)).body
    expect(figures).toMatchObject({
      feeds: String(stats.content_stats.total_feeds),
      sales: String(stats.revenue_stats.total_purchases_received),
      earned: `${Number(stats.revenue_stats.revenue_usdc).toFixed(2)} USDC`,
    })
    expect(await page.locator(`.card a[href="/feeds/${feed.id}"]`).count()).toBe(2)
    await shoot(page, 'creator')

    // The leaderboards are rebuilt every second here: wait for the sales of the tests above.
    let topRevenue = ''
    for (let i = 0; i < 40 && !topRevenue.includes('Field recordings'); i++) {
      await page.goto(`${server.url}/leaderboards`)
      topRevenue =
        (await page
          .locator('table')
          .first()
          .textContent()
          .catch(() => '')) ?? ''
      if (!topRevenue.includes('Field recordings')) await Bun.sleep(250)
    }
    expect(topRevenue).toContain('marta')
    expect(await page.locator('.links .button.primary').textContent()).toBe('All time')
    await shoot(page, 'leaderboards')
    expect((await page.goto(`${server.url}/leaderboards?period=7d`))!.status()).toBe(200)
    expect((await page.goto(`${server.url}/leaderboards?period=forever`))!.status()).toBe(400)
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})

describe('stored text cannot run in a page', () => {
  test('a feed name, description, entry title and tag written to break out of the markup show as text, and nothing runs', async () => {
    const owner = newWallet()
    const hostile = await createFeed(server.url, owner, { name: HOSTILE.name, description: HOSTILE.description, tags: [HOSTILE.tag] })
    const entry = await createEntry(server.url, owner, hostile.id, {
      content_base64: b64('x'),
      mime_type: 'text/plain',
      title: HOSTILE.title,
      description: HOSTILE.description,
      is_free: false,
      price: { amount: '10000', currency: 'USDC' },
    })
    // A username cannot hold markup at all: the API refuses it.
    const refused = await call(server.url, 'PATCH', `/v1/wallets/${hostile.owner_id}`, { body: { username: '<script>' }, wallet: owner })
    expect(refused.status).toBe(400)

    const { page, problems } = await watchedPage()
    await injectWallet(page, newWallet(), BASE_SEPOLIA_CHAIN_ID)
    for (const path of [
      '/',
      `/feeds/${hostile.id}`,
      `/feeds/${hostile.id}/entries/${entry.id}`,
      `/v1/feeds/${hostile.id}/entries/${entry.id}/content`,
      `/creators/${owner.address}`,
      '/leaderboards',
    ]) {
      await page.goto(`${server.url}${path}`)
      await page.waitForLoadState('load')
    }
    await page.goto(`${server.url}/feeds/${hostile.id}`)
    expect(await page.locator('h1').textContent()).toBe(HOSTILE.name)
    expect(await page.locator('.description').first().textContent()).toBe(HOSTILE.description)
    expect(await page.locator('.tags li').textContent()).toBe(HOSTILE.tag)
    expect(await page.title()).toBe(`${HOSTILE.name} · Trellis`)
    await page.goto(`${server.url}/feeds/${hostile.id}/entries/${entry.id}`)
    expect(await page.locator('h1').textContent()).toBe(HOSTILE.title)
    expect(await page.locator('img, svg').count()).toBe(0)
    expect(problems).toEqual([])
    await page.close()
  }, 60_000)
})

describe('API clients see no change', () => {
  test(
    'without a browser’s Accept and User-Agent a paid entry answers the same JSON 402; a browser ' +
      'gets the page with the same PAYMENT-REQUIRED',
    async () => {
      const url = `${server.url}/v1/feeds/${feed.id}/entries/${paid.id}`
      for (let round = 0; round < 2; round++) {
        // the second round is answered from the hot path
        const api = await fetch(url, { headers: { 'content-type': 'application/json' } })
        expect(api.status).toBe(402)
        expect(api.headers.get('content-type')).toBe('application/json; charset=utf-8')
        const body = await api.json()
        expect(body).toMatchObject({
          x402Version: 1,
          accepts: [{ scheme: 'exact', network: 'base-sepolia', maxAmountRequired: String(PRICE), resource: url }],
        })
        const notMozilla = await fetch(url, { headers: { accept: 'text/html', 'user-agent': 'curl/8.0' } })
        expect(notMozilla.headers.get('content-type')).toBe('application/json; charset=utf-8')
        expect(await notMozilla.json()).toEqual(body)
        const browserLike = await fetch(url, {
          headers: { accept: 'text/html,application/xhtml+xml', 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64)' },
        })
        expect(browserLike.status).toBe(402)
        expect(browserLike.headers.get('content-type')).toBe('text/html; charset=utf-8')
        expect(challengeOf(browserLike.headers.get('payment-required'))).toEqual(challengeOf(api.headers.get('payment-required')))
        expect(await browserLike.text()).toContain('<h1>Dawn chorus notes</h1>')
      }
    },
  )
})

describe('signing in from the pages', () => {
  /** Signs in with the header's button (the wallet signs the EIP-4361 message) and waits for the page to say so. */
  async function signIn(page: Page) {
    await page.locator('#sign-in:not([hidden])').click()
    await page.locator('#signed-in').waitFor({ timeout: 20_000 })
  }

  test('a past buyer and the owner sign in and read the paid entry on its page; a stranger signed in ' +
    'still gets the paywall; signing out ends it', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const bought = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}`, {
      headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })) },
    })
    expect(bought.status).toBe(200)
    const entryPath = `/feeds/${feed.id}/entries/${paid.id}`

    for (const [who, account] of [
      ['buyer', buyer],
      ['owner', creator],
    ] as const) {
      const { page, problems } = await watchedPage()
      const wallet = await injectWallet(page, account, BASE_SEPOLIA_CHAIN_ID)
      expect((await page.goto(`${server.url}${entryPath}`))!.status()).toBe(402)
      await signIn(page)
      expect(wallet.calls).toEqual(['eth_requestAccounts', 'personal_sign'])
      expect(await page.locator('#signed-in').textContent()).toBe(
        `Signed in as ${account.address.slice(0, 6)}…${account.address.slice(-4)}`,
      )
      const reloaded = await page.goto(`${server.url}${entryPath}`)
      expect(reloaded!.status()).toBe(200)
      expect(reloaded!.headers()['cache-control']).toBe('private, no-store')
      await page.locator('pre.content', { hasText: 'the dawn chorus' }).waitFor({ timeout: 10_000 })
      if (who === 'buyer') await shoot(page, 'signed-in-buyer')
      // The session also reads the bytes at the API URL, in this browser only.
      const bytes = await page.evaluate(async (path) => (await fetch(path)).text(), `/v1/feeds/${feed.id}/entries/${paid.id}/content`)
      expect(JSON.parse(bytes)).toEqual({ secret: 'the dawn chorus, 5:12 am' })
      await page.locator('#sign-out').click()
      await page.locator('#sign-in:not([hidden])').waitFor()
      expect((await page.goto(`${server.url}${entryPath}`))!.status()).toBe(402)
      expect(problems).toEqual([])
      await page.close()
    }

    const { page, problems } = await watchedPage()
    await injectWallet(page, newWallet(), BASE_SEPOLIA_CHAIN_ID)
    await page.goto(`${server.url}/feeds/${feed.id}`)
    await signIn(page)
    expect((await page.goto(`${server.url}${entryPath}`))!.status()).toBe(402)
    expect(await page.locator('#pay').count()).toBe(1)
    expect(problems).toEqual([])
    await page.close()
  }, 90_000)
})
