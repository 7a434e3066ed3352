// The studio session (issue 39): one SIWE sign-in lets the studio's pages write the wallet's own resources without a
// signature per click — only from this server's own pages (Origin, Sec-Fetch-Site), only with the session's CSRF
// token, for 12 hours or until sign-out — and never moves money. Real servers over HTTP, real viem wallets.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, newWallet, type Reply, type Wallet } from '../dev/api.ts'
import { testDatabase, type TestDatabase } from '../dev/test-database.ts'
import { STUDIO_WRITES } from '../src/routes/studio-writes.ts'

const STUDIO_TTL_S = 43_200
const EVIL = 'https://evil.example'

interface Studio {
  cookie: string
  csrf: string
  reply: Reply
}

/** Signs in as the pages do: the wallet signs the nonce's EIP-4361 message, sent as base64, from a page of `url`. */
async function signIn(url: string, wallet: Wallet, path = '/v1/auth/studio', site = pageOf(url)): Promise<Studio> {
  const nonce = (await call(url, 'POST', '/v1/auth/nonce', { body: { wallet_address: wallet.address } })).body
  const headers = {
    'x-wallet-address': wallet.address,
    'x-signature': await wallet.signMessage({ message: nonce.siwe_message }),
    'x-message': b64(nonce.siwe_message),
    'x-timestamp': String(Math.floor(Date.now() / 1000)),
    ...site,
  }
  const reply = await call(url, 'POST', path, { headers })
  const cookie = reply.headers.getSetCookie()[0]?.split(';')[0] ?? ''
  return { cookie, csrf: reply.body?.csrf_token, reply }
}

/** What a fetch of the studio's page sends: its origin and Sec-Fetch-Site. */
const pageOf = (url: string) => ({ origin: new URL(url).origin, 'sec-fetch-site': 'same-origin' })
/** A studio page's write: the cookie, the CSRF token and where it comes from. */
const studioHeaders = (url: string, studio: Studio) => ({ cookie: studio.cookie, 'x-trellis-csrf': studio.csrf, ...pageOf(url) })

