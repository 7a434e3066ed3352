import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { authHeaders, call, createFeed, newWallet } from '../dev/api.ts'

const ADMIN_KEY = 'test-admin-key-0123456789'
// In process (app.handle): rules of the routes and the domain, not of the process or the socket.
let app: InProcessApp
beforeAll(async () => {
  app = await startInProcess({ TRELLIS_ADMIN_KEY: ADMIN_KEY })
})
afterAll(() => app.dispose())

const walletOf = async (wallet = newWallet()) => ({ wallet, id: (await createFeed(app, wallet)).owner_id as string })

describe('PATCH /v1/wallets/{id}', () => {
  test('sets username and picture_url; returns the seed wallet object plus the SDK names', async () => {
    const { wallet, id } = await walletOf()
    const reply = await call(app, 'PATCH', `/v1/wallets/${id}`, {
      wallet,
      body: { username: 'Alice42', picture_url: 'https://img.example/a.png' },
    })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      id,
      address: wallet.address,
      wallet_address: wallet.address,
      network: 'base-sepolia',
      wallet_address_network: 'base-sepolia',
      username: 'Alice42',
      picture_url: 'https://img.example/a.png',
      total_feeds: 1,
      total_entries: 0,
      total_revenue: '0',
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    })
    // Only the given field changes; null clears.
    const cleared = await call(app, 'PATCH', `/v1/wallets/${id}`, { wallet, body: { picture_url: null } })
    expect(cleared.body).toMatchObject({ username: 'Alice42', picture_url: null })
    expect((await call(app, 'GET', `/v1/wallets/${id}`)).body.username).toBe('Alice42')
  })

  test('username rules → 400 INVALID_USERNAME; picture_url rules → 400', async () => {
    const { wallet, id } = await walletOf()
    for (const username of ['ab', 'x'.repeat(51), 'has space', 'dash-ed', 'ünï', 12, '']) {
      const reply = await call(app, 'PATCH', `/v1/wallets/${id}`, { wallet, body: { username } })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_USERNAME')
      expect(reply.body.details).toContain('3-50')
    }
    for (const ok of ['abc', 'A'.repeat(50)])
      expect((await call(app, 'PATCH', `/v1/wallets/${id}`, { wallet, body: { username: ok } })).status).toBe(200)
    for (const picture_url of ['ftp://x/y.png', 'javascript:alert(1)', 'not a url', 7]) {
      const reply = await call(app, 'PATCH', `/v1/wallets/${id}`, { wallet, body: { picture_url } })
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_PICTURE_URL')
    }
  })

  test('unique across wallets, case-insensitively → 409 USERNAME_CONFLICT', async () => {
    const a = await walletOf()
    const b = await walletOf()
    expect((await call(app, 'PATCH', `/v1/wallets/${a.id}`, { wallet: a.wallet, body: { username: 'Taken' } })).status).toBe(200)
    const clash = await call(app, 'PATCH', `/v1/wallets/${b.id}`, { wallet: b.wallet, body: { username: 'tAKEN' } })
    expect(clash.status).toBe(409)
    expect(clash.body.code).toBe('USERNAME_CONFLICT')
    // Keeping your own name (in another case) is fine.
    expect((await call(app, 'PATCH', `/v1/wallets/${a.id}`, { wallet: a.wallet, body: { username: 'TAKEN' } })).status).toBe(200)
  })

  test('username race: ten wallets claim one name at once, exactly one wins', async () => {
    const racers = await Promise.all(Array.from({ length: 10 }, () => walletOf()))
    const headers = await Promise.all(racers.map((r) => authHeaders(app, r.wallet)))
    const replies = await Promise.all(
      racers.map((r, i) => call(app, 'PATCH', `/v1/wallets/${r.id}`, { headers: headers[i], body: { username: 'OnlyOne' } })),
    )
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1)
    expect(replies.filter((r) => r.status === 409 && r.body.code === 'USERNAME_CONFLICT')).toHaveLength(9)
  })

  test('401, 403 UNAUTHORIZED_WALLET_UPDATE, 404 WALLET_NOT_FOUND, 400 INVALID_WALLET_ID — in that order', async () => {
    const { id } = await walletOf()
    const unauth = await call(app, 'PATCH', `/v1/wallets/${id}`, { body: { username: 'nope1' } })
    expect(unauth.status).toBe(401)
    const other = await call(app, 'PATCH', `/v1/wallets/${id}`, { wallet: newWallet(), body: { username: 'bad name!' } })
    expect(other.status).toBe(403)
    expect(other.body.code).toBe('UNAUTHORIZED_WALLET_UPDATE')
    const missing = await call(app, 'PATCH', '/v1/wallets/01900000-0000-7000-8000-000000000000', { wallet: newWallet(), body: {} })
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('WALLET_NOT_FOUND')
    const malformed = await call(app, 'PATCH', '/v1/wallets/xyz', { wallet: newWallet(), body: {} })
    expect(malformed.status).toBe(400)
    expect(malformed.body.code).toBe('INVALID_WALLET_ID')
    const badSig = await call(app, 'PATCH', `/v1/wallets/${id}`, {
      headers: { ...(await authHeaders(app, newWallet())), 'x-signature': '0x' + '11'.repeat(65) },
      body: {},
    })
    expect(badSig.status).toBe(401)
    expect(badSig.body.code).toBe('INVALID_SIGNATURE')
  })
})

