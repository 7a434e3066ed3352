// The storefront (issue 38) as a reader uses it, in Debian's headless Chromium: /feeds lists every active feed a page
// at a time, newest, most bought or top earning first; tags and categories are links to their own listings; a path
// nothing serves is a page for a browser and JSON for an API client; from 360 px up no page scrolls sideways, light or
// dark, and axe-core finds no serious or critical violation on any page type.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { launchChromium, pageProblems } from '../dev/browser.ts'
import { waitFor } from './helpers/ledger.ts'

const PRICE = 20_000n

let chain: TestChain
let server: TestServer
let browser: Browser
const creators: Wallet[] = []
const feeds: { id: string; name: string }[] = []
let category: { id: string; name: string }
let paid: { id: string }
let free: { id: string }
let markdownEntry = '/'

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_STATS_REFRESH_S: '1' })
  browser = await launchChromium()
  category = (await call(server.url, 'GET', '/v1/categories?page_size=1')).body.data[0]
  // 30 feeds (ten a wallet, the most one may own), made in turn: newest last.
  for (let i = 0; i < 30; i++) {
    if (i % 10 === 0) creators.push(newWallet())
    const tags = i % 3 === 0 ? ['tides', `n${i}`] : [`n${i}`]
    const body = { name: `Feed ${String(i).padStart(2, '0')}`, tags, ...(i % 5 === 0 ? { category_id: category.id } : {}) }
    feeds.push(await createFeed(server.url, creators[creators.length - 1]!, body))
  }
  const owner = creators[0]!
  const priced = { is_free: false, price: { amount: String(PRICE), currency: 'USDC' }, mime_type: 'text/plain' }
  paid = await createEntry(server.url, owner, feeds[1]!.id, { content_base64: b64('paid words'), title: 'Paid', ...priced })
  free = await createEntry(server.url, owner, feeds[1]!.id, { content_base64: b64('free words'), title: 'Free', mime_type: 'text/plain' })
})
afterAll(async () => {
  await browser?.close()
  await server?.dispose()
  await chain?.stop()
})

const names = async (page: Page) => page.locator('.cards .card h3').allTextContents()

