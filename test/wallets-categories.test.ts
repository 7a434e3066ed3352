import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { authHeaders, call, createEntry, createFeed, expectError, newWallet } from '../dev/api.ts'

// In process (app.handle): these are rules of the routes and the domain, not of the process or the socket.
let app: InProcessApp
beforeAll(async () => {
  app = await startInProcess()
})
afterAll(() => app.dispose())

describe('wallets', () => {
  test('by id and by address in any letter case, with both field sets and live totals', async () => {
    const wallet = newWallet()
    const feed = await createFeed(app, wallet)
    await createEntry(app, wallet, feed.id)
    await createEntry(app, wallet, feed.id)
    const byId = await call(app, 'GET', `/v1/wallets/${feed.owner_id}`)
    expect(byId.status).toBe(200)
    expect(byId.body).toEqual({
      id: feed.owner_id,
      address: wallet.address,
      wallet_address: wallet.address,
      network: 'base-sepolia',
      wallet_address_network: 'base-sepolia',
      username: null,
      picture_url: null,
      total_feeds: 1,
      total_entries: 2,
      total_revenue: '0',
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    })
    for (const form of [wallet.address, wallet.address.toLowerCase(), '0x' + wallet.address.slice(2).toUpperCase()]) {
      const reply = await call(app, 'GET', `/v1/wallets/address/${form}`)
      expect(reply.status).toBe(200)
      expect(reply.body).toEqual(byId.body)
    }
    expect((await call(app, 'GET', `/v1/wallets/${feed.owner_id.toUpperCase()}`)).body.id).toBe(feed.owner_id)
  })

  test('x-chain-id picks the network of a new wallet', async () => {
    const wallet = newWallet()
    const headers = await authHeaders(app, wallet, '8453')
    const reply = await call(app, 'POST', '/v1/feeds', { headers, body: { name: 'on base' } })
    expect(reply.status).toBe(201)
    expect((await call(app, 'GET', `/v1/wallets/${reply.body.owner_id}`)).body.network).toBe('base')
    const unknown = newWallet()
    const other = await call(app, 'POST', '/v1/feeds', { headers: await authHeaders(app, unknown, '999'), body: { name: 'x' } })
    expect((await call(app, 'GET', `/v1/wallets/${other.body.owner_id}`)).body.network).toBe('base-sepolia')
  })

  test('errors: 400 INVALID_WALLET_ID, 404 WALLET_NOT_FOUND, 400 for a bad address', async () => {
    expectError(await call(app, 'GET', '/v1/wallets/not-a-uuid'), 400, 'INVALID_WALLET_ID')
    expectError(await call(app, 'GET', '/v1/wallets/01900000-0000-7000-8000-000000000000'), 404, 'WALLET_NOT_FOUND')
    expectError(await call(app, 'GET', `/v1/wallets/address/${newWallet().address}`), 404, 'WALLET_NOT_FOUND')
    expectError(await call(app, 'GET', '/v1/wallets/address/0x1234'), 400, 'INVALID_PARAMETER')
  })
})

describe('categories', () => {
  const SEEDED = ['Business', 'Crypto', 'Finance', 'Games', 'Politics', 'Sports', 'Tech']

  test('the seven seeded categories, by name, with id, name, is_active', async () => {
    const reply = await call(app, 'GET', '/v1/categories?page_size=100')
    expect(reply.status).toBe(200)
    expect(reply.body.data.map((c: any) => c.name)).toEqual(SEEDED)
    for (const c of reply.body.data) {
      expect(c.id).toMatch(/^[0-9a-f-]{36}$/)
      expect(c.is_active).toBe(true)
    }
    expect(reply.body.pagination).toEqual({ page_size: 7, next_page_token: null, has_more: false })
    const one = await call(app, 'GET', `/v1/categories/${reply.body.data[0].id}`)
    expect(one.body).toEqual(reply.body.data[0])
  })

  test('search, is_active and cursor', async () => {
    expect((await call(app, 'GET', '/v1/categories?search=CRY')).body.data.map((c: any) => c.name)).toEqual(['Crypto'])
    expect((await call(app, 'GET', '/v1/categories?search=%25')).body.data).toEqual([])
    expect((await call(app, 'GET', '/v1/categories?is_active=false')).body.data).toEqual([])
    const names: string[] = []
    let token: string | null = null
    do {
      const page: any = await call(app, 'GET', `/v1/categories?page_size=3${token ? `&page_token=${token}` : ''}`)
      names.push(...page.body.data.map((c: any) => c.name))
      token = page.body.pagination.next_page_token
    } while (token)
    expect(names).toEqual(SEEDED)
  })

  test('errors', async () => {
    expect((await call(app, 'GET', '/v1/categories/nope')).body.code).toBe('INVALID_PARAMETER')
    const missing = await call(app, 'GET', '/v1/categories/01900000-0000-7000-8000-000000000000')
    expect(missing.status).toBe(404)
    expect(missing.body.code).toBe('CATEGORY_NOT_FOUND')
    expect((await call(app, 'GET', '/v1/categories?page_size=101')).status).toBe(400)
    expect((await call(app, 'GET', '/v1/categories?page_token=forged')).status).toBe(422)
  })
})
