import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { authHeaders, call, newWallet } from '../dev/api.ts'
import { withRecords } from '../dev/records-sql.ts'
import { parseSiweMessage, validateSiweMessage } from 'viem/siwe'

let server: TestServer
beforeAll(async () => {
  server = await startTestServer()
})
afterAll(() => server.dispose())

const nonceFor = async (address: string) => (await call(server.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: address } })).body

/** Headers claiming `address`, with `message` signed by `signer` (which may be someone else). */
const signedHeaders = async (address: string, signer: ReturnType<typeof newWallet>, message: string) => ({
  'x-wallet-address': address,
  'x-signature': await signer.signMessage({ message }),
  'x-message': message,
  'x-timestamp': String(Math.floor(Date.now() / 1000)),
})

// DELETE of a random feed id: a protected route that reaches the 404 only once authenticated.
const protectedCall = (headers: Record<string, string>) =>
  call(server.url, 'DELETE', '/v1/feeds/01900000-0000-7000-8000-000000000000', { headers })

describe('POST /v1/auth/nonce', () => {
  test('returns a one-line message with the nonce and both expiry forms', async () => {
    const wallet = newWallet()
    const reply = await call(server.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: wallet.address.toLowerCase() } })
    expect(reply.status).toBe(200)
    expect(reply.body.nonce).toMatch(/^[A-Za-z0-9]{32}$/)
    expect(reply.body.message).not.toContain('\n')
    const expiry = new Date(reply.body.expires_at * 1000).toISOString()
    expect(reply.body.message).toMatch(
      new RegExp(
        `^Sign in to Trellis \\(127\\.0\\.0\\.1:\\d+\\) at \\d{4}-\\d\\d-\\d\\dT[\\d:.]+Z with ` +
          `nonce: ${reply.body.nonce}, valid until ${expiry}$`,
      ),
    )
    expect(reply.body.wallet_address).toBe(wallet.address)
    const now = Math.floor(Date.now() / 1000)
    expect(reply.body.expires_at).toBeGreaterThanOrEqual(now + 295)
    expect(reply.body.expires_at).toBeLessThanOrEqual(now + 305)
    expect(reply.body.expiresAt).toBe(reply.body.expires_at * 1000)
    const issued = Date.parse(/ at (\S+) with /.exec(reply.body.message)![1]) / 1000
    expect(reply.body.expires_at - issued).toBe(300)
  })

  test('rejects a missing or malformed address', async () => {
    for (const body of [{}, { wallet_address: 'nope' }, { wallet_address: 12 }, { wallet_address: '0x123' }]) {
      const reply = await call(server.url, 'POST', '/v1/auth/nonce', { body })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_PARAMETER')
    }
    const bad = await call(server.url, 'POST', '/v1/auth/nonce', { rawBody: '{"wallet_address":' })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('INVALID_JSON')
  })
})