describe('categories admin', () => {
  const admin = { 'admin-api-key': ADMIN_KEY }

  test('create, rename, describe, deactivate; inactive categories cannot be chosen for new feeds', async () => {
    const created = await call(app, 'POST', '/v1/categories', {
      headers: admin,
      body: { name: 'Science', description: 'Papers', icon_url: 'https://icons.example/s.svg' },
    })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ name: 'Science', description: 'Papers', icon_url: 'https://icons.example/s.svg', is_active: true })
    const dup = await call(app, 'POST', '/v1/categories', { headers: admin, body: { name: 'science' } })
    expect(dup.status).toBe(409)
    expect(dup.body.code).toBe('CATEGORY_CONFLICT')
    const renamed = await call(app, 'PATCH', `/v1/categories/${created.body.id}`, { headers: admin, body: { name: 'Sciences' } })
    expect(renamed.body).toMatchObject({ name: 'Sciences', description: 'Papers' })
    const wallet = newWallet()
    expect((await call(app, 'POST', '/v1/feeds', { wallet, body: { name: 'sci', category_id: created.body.id } })).status).toBe(201)
    const off = await call(app, 'PATCH', `/v1/categories/${created.body.id}`, { headers: admin, body: { is_active: false } })
    expect(off.body.is_active).toBe(false)
    const refused = await call(app, 'POST', '/v1/feeds', { wallet, body: { name: 'sci 2', category_id: created.body.id } })
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ error: 'invalid_request', details: { field: 'category_id' } })
    const stats = await call(app, 'GET', '/v1/leaderboards/category-stats')
    expect(stats.body.data.map((c: any) => c.category_id)).not.toContain(created.body.id)
    expect((await call(app, 'GET', '/v1/categories?is_active=false')).body.data.map((c: any) => c.id)).toEqual([created.body.id])
  })

  test('wrong or missing key → 401 before anything else; bad bodies → 400; unknown → 404', async () => {
    for (const headers of [{}, { 'admin-api-key': 'wrong' }] as Record<string, string>[]) {
      const reply = await call(app, 'POST', '/v1/categories', { headers, rawBody: '{not json' })
      expect(reply.status).toBe(401)
      expect(reply.body.code).toBe('ADMIN_KEY_REQUIRED')
      expect((await call(app, 'PATCH', '/v1/categories/01900000-0000-7000-8000-000000000000', { headers, body: {} })).status).toBe(401)
    }
    for (const body of [{}, { name: '' }, { name: '   ' }, { name: 'ok', icon_url: 'ftp://x' }]) {
      expect((await call(app, 'POST', '/v1/categories', { headers: admin, body })).status).toBe(400)
    }
    expect(
      (await call(app, 'PATCH', '/v1/categories/01900000-0000-7000-8000-000000000000', { headers: admin, body: { name: 'x' } })).status,
    ).toBe(404)
  })

  test('without TRELLIS_ADMIN_KEY the admin routes do not exist', async () => {
    const plain = await startInProcess()
    try {
      const reply = await call(plain, 'POST', '/v1/categories', { headers: { 'admin-api-key': 'anything' }, body: { name: 'X' } })
      expect(reply.status).toBe(404)
    } finally {
      await plain.dispose()
    }
  })
})