describe('one server', () => {
  let server: TestServer
  let url: string
  const feedsOf = async (wallet: Wallet): Promise<{ name: string; id: string }[]> => {
    const id = (await call(url, 'GET', `/v1/wallets/address/${wallet.address}`)).body?.id
    return id ? (await call(url, 'GET', `/v1/feeds?owner_id=${id}`)).body.data : []
  }
  const feedName = async (id: string) => (await call(url, 'GET', `/v1/feeds/${id}`)).body.name

  beforeAll(async () => {
    server = await startTestServer({ TRELLIS_TEST_CLOCK_FILE: testClockFile() })
    url = server.url
  })
  afterAll(() => server.dispose())

  test('sign-in sets an HttpOnly SameSite=Strict cookie of 12 hours; its pages read the CSRF token back', async () => {
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    expect(studio.reply.status).toBe(200)
    expect(studio.reply.headers.getSetCookie()).toHaveLength(1)
    expect(studio.reply.headers.getSetCookie()[0]).toMatch(
      /^trellis_studio=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=43200; HttpOnly; SameSite=Strict$/,
    )
    expect(studio.reply.body.wallet_address).toBe(wallet.address)
    expect(studio.csrf).toMatch(/^[\w-]{43}$/)
    const now = Math.floor(Date.now() / 1000)
    expect(studio.reply.body.expires_at).toBeGreaterThanOrEqual(now + STUDIO_TTL_S - 5)
    expect(studio.reply.body.expires_at).toBeLessThanOrEqual(now + STUDIO_TTL_S + 5)
    // A page reload asks for it again (a same-origin GET sends Sec-Fetch-Site, no Origin).
    const again = await call(url, 'GET', '/v1/auth/studio', { headers: { cookie: studio.cookie, 'sec-fetch-site': 'same-origin' } })
    expect(again.status).toBe(200)
    expect(again.headers.get('cache-control')).toBe('no-store')
    expect(again.body).toEqual(studio.reply.body)
    // Not to another site's page, nor to a caller that says nothing of where it comes from; 401 without a session.
    const cross = await call(url, 'GET', '/v1/auth/studio', { headers: { cookie: studio.cookie, 'sec-fetch-site': 'cross-site' } })
    expect([cross.status, cross.body.code]).toEqual([403, 'CROSS_SITE_REQUEST'])
    expect((await call(url, 'GET', '/v1/auth/studio', { headers: { cookie: studio.cookie } })).status).toBe(403)
    expect((await call(url, 'GET', '/v1/auth/studio', { headers: { 'sec-fetch-site': 'same-origin' } })).status).toBe(401)
    // Another site's page cannot open one.
    const refused = await signIn(url, newWallet(), '/v1/auth/studio', { origin: EVIL, 'sec-fetch-site': 'cross-site' })
    expect([refused.reply.status, refused.reply.body.code, refused.cookie]).toEqual([403, 'CROSS_SITE_REQUEST', ''])
  })

  test("the studio's pages write the wallet's own resources with no signature: a feed, its edit, an entry, a pass offer", async () => {
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    const headers = studioHeaders(url, studio)
    const created = await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'From the studio' } })
    expect(created.status).toBe(201)
    expect(created.body.owner_wallet_address).toBe(wallet.address)
    const patched = await call(url, 'PATCH', `/v1/feeds/${created.body.id}`, { headers, body: { name: 'Renamed in the studio' } })
    expect([patched.status, patched.body.name]).toEqual([200, 'Renamed in the studio'])
    const entry = await call(url, 'POST', `/v1/feeds/${created.body.id}/entries`, {
      headers,
      body: { content_base64: b64('written without a signature'), mime_type: 'text/plain', title: 'Unsigned' },
    })
    expect(entry.status).toBe(201)
    const offer = { price: { amount: '5000000', currency: 'USDC' }, duration_s: 2_592_000 }
    expect((await call(url, 'PUT', `/v1/feeds/${created.body.id}/pass`, { headers, body: offer })).status).toBe(200)
    expect((await feedsOf(wallet)).map((f) => f.name)).toEqual(['Renamed in the studio'])
  })

  test('the attacks each answer 403 and write nothing', async () => {
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    const feed = (await call(url, 'POST', '/v1/feeds', { headers: studioHeaders(url, studio), body: { name: 'Kept' } })).body
    const attempts: [string, Record<string, string>, string][] = [
      // A form of another site posting to the API (a browser would not even send a SameSite=Strict cookie).
      ['cross-site form', { cookie: studio.cookie, origin: EVIL, 'sec-fetch-site': 'cross-site' }, 'CROSS_SITE_REQUEST'],
      // A fetch of another origin with credentials, even holding the right token.
      ['cross-origin fetch', { ...studioHeaders(url, studio), origin: EVIL, 'sec-fetch-site': 'cross-site' }, 'CROSS_SITE_REQUEST'],
      // A sibling site (same-site is not same-origin).
      ['same-site', { ...studioHeaders(url, studio), 'sec-fetch-site': 'same-site' }, 'CROSS_SITE_REQUEST'],
      ['no Origin', { cookie: studio.cookie, 'x-trellis-csrf': studio.csrf, 'sec-fetch-site': 'same-origin' }, 'CROSS_SITE_REQUEST'],
      ['no CSRF token', { cookie: studio.cookie, ...pageOf(url) }, 'INVALID_CSRF_TOKEN'],
      ['a forged token', { ...studioHeaders(url, studio), 'x-trellis-csrf': 'A'.repeat(43) }, 'INVALID_CSRF_TOKEN'],
    ]
    const other = await signIn(url, wallet) // the same wallet's other session: its token is not this session's
    const stranger = await signIn(url, newWallet())
    attempts.push(['the token of another session', { ...studioHeaders(url, studio), 'x-trellis-csrf': other.csrf }, 'INVALID_CSRF_TOKEN'])
    attempts.push(["another wallet's token", { ...studioHeaders(url, studio), 'x-trellis-csrf': stranger.csrf }, 'INVALID_CSRF_TOKEN'])
    for (const [what, headers, code] of attempts) {
      const form = await call(url, 'POST', '/v1/feeds', {
        headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' },
        rawBody: 'name=pwned',
      })
      const create = await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'pwned' } })
      const edit = await call(url, 'PATCH', `/v1/feeds/${feed.id}`, { headers, body: { name: 'pwned' } })
      const remove = await call(url, 'DELETE', `/v1/feeds/${feed.id}`, { headers })
      for (const reply of [form, create, edit, remove]) expect([what, reply.status, reply.body?.code]).toEqual([what, 403, code])
    }
    expect((await feedsOf(wallet)).map((f) => f.name)).toEqual(['Kept'])
  })

  test('after sign-out the cookie and its token are replayed in vain; the reading session ends with it', async () => {
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    const reading = await signIn(url, wallet, '/v1/auth/session')
    const headers = studioHeaders(url, studio)
    const feed = (await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'Before sign-out' } })).body
    const out = await call(url, 'DELETE', '/v1/auth/studio', { headers: { cookie: `${studio.cookie}; ${reading.cookie}` } })
    expect(out.status).toBe(204)
    expect(out.headers.getSetCookie()).toContain('trellis_studio=; Path=/; Max-Age=0; HttpOnly; SameSite=Strict')
    const replayed = await call(url, 'PATCH', `/v1/feeds/${feed.id}`, { headers, body: { name: 'After sign-out' } })
    expect([replayed.status, replayed.body.code]).toEqual([403, 'STUDIO_SESSION_INVALID'])
    expect((await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'After sign-out' } })).status).toBe(403)
    expect(
      (await call(url, 'GET', '/v1/auth/studio', { headers: { cookie: studio.cookie, 'sec-fetch-site': 'same-origin' } })).status,
    ).toBe(401)
    expect((await call(url, 'GET', '/v1/auth/session', { headers: { cookie: reading.cookie } })).status).toBe(401)
    expect(await feedName(feed.id)).toBe('Before sign-out')
    // The pages' sign-out (DELETE /v1/auth/session) ends a studio session too.
    const next = await signIn(url, wallet)
    expect((await call(url, 'DELETE', '/v1/auth/session', { headers: { cookie: next.cookie } })).status).toBe(204)
    const after = await call(url, 'PATCH', `/v1/feeds/${feed.id}`, { headers: studioHeaders(url, next), body: { name: 'x' } })
    expect([after.status, after.body.code]).toEqual([403, 'STUDIO_SESSION_INVALID'])
  })

  test('a reading session never writes, and the two tokens never pass for each other', async () => {
    const wallet = newWallet()
    const reading = await signIn(url, wallet, '/v1/auth/session')
    expect(reading.cookie).toStartWith('trellis_session=')
    // Its own cookie is no studio session: the write must sign, as before.
    const write = await call(url, 'POST', '/v1/feeds', { headers: { cookie: reading.cookie, ...pageOf(url) }, body: { name: 'r' } })
    expect([write.status, write.body.code]).toEqual([401, 'AUTH_REQUIRED'])
    // Its token in the studio's cookie is no studio session either.
    const token = reading.cookie.slice('trellis_session='.length)
    const headers = { cookie: `trellis_studio=${token}`, 'x-trellis-csrf': 'A'.repeat(43), ...pageOf(url) }
    const smuggled = await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'r' } })
    expect([smuggled.status, smuggled.body.code]).toEqual([403, 'STUDIO_SESSION_INVALID'])
    // Nor does a studio token read as a reading session.
    const studio = await signIn(url, wallet)
    const asReading = `trellis_session=${studio.cookie.slice('trellis_studio='.length)}`
    expect((await call(url, 'GET', '/v1/auth/session', { headers: { cookie: asReading } })).status).toBe(401)
    expect(await feedsOf(wallet)).toEqual([])
  })

  test("the studio's pages show the records only to the wallet's own navigations, the preview only to its pages", async () => {
    const wallet = newWallet()
    await call(url, 'POST', '/v1/feeds', { wallet, body: { name: 'A feed of its own' } })
    const studio = await signIn(url, wallet)
    const page = async (site: string | null, cookie = studio.cookie) => {
      const headers = { cookie, accept: 'text/html', ...(site ? { 'sec-fetch-site': site } : {}) }
      const answer = await fetch(`${url}/studio`, { headers })
      return { status: answer.status, cache: answer.headers.get('cache-control'), text: await answer.text() }
    }
    for (const site of ['same-origin', 'none', null]) {
      const own = await page(site)
      expect({ site, status: own.status, cache: own.cache, shown: own.text.includes('A feed of its own') }).toEqual({
        site,
        status: 200,
        cache: 'private, no-store',
        shown: true,
      })
      expect(own.text).toContain(studio.csrf)
    }
    // A page of another origin on this site, or of another site, gets the sign-in page: no record, no token.
    for (const site of ['same-site', 'cross-site']) {
      const other = await page(site)
      expect({ site, signIn: other.text.includes('id="studio-sign-in"'), shown: other.text.includes('A feed of its own') }).toEqual({
        site,
        signIn: true,
        shown: false,
      })
      expect(other.text).not.toContain(studio.csrf)
    }
    const preview = (headers: Record<string, string>) =>
      fetch(`${url}/studio/preview`, { method: 'POST', headers: { 'content-type': 'text/markdown', ...headers }, body: '# Hi' })
    const shown = await preview(studioHeaders(url, studio))
    expect([shown.status, await shown.text()]).toEqual([200, '<h1>Hi</h1>\n'])
    expect((await preview({ ...studioHeaders(url, studio), origin: EVIL })).status).toBe(403)
    expect((await preview({ ...studioHeaders(url, studio), 'x-trellis-csrf': 'A'.repeat(43) })).status).toBe(403)
    expect((await preview({ ...pageOf(url) })).status).toBe(401)
  })

  test('API clients keep signing: a signature decides; without one, a request naming no origin is not written for', async () => {
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    // The cookie and token without Origin or Sec-Fetch-Site (not a browser): the guard asks for a signature.
    const bare = await call(url, 'POST', '/v1/feeds', {
      headers: { cookie: studio.cookie, 'x-trellis-csrf': studio.csrf },
      body: { name: 'b' },
    })
    expect([bare.status, bare.body.code]).toEqual([401, 'AUTH_REQUIRED'])
    // A signature beside the cookie is checked as always, and decides who writes.
    const signer = newWallet()
    const headers = { ...studioHeaders(url, studio), ...(await authHeaders(url, signer)) }
    const signed = await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'Signed' } })
    expect([signed.status, signed.body.owner_wallet_address]).toEqual([201, signer.address])
    const badSignature = { ...studioHeaders(url, studio), ...(await authHeaders(url, signer)), 'x-signature': `0x${'ab'.repeat(65)}` }
    expect((await call(url, 'POST', '/v1/feeds', { headers: badSignature, body: { name: 'Bad' } })).body.code).toBe('INVALID_SIGNATURE')
    // A signed route that is not one of the studio's writes wants its signature.
    const webhooks = await call(url, 'GET', '/v1/webhooks', { headers: studioHeaders(url, studio) })
    expect([webhooks.status, webhooks.body.code]).toEqual([401, 'AUTH_REQUIRED'])
    expect(await feedsOf(wallet)).toEqual([])
  })

  test('money never moves on the cookie: the purchase routes are not studio writes and ignore it', async () => {
    for (const [method, path] of STUDIO_WRITES) {
      expect(`${method} ${path}`).not.toMatch(/purchases|content|feed-url|access\/|auth/)
      expect(method).not.toBe('GET')
    }
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    const headers = studioHeaders(url, studio)
    const feed = (await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'Paid' } })).body
    const paid = { content_base64: b64('paid bytes'), mime_type: 'text/plain', is_free: false, price: { amount: '2500', currency: 'USDC' } }
    const entry = (await call(url, 'POST', `/v1/feeds/${feed.id}/entries`, { headers, body: paid })).body
    const offer = { price: { amount: '5000000', currency: 'USDC' }, duration_s: 2_592_000 }
    expect((await call(url, 'PUT', `/v1/feeds/${feed.id}/pass`, { headers, body: offer })).status).toBe(200)
    // The owner's studio cookie is no sign-in on a paid entry's bytes: the 402 (signed, the owner reads them).
    const content = `/v1/feeds/${feed.id}/entries/${entry.id}/content`
    expect((await call(url, 'GET', content, { headers })).status).toBe(402)
    expect((await call(url, 'GET', content, { wallet })).text).toBe('paid bytes')
    // Buying the pass: the cookie is no signer there either, the owner's or a buyer's: the challenge, as to anyone.
    const buy = await call(url, 'POST', `/v1/feeds/${feed.id}/pass/purchases`, { headers })
    expect(buy.status).toBe(402)
    const buyer = newWallet()
    const buyerStudio = await signIn(url, buyer)
    const asBuyer = await call(url, 'POST', `/v1/feeds/${feed.id}/pass/purchases`, { headers: studioHeaders(url, buyerStudio) })
    expect(asBuyer.status).toBe(402)
    expect(asBuyer.headers.get('payment-required')).toBeTruthy()
  })

  test('a session lives 12 hours (the test clock): a minute before, it writes; past it, 403 and nothing written', async () => {
    const wallet = newWallet()
    const studio = await signIn(url, wallet)
    const headers = studioHeaders(url, studio)
    const feed = (await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'Young' } })).body
    try {
      await server.moveClock(STUDIO_TTL_S - 60)
      expect((await call(url, 'PATCH', `/v1/feeds/${feed.id}`, { headers, body: { name: 'Eleven hours on' } })).status).toBe(200)
      await server.moveClock(STUDIO_TTL_S + 1)
      const late = await call(url, 'PATCH', `/v1/feeds/${feed.id}`, { headers, body: { name: 'Too late' } })
      expect([late.status, late.body.code]).toEqual([403, 'STUDIO_SESSION_INVALID'])
      expect((await call(url, 'POST', '/v1/feeds', { headers, body: { name: 'Too late' } })).status).toBe(403)
    } finally {
      await server.moveClock(0)
    }
    expect(await feedName(feed.id)).toBe('Eleven hours on')
    expect((await feedsOf(wallet)).length).toBe(1)
  })
})