describe('browsing', () => {
  test('/feeds: every active feed, newest first, 24 a page; "More feeds" walks to the rest, none twice', async () => {
    const page = await browser.newPage()
    expect((await page.goto(`${server.url}/feeds`))!.status()).toBe(200)
    const first = await names(page)
    expect(first).toHaveLength(24)
    expect(first[0]).toBe('Feed 29')
    await page.locator('a[rel=next]').click()
    const rest = await names(page)
    expect([...first, ...rest]).toEqual(feeds.map((f) => f.name).reverse())
    expect(await page.locator('a[rel=next]').count()).toBe(0)
    expect((await page.goto(`${server.url}/feeds?sort=bogus`))!.status()).toBe(400)
    await page.close()
  })

  test('most bought and top earning first, once sold; the home page shows the newest feeds and the categories', async () => {
    for (const [feed, times] of [
      [feeds[7]!, 2],
      [feeds[3]!, 1],
    ] as const) {
      const owner = creators[0]!
      const entry = await createEntry(server.url, owner, feed.id, {
        content_base64: b64('sold'),
        is_free: false,
        price: { amount: String(PRICE * BigInt(4 - times)), currency: 'USDC' },
      })
      for (let i = 0; i < times; i++) {
        const buyer = await chain.newFundedBuyer(1_000_000n)
        const header = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE * BigInt(4 - times) }))
        const bought = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, { headers: { 'x-payment': header } })
        expect(bought.status).toBe(200)
      }
    }
    const page = await browser.newPage()
    await page.goto(`${server.url}/feeds?sort=popular`)
    expect((await names(page)).slice(0, 2)).toEqual(['Feed 07', 'Feed 03'])
    expect(await page.locator('.sorts [aria-current=page]').textContent()).toBe('Most bought')
    await page.goto(`${server.url}/feeds?sort=revenue`) // 2 × 40000 against 1 × 60000
    expect((await names(page)).slice(0, 2)).toEqual(['Feed 07', 'Feed 03'])
    await page.goto(`${server.url}/`)
    expect(await page.locator('.cards').first().locator('h3').first().textContent()).toBeString()
    expect(await page.locator(`.categories a[href="/categories/${category.id}"]`).textContent()).toBe(category.name)
    await waitFor('the trending feeds on the home page', async () => {
      await page.goto(`${server.url}/`)
      return (await page.locator('h2', { hasText: 'Trending feeds' }).count()) === 1
    })
    await page.close()
  })

  test('a feed page names its category and its tags, each a link to the feeds that share it', async () => {
    const page = await browser.newPage()
    await page.goto(`${server.url}/feeds/${feeds[0]!.id}`)
    await page.locator(`.byline a[href="/categories/${category.id}"]`).click()
    expect(await page.locator('h1').textContent()).toBe(category.name)
    expect(await names(page)).toEqual(['Feed 25', 'Feed 20', 'Feed 15', 'Feed 10', 'Feed 05', 'Feed 00'])
    expect(await page.locator('.categories [aria-current=page]').textContent()).toBe(category.name)
    // The same page by its id in capitals; a category that does not exist is not found each time asked, nor a path that
    // names no id (a page for a browser: 404).
    const status = async (path: string) => (await page.goto(server.url + path))!.status()
    expect(await status(`/categories/${category.id.toUpperCase()}`)).toBe(200)
    expect(await page.locator('h1').textContent()).toBe(category.name)
    for (let i = 0; i < 2; i++) expect(await status(`/categories/${crypto.randomUUID()}`)).toBe(404)
    expect(await status('/categories/not-an-id')).toBe(404)
    await page.goto(`${server.url}/feeds/${feeds[0]!.id}`)
    await page.locator('.feed-head .tags a', { hasText: 'tides' }).click()
    expect(page.url()).toBe(`${server.url}/tags/tides`)
    expect(await names(page)).toEqual([
      'Feed 27',
      'Feed 24',
      'Feed 21',
      'Feed 18',
      'Feed 15',
      'Feed 12',
      'Feed 09',
      'Feed 06',
      'Feed 03',
      'Feed 00',
    ])
    await page.close()
  })

  test('a path nothing serves: a page for a browser (404), JSON for an API client', async () => {
    const page = await browser.newPage()
    const answer = await page.goto(`${server.url}/no/such/page`)
    expect(answer!.status()).toBe(404)
    expect(answer!.headers()['content-type']).toStartWith('text/html')
    expect(await page.locator('h1').textContent()).toBe('Not found')
    await page.close()
    const api = await fetch(`${server.url}/no/such/page`)
    expect([api.status, ((await api.json()) as { code: string }).code]).toEqual([404, 'NOT_FOUND'])
  })
})

