// A feed's pass in the browser (issue 37), in Debian's headless Chromium with a test wallet behind window.ethereum
// (dev/browser.ts), on a real server and anvil: the feed page offers the pass, an entry's paywall offers it too and a
// way back in for past buyers; its Buy button leads to the pass's own paywall, which the wallet pays; the holder,
// signed in, reads the paid entries (one published after the purchase) and the feed page says until when.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { BASE_SEPOLIA_CHAIN_ID, startChain, type TestChain } from '../dev/chain.ts'
import { injectWallet, launchChromium } from '../dev/browser.ts'

const PASS_PRICE = 500_000n // 0.50 USDC
const ENTRY_PRICE = 200_000n

let chain: TestChain
let server: TestServer
let browser: Browser
let creator: Wallet
let feedId: string

const paidEntry = (title: string, secret: string) =>
  createEntry(server.url, creator, feedId, {
    content_base64: b64(secret),
    mime_type: 'text/plain',
    title,
    is_free: false,
    price: { amount: String(ENTRY_PRICE), currency: 'USDC' },
  })

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  browser = await launchChromium()
  creator = newWallet()
  feedId = (await createFeed(server.url, creator, { name: 'Tide tables' })).id
  const offered = await call(server.url, 'PUT', `/v1/feeds/${feedId}/pass`, {
    wallet: creator,
    body: { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: 30 * 86_400, description: 'every table, all month' },
  })
  expect(offered.status).toBe(200)
})
afterAll(async () => {
  await browser?.close()
  await server?.dispose()
  await chain?.stop()
})

async function watchedPage(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 360, height: 800 } })
  const problems: string[] = []
  page.on('console', (message) => {
    if (message.type() === 'error' && !/^Failed to load resource: the server responded with a status of 40[0124] /.test(message.text()))
      problems.push(`console: ${message.text()}`)
  })
  page.on('pageerror', (error) => problems.push(`page error: ${error.message}`))
  page.on('request', (request) => {
    if (!request.url().startsWith(server.url) && !request.url().startsWith('blob:')) problems.push(`left the server: ${request.url()}`)
  })
  return { page, problems }
}

describe('a pass bought in the browser', () => {
  test('offered on the feed page and beside the paywall; bought through its own paywall; its holder reads everything', async () => {
    const before = await paidEntry('Monday tides', 'high water 06:12')
    const buyer = await chain.newFundedBuyer(2_000_000n)
    const balances = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address) }
    const { page, problems } = await watchedPage()
    const wallet = await injectWallet(page, buyer, BASE_SEPOLIA_CHAIN_ID)

    await page.goto(`${server.url}/feeds/${feedId}`)
    expect(await page.locator('#pass-title').textContent()).toBe('Pass · 0.50 USDC for 30 days')
    expect(await page.locator('#pass .muted').textContent()).toBe('every table, all month')
    expect(await page.locator('#pass-held').count()).toBe(0)

    const entryPath = `/feeds/${feedId}/entries/${before.id}`
    expect((await page.goto(`${server.url}${entryPath}`))!.status()).toBe(402)
    expect(await page.locator('.pass-aside').textContent()).toContain('0.50 USDC for 30 days')
    await page.locator('#paywall-sign-in:not([hidden])').waitFor()
    const passPaywall = page.waitForResponse((r) => r.url().endsWith(`/v1/feeds/${feedId}/pass/purchases`))
    await page.locator('.pass-aside button[type=submit]').click()
    expect((await passPaywall).status()).toBe(402)
    expect(await page.locator('h1').textContent()).toBe('A 30 days pass to Tide tables')
    expect(await page.locator('.price').textContent()).toBe('0.50 USDC')
    await page.locator('#pay:not([disabled])').click()
    await page.locator('#pass-bought').waitFor({ timeout: 30_000 })
    expect(await page.locator('#pass-bought').textContent()).toMatch(/^Your pass runs until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\.$/)
    expect(await page.locator('#status').textContent()).toMatch(/^Paid\. Transaction 0x[0-9a-f]{64}$/)
    expect(wallet.calls).toEqual(['eth_requestAccounts', 'eth_chainId', 'eth_signTypedData_v4'])
    expect(await chain.balanceOf(buyer.address)).toBe(balances.buyer - PASS_PRICE)
    expect(await chain.balanceOf(creator.address)).toBe(balances.creator + PASS_PRICE)
    const ledger = (await call(server.url, 'GET', `/v1/transactions?feed_id=${feedId}`)).body.data
    expect(ledger.map((t: { kind: string; payer: string }) => [t.kind, t.payer])).toEqual([['pass', buyer.address]])

    // Signed in, the holder reads the paid entry, and one published after the purchase, with no payment.
    await page.goto(`${server.url}/feeds/${feedId}`)
    await page.locator('#sign-in:not([hidden])').click()
    await page.locator('#signed-in').waitFor({ timeout: 20_000 })
    const held = await page.goto(`${server.url}/feeds/${feedId}`)
    expect(held!.headers()['cache-control']).toBe('private, no-store')
    expect(await page.locator('#pass-held').textContent()).toMatch(/^Your pass runs until \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC\.$/)
    const after = await paidEntry('Tuesday tides', 'high water 06:57')
    for (const [entry, secret] of [
      [before, 'high water 06:12'],
      [after, 'high water 06:57'],
    ] as const) {
      expect((await page.goto(`${server.url}/feeds/${feedId}/entries/${entry.id}`))!.status()).toBe(200)
      await page.locator('.content.text', { hasText: secret }).waitFor({ timeout: 10_000 })
    }
    expect((await call(server.url, 'GET', `/v1/transactions?feed_id=${feedId}`)).body.data).toHaveLength(1)
    expect(await chain.balanceOf(buyer.address)).toBe(balances.buyer - PASS_PRICE)
    expect(problems).toEqual([])
    await page.close()

    // Anyone else's feed page tells of no pass held; the kept page was not theirs.
    const stranger = await watchedPage()
    await injectWallet(stranger.page, newWallet(), BASE_SEPOLIA_CHAIN_ID)
    await stranger.page.goto(`${server.url}/feeds/${feedId}`)
    expect(await stranger.page.locator('#pass-held').count()).toBe(0)
    await stranger.page.locator('#sign-in:not([hidden])').click()
    await stranger.page.locator('#signed-in').waitFor({ timeout: 20_000 })
    await stranger.page.goto(`${server.url}/feeds/${feedId}`)
    expect(await stranger.page.locator('#pass-held').count()).toBe(0)
    expect((await stranger.page.goto(`${server.url}/feeds/${feedId}/entries/${after.id}`))!.status()).toBe(402)
    expect(stranger.problems).toEqual([])
    await stranger.page.close()
  }, 90_000)

  test('API clients still get the JSON 402 of a pass; a feed whose pass is withdrawn offers none', async () => {
    const plain = await fetch(`${server.url}/v1/feeds/${feedId}/pass/purchases`, { method: 'POST' })
    expect(plain.status).toBe(402)
    expect(plain.headers.get('content-type')).toStartWith('application/json')
    expect((await call(server.url, 'DELETE', `/v1/feeds/${feedId}/pass`, { wallet: creator })).status).toBe(204)
    const { page } = await watchedPage()
    await page.goto(`${server.url}/feeds/${feedId}`)
    expect(await page.locator('#pass').count()).toBe(0)
    await page.close()
  })
})