describe('behind an https public URL (two instances on one database in the PostgreSQL pass)', () => {
  const PUBLIC = 'https://studio.example'
  let database: TestDatabase | null = null
  const servers: TestServer[] = []

  beforeAll(async () => {
    database = await testDatabase()
    const env: Record<string, string> = { TRELLIS_PUBLIC_URL: PUBLIC, ...database?.env }
    servers.push(await startTestServer(env))
    if (database) servers.push(await startTestServer(env))
  })
  afterAll(async () => {
    for (const server of servers) await server.dispose()
    await database?.drop()
  })

  test('the cookie is Secure; Origin is the public origin; sign-out on one instance ends it on every one', async () => {
    const [a, b = servers[0]!] = servers
    const wallet = newWallet()
    const studio = await signIn(a!.url, wallet, '/v1/auth/studio', pageOf(PUBLIC))
    const cookie = studio.reply.headers.getSetCookie()[0]!
    for (const attribute of ['Path=/', 'Max-Age=43200', 'Secure', 'HttpOnly', 'SameSite=Strict']) expect(cookie).toContain(`; ${attribute}`)
    const headers = studioHeaders(PUBLIC, studio)
    // The listening address is not the public origin: a page must come from the public one.
    const local = await call(b.url, 'POST', '/v1/feeds', { headers: studioHeaders(a!.url, studio), body: { name: 'local' } })
    expect([local.status, local.body.code]).toEqual([403, 'CROSS_SITE_REQUEST'])
    const feed = await call(b.url, 'POST', '/v1/feeds', { headers, body: { name: 'Written on B' } })
    expect([feed.status, feed.body.owner_wallet_address]).toEqual([201, wallet.address])
    expect((await call(a!.url, 'DELETE', '/v1/auth/studio', { headers: { cookie: studio.cookie } })).status).toBe(204)
    const signedOut = performance.now()
    // Asked without writing until B has heard the notice (a write would land in the moment before it does).
    const ended = async (server: TestServer) =>
      (await call(server.url, 'GET', '/v1/auth/studio', { headers: { cookie: studio.cookie, ...pageOf(PUBLIC) } })).status === 401
    expect(await ended(a!)).toBe(true)
    while (!(await ended(b))) {
      expect(performance.now() - signedOut).toBeLessThan(2_000) // the ended-sessions notice, heard in milliseconds
      await Bun.sleep(10)
    }
    for (const server of servers) {
      const replayed = await call(server.url, 'PATCH', `/v1/feeds/${feed.body.id}`, { headers, body: { name: 'After sign-out' } })
      expect([replayed.status, replayed.body.code]).toEqual([403, 'STUDIO_SESSION_INVALID'])
    }
    expect((await call(a!.url, 'GET', `/v1/feeds/${feed.body.id}`)).body.name).toBe('Written on B')
  })
})