describe('reading', () => {
  const MARKDOWN = [
    '# Dawn notes',
    '',
    'The *chorus* starts at [five](https://example.com/five).',
    '',
    '<script>alert("md script")</script>',
    '',
    '[click me](javascript:alert(1))',
    '',
    '<img src=x onerror=alert("md img")>',
  ].join('\n')
  const HTML = '<!doctype html><title>t</title><h1>Framed</h1><script>parent.alert("html script")</script>'

  test('Markdown rendered and sanitized; HTML in a sandboxed frame; text in proportional type; JSON pretty; nothing runs', async () => {
    const owner = creators[1]!
    const feed = feeds[11]!
    const made = async (mime_type: string, text: string) =>
      (await createEntry(server.url, owner, feed.id, { content_base64: b64(text), mime_type, title: mime_type })).id
    const entries = {
      markdown: await made('text/markdown', MARKDOWN),
      html: await made('text/html', HTML),
      text: await made('text/plain', 'Plain words,\nkept as they were.'),
      json: await made('application/json', '{"a":[1,2]}'),
    }
    markdownEntry = `/feeds/${feed.id}/entries/${entries.markdown}`
    const page = await browser.newPage()
    const problems: string[] = []
    page.on('dialog', (dialog) => (problems.push(dialog.message()), void dialog.dismiss()))
    page.on('pageerror', (error) => problems.push(error.message))
    page.on('console', (message) => {
      if (message.type() === 'error') problems.push(message.text())
    })
    await page.goto(`${server.url}/feeds/${feed.id}/entries/${entries.markdown}`)
    const prose = page.locator('.prose')
    expect(await prose.locator('h1').textContent()).toBe('Dawn notes')
    expect(await prose.locator('em').textContent()).toBe('chorus')
    expect(await prose.locator('a[href="https://example.com/five"]').textContent()).toBe('five')
    expect(await prose.locator('script, img, [onerror]').count()).toBe(0)
    expect(await prose.locator('a', { hasText: 'click me' }).getAttribute('href')).toBeNull()

    await page.goto(`${server.url}/feeds/${feed.id}/entries/${entries.html}`)
    const frame = page.locator('iframe.framed')
    expect(await frame.getAttribute('sandbox')).toBe('')
    expect(await page.frameLocator('iframe.framed').locator('h1').textContent()).toBe('Framed')

    await page.goto(`${server.url}/feeds/${feed.id}/entries/${entries.text}`)
    await page.locator('.content.text', { hasText: 'kept as they were' }).waitFor()
    expect(await page.locator('.content.text').evaluate((e) => getComputedStyle(e).fontFamily)).not.toContain('monospace')
    await page.goto(`${server.url}/feeds/${feed.id}/entries/${entries.json}`)
    await page.locator('pre.content', { hasText: '"a": [' }).waitFor()
    await Bun.sleep(300)
    // The HTML entry's script was there, and the sandbox refused it (Chromium says so): the one message allowed.
    const blocked = problems.filter((p) =>
      /^Blocked script execution in .* sandboxed and the 'allow-scripts' permission is not set/.test(p),
    )
    expect(blocked).toHaveLength(1)
    expect(problems.filter((p) => !blocked.includes(p))).toEqual([])
    await page.close()
  })
})

/** A feed page's entry rows (title, price cell, button) as `wallet` sees it, signed in by a browser session; or anyone. */
async function rowsAs(feed: { id: string }, wallet: { address: string } | null): Promise<string[][]> {
  const page = await browser.newPage()
  if (wallet) {
    const opened = await fetch(`${server.url}/v1/auth/session`, {
      method: 'POST',
      headers: await authHeaders(server.url, wallet as Wallet),
    })
    const [name, value] = opened.headers.getSetCookie()[0]!.split(';')[0]!.split('=') as [string, string]
    await page.context().addCookies([{ name, value, url: server.url }])
  }
  await page.goto(`${server.url}/feeds/${feed.id}`)
  const rows = await page
    .locator('table.entries tbody tr')
    .evaluateAll((trs) =>
      trs.map((tr) => [
        tr.querySelector('.title')!.textContent!,
        tr.querySelectorAll('td.num')[0]!.textContent!,
        tr.querySelector('a.button')!.textContent!,
      ]),
    )
  await page.close()
  return rows
}