describe('the signature guard', () => {
  test('no auth headers at all → 401 AUTH_REQUIRED', async () => {
    const reply = await protectedCall({})
    expect(reply.status).toBe(401)
    expect(reply.body.code).toBe('AUTH_REQUIRED')
    expect(typeof reply.body.error).toBe('string')
  })

  test('a valid signature passes and reaches the route (404 for the unknown feed)', async () => {
    const reply = await protectedCall(await authHeaders(server.url, newWallet()))
    expect(reply.status).toBe(404)
    expect(reply.body.code).toBe('FEED_NOT_FOUND')
  })

  test('some headers missing or malformed → 400 INVALID_AUTH_HEADERS', async () => {
    const good = await authHeaders(server.url, newWallet())
    for (const drop of ['x-wallet-address', 'x-signature', 'x-message', 'x-timestamp']) {
      const headers = { ...good }
      delete headers[drop]
      const reply = await protectedCall(headers)
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_AUTH_HEADERS')
    }
    for (const [name, value] of [
      ['x-wallet-address', '0x12'],
      ['x-signature', 'zz'],
      ['x-timestamp', 'yesterday'],
    ]) {
      const reply = await protectedCall({ ...good, [name]: value })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_AUTH_HEADERS')
    }
  })

  test('a nonce is single use', async () => {
    const headers = await authHeaders(server.url, newWallet())
    expect((await protectedCall(headers)).status).toBe(404)
    const again = await protectedCall(headers)
    expect(again.status).toBe(401)
    expect(again.body.code).toBe('INVALID_NONCE')
  })

  test('two concurrent requests with one signature: exactly one passes', async () => {
    const headers = await authHeaders(server.url, newWallet())
    const replies = await Promise.all(Array.from({ length: 8 }, () => protectedCall(headers)))
    expect(replies.filter((r) => r.status === 404).length).toBe(1)
    expect(replies.filter((r) => r.status === 401 && r.body.code === 'INVALID_NONCE').length).toBe(7)
  })

  test('a wallet may hold several outstanding nonces and use them in any order, in parallel', async () => {
    const wallet = newWallet()
    const sets = await Promise.all(Array.from({ length: 5 }, () => authHeaders(server.url, wallet)))
    const replies = await Promise.all(sets.reverse().map((h) => protectedCall(h)))
    expect(replies.map((r) => r.status)).toEqual([404, 404, 404, 404, 404])
  })

  test('nonces requested by someone else for my address never lock me out', async () => {
    const wallet = newWallet()
    await Promise.all(Array.from({ length: 20 }, () => nonceFor(wallet.address)))
    expect((await protectedCall(await authHeaders(server.url, wallet))).status).toBe(404)
  })

  test('a signature by another wallet → 401 INVALID_SIGNATURE', async () => {
    const victim = newWallet()
    const attacker = newWallet()
    const { message } = await nonceFor(victim.address)
    const reply = await protectedCall(await signedHeaders(victim.address, attacker, message))
    expect(reply.status).toBe(401)
    expect(reply.body.code).toBe('INVALID_SIGNATURE')
    // The nonce was not spent by the failed attempt: the owner can still use it.
    const ok = await protectedCall(await signedHeaders(victim.address, victim, message))
    expect(ok.status).toBe(404)
  })

  test('a garbage signature of the right shape → 401 INVALID_SIGNATURE', async () => {
    const headers = await authHeaders(server.url, newWallet())
    const reply = await protectedCall({ ...headers, 'x-signature': '0x' + 'ab'.repeat(65) })
    expect(reply.status).toBe(401)
    expect(reply.body.code).toBe('INVALID_SIGNATURE')
  })

  test('a nonce issued for another wallet, or unknown → 401 INVALID_NONCE', async () => {
    const a = newWallet()
    const b = newWallet()
    const { message } = await nonceFor(a.address)
    const reply = await protectedCall(await signedHeaders(b.address, b, message))
    expect(reply.status).toBe(401)
    expect(reply.body.code).toBe('INVALID_NONCE')
    const invented = 'Sign in to Trellis (x) at 2026-01-01T00:00:00.000Z with nonce: ' + 'A'.repeat(32)
    const unknown = await protectedCall(await signedHeaders(b.address, b, invented))
    expect(unknown.status).toBe(401)
    expect(unknown.body.code).toBe('INVALID_NONCE')
  })

  test('x-timestamp outside [-300 s, +60 s] → 401 TIMESTAMP_OUT_OF_RANGE', async () => {
    const now = Math.floor(Date.now() / 1000)
    for (const timestamp of [now - 400, now + 120]) {
      const headers = await authHeaders(server.url, newWallet())
      const reply = await protectedCall({ ...headers, 'x-timestamp': String(timestamp) })
      expect(reply.status).toBe(401)
      expect(reply.body.code).toBe('TIMESTAMP_OUT_OF_RANGE')
    }
    const inWindow = await authHeaders(server.url, newWallet())
    expect((await protectedCall({ ...inWindow, 'x-timestamp': String(now - 200) })).status).toBe(404)
  })

  test('x-message may be sent as base64', async () => {
    const headers = await authHeaders(server.url, newWallet())
    const reply = await protectedCall({ ...headers, 'x-message': Buffer.from(headers['x-message']).toString('base64') })
    expect(reply.status).toBe(404)
  })

  test('an expired nonce → 401 NONCE_EXPIRED "nonce has expired"', async () => {
    // A second server whose clock runs 10 minutes ahead sees the nonce the first one issued... no: nonces live in
    // one store. Issue here, then restart the same data dir with the clock moved forward past the nonce's life.
    const wallet = newWallet()
    const headers = await authHeaders(server.url, wallet)
    await server.restart({ TRELLIS_TEST_CLOCK_OFFSET_S: '600' })
    try {
      const shifted = { ...headers, 'x-timestamp': String(Math.floor(Date.now() / 1000) + 600) }
      const reply = await protectedCall(shifted)
      expect(reply.status).toBe(401)
      expect(reply.body.code).toBe('NONCE_EXPIRED')
      expect(reply.body.error).toBe('nonce has expired')
    } finally {
      await server.restart({})
    }
  })

  test('the signed message carries its issue and expiry times: a tampered time is refused', async () => {
    const wallet = newWallet()
    const { message, expires_at } = await nonceFor(wallet.address)
    const later = new Date((expires_at + 3600) * 1000).toISOString()
    const expiryMoved = message.replace(/valid until \S+$/, `valid until ${later}`)
    const issueMoved = message.replace(/ at \S+ with /, ` at ${new Date((expires_at - 100) * 1000).toISOString()} with `)
    for (const tampered of [expiryMoved, issueMoved, message.replace(/, valid until \S+$/, '')]) {
      expect(tampered).not.toBe(message)
      const reply = await protectedCall(await signedHeaders(wallet.address, wallet, tampered)) // signed by the wallet itself
      expect(reply.status).toBe(401)
      expect(reply.body.code).toBe('INVALID_NONCE')
    }
    const honest = await signedHeaders(wallet.address, wallet, message)
    expect((await protectedCall(honest)).status).toBe(404) // the refusals did not spend the nonce
    const replay = await protectedCall(honest)
    expect(replay.status).toBe(401)
    expect(replay.body.code).toBe('INVALID_NONCE')
  })

  test('the signed times bind on their own: a nonce row that outlives its message does not extend it', async () => {
    const [early, late] = [newWallet(), newWallet()]
    const [earlyHeaders, lateHeaders] = [await authHeaders(server.url, early), await authHeaders(server.url, late)]
    // As if the store kept (or was restored with) a later expiry than the one the wallet signed.
    await server.stop()
    await withRecords(server, (db) =>
      db.run('UPDATE nonces SET expires_at = expires_at + 3600 WHERE address_lc IN (?, ?)', [
        early.address.toLowerCase(),
        late.address.toLowerCase(),
      ]),
    )
    await server.restart({})
    const mismatched = await protectedCall(earlyHeaders)
    expect(mismatched.status).toBe(401)
    expect(mismatched.body.code).toBe('INVALID_NONCE')
    // A record whose message (signed as stored) says it was issued an hour from now: refused all the same.
    const future = newWallet()
    const { nonce, message } = await nonceFor(future.address)
    const fromTheFuture = message.replace(
      / at \S+ with /,
      ` at ${new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, '.000Z')} with `,
    )
    await server.stop()
    await withRecords(server, (db) => db.run('UPDATE nonces SET message = ? WHERE nonce = ?', [fromTheFuture, nonce]))
    await server.restart({})
    const early2 = await protectedCall(await signedHeaders(future.address, future, fromTheFuture))
    expect(early2.status).toBe(401)
    expect(early2.body.code).toBe('INVALID_NONCE')
    await server.restart({ TRELLIS_TEST_CLOCK_OFFSET_S: '600' })
    try {
      const expired = await protectedCall({ ...lateHeaders, 'x-timestamp': String(Math.floor(Date.now() / 1000) + 600) })
      expect(expired.status).toBe(401)
      expect(expired.body.code).toBe('NONCE_EXPIRED')
      expect(expired.body.error).toBe('nonce has expired')
    } finally {
      await server.restart({})
    }
  })

  test('a public route ignores missing auth, an optional-auth route rejects bad auth', async () => {
    expect((await call(server.url, 'GET', '/v1/categories')).status).toBe(200)
    const bad = await call(
      server.url,
      'GET',
      '/v1/feeds/01900000-0000-7000-8000-000000000000/entries/01900000-0000-7000-8000-000000000000',
      {
        headers: { 'x-wallet-address': newWallet().address },
      },
    )
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('INVALID_AUTH_HEADERS')
  })
})