describe('truthful details', () => {
  test('signed in, a buyer sees "Owned" and "Read" for what they bought, the owner "Yours"; no revenue, no revenue rank', async () => {
    const owner = creators[1]!
    const feed = feeds[12]!
    const priced = { is_free: false, price: { amount: String(PRICE), currency: 'USDC' }, mime_type: 'text/plain' }
    const bought = await createEntry(server.url, owner, feed.id, { content_base64: b64('bought words'), title: 'Bought', ...priced })
    await createEntry(server.url, owner, feed.id, { content_base64: b64('other words'), title: 'Not bought', ...priced })
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const header = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE }))
    expect(
      (await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${bought.id}/content`, { headers: { 'x-payment': header } })).status,
    ).toBe(200)
    expect(await rowsAs(feed, buyer)).toEqual([
      ['Not bought', '0.02 USDC', 'Buy'],
      ['Bought', 'Owned', 'Read'],
    ])
    expect(await rowsAs(feed, owner)).toEqual([
      ['Not bought', 'Yours', 'Read'],
      ['Bought', 'Yours', 'Read'],
    ])
    expect(await rowsAs(feed, null)).toEqual([
      ['Not bought', '0.02 USDC', 'Buy'],
      ['Bought', '0.02 USDC', 'Buy'],
    ])
    const page = await browser.newPage()
    await page.goto(`${server.url}/creators/${creators[2]!.address}`)
    expect(await page.locator('.figures').textContent()).not.toContain('revenue rank')
    await page.close()
  })

  test('of 30 paid entries, a buyer of 2 sees just those "Owned"; a pass holder reads all; the rest see prices', async () => {
    const owner = creators[1]!
    const feed = feeds[13]!
    const priced = { is_free: false, price: { amount: String(PRICE), currency: 'USDC' }, mime_type: 'text/plain' }
    const titles: string[] = []
    const ids: string[] = []
    for (let i = 0; i < 30; i++) {
      titles.unshift(`Log ${String(i).padStart(2, '0')}`)
      ids.unshift((await createEntry(server.url, owner, feed.id, { content_base64: b64(`log ${i}`), title: titles[0], ...priced })).id)
    }
    const PASS_PRICE = 100_000n
    const offered = await call(server.url, 'PUT', `/v1/feeds/${feed.id}/pass`, {
      wallet: owner,
      body: { price: { amount: String(PASS_PRICE), currency: 'USDC' }, duration_s: 86_400 },
    })
    expect(offered.status).toBe(200)
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const boughtTitles = ['Log 04', 'Log 21']
    for (const title of boughtTitles) {
      const header = encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE }))
      const path = `/v1/feeds/${feed.id}/entries/${ids[titles.indexOf(title)]}/content`
      expect((await fetch(`${server.url}${path}`, { headers: { 'x-payment': header } })).status).toBe(200)
    }
    const holder = await chain.newFundedBuyer(1_000_000n)
    const passHeader = encodePaymentHeader(await v1Payment(holder, { to: owner.address, value: PASS_PRICE }))
    const passBought = await fetch(`${server.url}/v1/feeds/${feed.id}/pass/purchases`, {
      method: 'POST',
      headers: { 'x-payment': passHeader },
    })
    expect(passBought.status).toBe(201)
    expect(await rowsAs(feed, buyer)).toEqual(
      titles.map((title) => (boughtTitles.includes(title) ? [title, 'Owned', 'Read'] : [title, '0.02 USDC', 'Buy'])),
    )
    expect(await rowsAs(feed, holder)).toEqual(titles.map((title) => [title, 'Pass', 'Read']))
    for (const reader of [newWallet(), null]) expect(await rowsAs(feed, reader)).toEqual(titles.map((title) => [title, '0.02 USDC', 'Buy']))
  }, 60_000)
})

describe('searching', () => {
  test("from the box on any page: a word only in a free entry's text is found, marked; one only in paid content is not", async () => {
    const owner = creators[2]!
    const feed = feeds[21]!
    const priced = { is_free: false, price: { amount: String(PRICE), currency: 'USDC' } }
    await createEntry(server.url, owner, feed.id, {
      content_base64: b64('The heron wades at dusk.'),
      mime_type: 'text/plain',
      title: 'Birds',
    })
    await createEntry(server.url, owner, feed.id, {
      content_base64: b64('The kingfisher dives.'),
      mime_type: 'text/plain',
      title: 'More',
      ...priced,
    })
    const page = await browser.newPage()
    await page.goto(`${server.url}/feeds`)
    await page.locator('#search-q').fill('heron')
    await page.locator('#search-q').press('Enter')
    await page.waitForURL(`${server.url}/search?q=heron`)
    expect(await page.locator('.hit h2').allTextContents()).toEqual(['Birds'])
    expect(await page.locator('.hit mark').allTextContents()).toEqual(['heron'])
    await page.goto(`${server.url}/search?q=kingfisher`)
    expect(await page.locator('.hit').count()).toBe(0)
    expect(await page.content()).not.toContain('dives')
    await page.close()
  })
})

describe('found and shared', () => {
  test('a feed page names its feeds for autodiscovery and shows them; its card for sharing; favicon, robots, sitemap', async () => {
    const cover = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 4 2"><rect width="4" height="2" fill="#2d6a4f"/></svg>`
    const feed = await createFeed(server.url, newWallet(), {
      name: 'Shared "feed" <b>',
      description: 'Seen in a link preview.',
      image_url: `data:image/svg+xml;base64,${b64(cover)}`,
    })
    const page = await browser.newPage()
    await page.goto(`${server.url}/feeds/${feed.id}`)
    const alternates = await page
      .locator('link[rel=alternate]')
      .evaluateAll((links) => links.map((l) => [l.getAttribute('type'), l.getAttribute('href')]))
    expect(alternates).toEqual([
      ['application/rss+xml', `/v1/feeds/${feed.id}/feed.xml`],
      ['application/atom+xml', `/v1/feeds/${feed.id}/feed.atom`],
      ['application/feed+json', `/v1/feeds/${feed.id}/feed.json`],
    ])
    for (const [type, href] of alternates) {
      const answer = await fetch(`${server.url}${href}`)
      expect([answer.status, answer.headers.get('content-type')?.split(';')[0]]).toEqual([
        200,
        type === 'application/feed+json' ? type : expect.any(String),
      ])
      expect(await answer.text()).toContain('Shared')
    }
    expect(await page.locator('.follow a').allTextContents()).toEqual(['RSS', 'Atom', 'JSON Feed'])
    const meta = async (key: string) => page.locator(`meta[property="${key}"], meta[name="${key}"]`).getAttribute('content')
    expect(await meta('og:title')).toBe('Shared "feed" <b>')
    expect(await meta('og:url')).toBe(`${server.url}/feeds/${feed.id}`)
    expect(await meta('og:image')).toBe(`${server.url}/v1/feeds/${feed.id}/image`)
    expect(await meta('og:description')).toBe('Seen in a link preview.')
    expect(await meta('twitter:card')).toBe('summary_large_image')
    const icon = await page.locator('link[rel=icon]').getAttribute('href')
    expect((await fetch(`${server.url}${icon}`)).headers.get('content-type')).toBe('image/svg+xml')
    expect((await fetch(`${server.url}/favicon.ico`)).status).toBe(200)
    await page.close()

    const robots = await (await fetch(`${server.url}/robots.txt`)).text()
    expect(robots).toContain(`Sitemap: ${server.url}/sitemap.xml`)
    expect(robots).toContain('Disallow: /v1/pass-feeds/')
    const map = await (await fetch(`${server.url}/sitemap.xml`)).text()
    for (const f of [...feeds, feed]) expect(map).toContain(`<loc>${server.url}/feeds/${f.id}</loc>`)
    expect(map).toContain(`<loc>${server.url}/categories/${category.id}</loc>`)
    expect(map).toContain(`<loc>${server.url}/creators/${creators[0]!.address}</loc>`)
  })
})

describe('any screen, anyone', () => {
  const pageTypes = () => ({
    home: '/',
    feeds: '/feeds',
    category: `/categories/${category.id}`,
    tag: '/tags/tides',
    feed: `/feeds/${feeds[1]!.id}`,
    'free entry': `/feeds/${feeds[1]!.id}/entries/${free.id}`,
    paywall: `/feeds/${feeds[1]!.id}/entries/${paid.id}`,
    markdown: markdownEntry,
    search: '/search?q=words',
    creator: `/creators/${creators[0]!.address}`,
    leaderboards: '/leaderboards',
    'not found': '/nowhere',
  })

  for (const scheme of ['light', 'dark'] as const) {
    test(`at 360 px (${scheme}): nothing scrolls sideways; axe-core finds no serious or critical violation`, async () => {
      const page = await browser.newPage({ viewport: { width: 360, height: 800 }, colorScheme: scheme })
      const found: Record<string, unknown> = {}
      for (const [name, path] of Object.entries(pageTypes())) {
        await page.goto(`${server.url}${path}`)
        found[name] = await pageProblems(page)
      }
      expect(found).toEqual(Object.fromEntries(Object.keys(pageTypes()).map((name) => [name, { sideways: false, violations: [] }])))
      await page.close()
    }, 60_000)
  }
})