describe('Sign-In with Ethereum (EIP-4361)', () => {
  const siweHeaders = async (wallet: ReturnType<typeof newWallet>, edit: (message: string) => string = (m) => m) => {
    const nonce = await nonceFor(wallet.address)
    const message = edit(nonce.siwe_message)
    return {
      nonce,
      headers: { ...(await signedHeaders(wallet.address, wallet, message)), 'x-message': Buffer.from(message).toString('base64') },
    }
  }

  test('the nonce also comes as an EIP-4361 message bound to this server, the wallet, the chain and the same nonce and times', async () => {
    const wallet = newWallet()
    const nonce = await nonceFor(wallet.address)
    const parsed = parseSiweMessage(nonce.siwe_message)
    expect(validateSiweMessage({ message: parsed, address: wallet.address, domain: new URL(server.url).host, nonce: nonce.nonce })).toBe(
      true,
    )
    expect(parsed).toMatchObject({
      domain: new URL(server.url).host,
      address: wallet.address,
      uri: server.url,
      chainId: 84532,
      version: '1',
      nonce: nonce.nonce,
    })
    expect(parsed.expirationTime!.getTime()).toBe(nonce.expires_at * 1000)
    expect(nonce.siwe_message.split('\n')[0]).toBe(`${new URL(server.url).host} wants you to sign in with your Ethereum account:`)
  })

  test('signed and sent as base64 it signs in once; the one-line form of the same nonce is then spent too', async () => {
    const wallet = newWallet()
    const { nonce, headers } = await siweHeaders(wallet)
    expect((await protectedCall(headers)).status).toBe(404)
    expect((await protectedCall(headers)).body.code).toBe('INVALID_NONCE')
    expect((await protectedCall(await signedHeaders(wallet.address, wallet, nonce.message))).body.code).toBe('INVALID_NONCE')
  })

  test('an edited message is refused, however well signed: another URI, domain, chain, address or statement', async () => {
    const wallet = newWallet()
    const other = newWallet()
    const edits: ((m: string) => string)[] = [
      (m) => m.replace(/^URI: .*$/m, 'URI: https://evil.example'),
      (m) => m.replace(/^.* wants you/, 'evil.example wants you'),
      (m) => m.replace(/^Chain ID: .*$/m, 'Chain ID: 1'),
      (m) => m.replace(wallet.address, other.address),
      (m) => m.replace('Sign in to Trellis with this wallet.', 'Send all my USDC.'),
    ]
    for (const edit of edits) {
      const { headers } = await siweHeaders(wallet, edit)
      const reply = await protectedCall(headers)
      expect(reply.status).toBe(401)
      expect(reply.body.code).toBe('INVALID_NONCE')
    }
  })
})

describe('browser sessions', () => {
  const cookiesOf = (reply: { headers: Headers }) => reply.headers.getSetCookie()

  test(
    'a signed POST /v1/auth/session sets an HttpOnly SameSite=Lax cookie that GET /v1/auth/session ' + 'reads; DELETE clears it',
    async () => {
      const wallet = newWallet()
      const opened = await call(server.url, 'POST', '/v1/auth/session', { wallet })
      expect(opened.status).toBe(200)
      expect(opened.body.wallet_address).toBe(wallet.address)
      const [session, hint] = cookiesOf(opened)
      expect(session).toMatch(/^trellis_session=[\w-]+\.[\w-]+\.[\w-]+; Path=\/; Max-Age=86400; HttpOnly; SameSite=Lax$/)
      expect(hint).toBe(`trellis_wallet=${wallet.address}; Path=/; Max-Age=86400; SameSite=Lax`)
      const cookie = session!.split(';')[0]!
      const read = await call(server.url, 'GET', '/v1/auth/session', { headers: { cookie } })
      expect(read.body).toEqual({ wallet_address: wallet.address, expires_at: opened.body.expires_at })
      const closed = await call(server.url, 'DELETE', '/v1/auth/session', { headers: { cookie } })
      expect(closed.status).toBe(204)
      expect(cookiesOf(closed)[0]).toMatch(/^trellis_session=; Path=\/; Max-Age=0; HttpOnly; SameSite=Lax$/)
      expect((await call(server.url, 'GET', '/v1/auth/session')).status).toBe(401)
    },
  )

  test(
    'sign-out ends the session itself: a kept copy of the cookie is no session after DELETE; ' + 'another session of the wallet stays',
    async () => {
      const wallet = newWallet()
      const open = async () => cookiesOf(await call(server.url, 'POST', '/v1/auth/session', { wallet }))[0]!.split(';')[0]!
      const [kept, other] = [await open(), await open()]
      expect((await call(server.url, 'DELETE', '/v1/auth/session', { headers: { cookie: kept } })).status).toBe(204)
      const replayed = await call(server.url, 'GET', '/v1/auth/session', { headers: { cookie: kept } })
      expect([replayed.status, replayed.body.code]).toEqual([401, 'AUTH_REQUIRED'])
      expect((await call(server.url, 'GET', '/v1/auth/session', { headers: { cookie: other } })).body.wallet_address).toBe(wallet.address)
      // Signing out again with the ended cookie changes nothing; the other session is still live.
      expect((await call(server.url, 'DELETE', '/v1/auth/session', { headers: { cookie: kept } })).status).toBe(204)
      expect((await call(server.url, 'GET', '/v1/auth/session', { headers: { cookie: other } })).status).toBe(200)
    },
  )

  test('the session never stands in for a signature on a write, and a forged or foreign token is no session', async () => {
    const wallet = newWallet()
    const opened = await call(server.url, 'POST', '/v1/auth/session', { wallet })
    const cookie = cookiesOf(opened)[0]!.split(';')[0]!
    const write = await call(server.url, 'POST', '/v1/feeds', { body: { name: 'by cookie' }, headers: { cookie } })
    expect(write.status).toBe(401)
    expect(write.body.code).toBe('AUTH_REQUIRED')
    const [head, payload] = cookie.slice('trellis_session='.length).split('.')
    const forged = `trellis_session=${head}.${payload}.${'A'.repeat(43)}`
    expect((await call(server.url, 'GET', '/v1/auth/session', { headers: { cookie: forged } })).status).toBe(401)
  })

  test('a page of another site cannot open a session (Sec-Fetch-Site: cross-site → 403)', async () => {
    const wallet = newWallet()
    const reply = await call(server.url, 'POST', '/v1/auth/session', { wallet, headers: { 'sec-fetch-site': 'cross-site' } })
    expect(reply.status).toBe(403)
    expect(reply.body.code).toBe('CROSS_SITE_REQUEST')
    expect(cookiesOf(reply)).toEqual([])
  })
})
