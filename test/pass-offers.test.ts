// Feed passes, the offer (issue 37): an owner puts a pass on sale, changes it for later buyers, takes it off sale;
// anyone reads it, alone and in the feed. Every bad body is a 400 naming its field. In process, on either engine.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { call, createFeed, newWallet, type Wallet } from '../dev/api.ts'

const ADMIN_KEY = 'pass-offers-admin-key'
let app: InProcessApp
let owner: Wallet

beforeAll(async () => {
  app = await startInProcess({ TRELLIS_ADMIN_KEY: ADMIN_KEY })
  owner = newWallet()
})
afterAll(() => app.dispose())

const path = (feed: { id: string }) => `/v1/feeds/${feed.id}/pass`
const month = { price: { amount: '5000000', currency: 'USDC' }, duration_s: 2_592_000, description: '30 days of everything' }
const now = () => Math.floor(Date.now() / 1000)

describe('the offer', () => {
  test('put on sale by the owner: the offer, read alone, in the feed and in the listing', async () => {
    const feed = await createFeed(app, owner, { name: 'passes on sale' })
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}`)).body.pass).toBeNull()
    const put = await call(app, 'PUT', path(feed), { wallet: owner, body: month })
    expect(put.status).toBe(200)
    expect(put.body).toEqual({
      feed_id: feed.id,
      price: { amount: '5000000', currency: 'USDC' },
      duration_s: 2_592_000,
      description: '30 days of everything',
      is_active: true,
      created_at: expect.any(Number),
      updated_at: put.body.created_at,
    })
    expect(Math.abs(put.body.created_at - now())).toBeLessThan(5)
    expect(Object.keys(put.body)).toEqual(['feed_id', 'price', 'duration_s', 'description', 'is_active', 'created_at', 'updated_at'])
    const got = await call(app, 'GET', path(feed))
    expect([got.status, got.body]).toEqual([200, put.body])
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}`)).body.pass).toEqual(put.body)
    const listed = await call(app, 'GET', `/v1/feeds?owner_id=${owner.address}`)
    expect(listed.body.data.find((f: { id: string }) => f.id === feed.id).pass).toEqual(put.body)
  })

  test('a new PUT changes the terms (for later buyers), keeps created_at; an integer amount and no currency are taken', async () => {
    const feed = await createFeed(app, owner, { name: 'changing terms' })
    const first = (await call(app, 'PUT', path(feed), { wallet: owner, body: month })).body
    const minute = await call(app, 'PUT', path(feed), { wallet: owner, body: { price: { amount: 10_000 }, duration_s: 60 } })
    expect(minute.status).toBe(200)
    expect(minute.body).toMatchObject({ price: { amount: '10000', currency: 'USDC' }, duration_s: 60, description: null })
    expect(minute.body.created_at).toBe(first.created_at)
    expect(minute.body.updated_at).toBeGreaterThanOrEqual(first.updated_at)
    const year = await call(app, 'PUT', path(feed), { wallet: owner, body: { price: { amount: '1' }, duration_s: 31_536_000 } })
    expect([year.status, year.body.duration_s]).toEqual([200, 31_536_000])
    // One unit is below the settlement cost: the PUT's answer warns (cheap-prices.test.ts), the offer read does not.
    const { price_warning: warning, ...offer } = year.body
    expect(warning.code).toBe('price_below_settlement_cost')
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}`)).body.pass).toEqual(offer)
  })

  test('off sale: 204, then PASS_NOT_FOUND and a feed without a pass; on sale again with a PUT', async () => {
    const feed = await createFeed(app, owner, { name: 'off sale' })
    const first = (await call(app, 'PUT', path(feed), { wallet: owner, body: month })).body
    expect((await call(app, 'DELETE', path(feed), { wallet: owner })).status).toBe(204)
    const gone = await call(app, 'GET', path(feed))
    expect([gone.status, gone.body.code]).toEqual([404, 'PASS_NOT_FOUND'])
    expect((await call(app, 'GET', `/v1/feeds/${feed.id}`)).body.pass).toBeNull()
    const again = await call(app, 'DELETE', path(feed), { wallet: owner })
    expect([again.status, again.body.code]).toEqual([404, 'PASS_NOT_FOUND'])
    const back = await call(app, 'PUT', path(feed), { wallet: owner, body: month })
    expect([back.status, back.body.is_active, back.body.created_at]).toEqual([200, true, first.created_at])
  })

  test('a deleted feed sells no pass (409 FEED_INACTIVE) and shows none; restored, its offer is back', async () => {
    const feed = await createFeed(app, owner, { name: 'deleted and back' })
    const offer = (await call(app, 'PUT', path(feed), { wallet: owner, body: month })).body
    expect((await call(app, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: owner })).status).toBe(204)
    expect((await call(app, 'GET', path(feed))).body.code).toBe('PASS_NOT_FOUND')
    const refused = await call(app, 'PUT', path(feed), { wallet: owner, body: month })
    expect([refused.status, refused.body.code]).toEqual([409, 'FEED_INACTIVE'])
    const unsold = await call(app, 'POST', `${path(feed)}/purchases`)
    expect([unsold.status, unsold.body.code]).toEqual([404, 'PASS_NOT_FOUND'])
    expect((await call(app, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: owner, body: { is_active: true } })).status).toBe(200)
    expect((await call(app, 'GET', path(feed))).body).toEqual(offer)
  })

  test('a taken-down feed: 451 for its pass, to readers and to its owner', async () => {
    const feed = await createFeed(app, owner, { name: 'taken down' })
    await call(app, 'PUT', path(feed), { wallet: owner, body: month })
    const admin = { 'admin-api-key': ADMIN_KEY }
    const down = await call(app, 'POST', `/v1/admin/feeds/${feed.id}/takedown`, { headers: admin, body: { reason: 'test' } })
    expect(down.status).toBe(201)
    for (const reply of [
      await call(app, 'GET', path(feed)),
      await call(app, 'PUT', path(feed), { wallet: owner, body: month }),
      await call(app, 'DELETE', path(feed), { wallet: owner }),
      await call(app, 'POST', `${path(feed)}/purchases`), // no sale either
    ])
      expect([reply.status, reply.body.code]).toEqual([451, 'TAKEN_DOWN'])
  })
})

describe('refusals', () => {
  let feed: { id: string }
  beforeAll(async () => {
    feed = await createFeed(app, owner, { name: 'refusals' })
  })

  test('bad bodies: 400, the code of the rule, the field named', async () => {
    const cases: [unknown, string, string][] = [
      [{ ...month, price: { amount: '0' } }, 'INVALID_PRICE', 'price'],
      [{ ...month, price: { amount: '-1' } }, 'INVALID_PRICE', 'price'],
      [{ ...month, price: { amount: '1.5' } }, 'INVALID_PRICE', 'price'],
      [{ ...month, price: { amount: '5', currency: 'ETH' } }, 'INVALID_PRICE', 'price'],
      [{ ...month, price: { amount: '5', network: 'mainnet-of-elsewhere' } }, 'INVALID_PRICE', 'price'],
      [{ ...month, price: undefined }, 'INVALID_PRICE', 'price'],
      [{ ...month, duration_s: 59 }, 'INVALID_DURATION', 'duration_s'],
      [{ ...month, duration_s: 31_536_001 }, 'INVALID_DURATION', 'duration_s'],
      [{ ...month, duration_s: 3600.5 }, 'INVALID_DURATION', 'duration_s'],
      [{ ...month, duration_s: '3600' }, 'INVALID_DURATION', 'duration_s'],
      [{ ...month, duration_s: undefined }, 'INVALID_DURATION', 'duration_s'],
      [{ ...month, description: 'x'.repeat(2001) }, 'INVALID_PARAMETER', 'description'],
      [{ ...month, description: 'nul \u0000' }, 'INVALID_PARAMETER', 'description'],
    ]
    for (const [body, code, field] of cases) {
      const reply = await call(app, 'PUT', path(feed), { wallet: owner, body })
      expect([reply.status, reply.body.code], JSON.stringify(body).slice(0, 120)).toEqual([400, code])
      expect(`${reply.body.error} ${reply.body.details ?? ''}`).toContain(field)
    }
    expect((await call(app, 'GET', path(feed))).body.code).toBe('PASS_NOT_FOUND') // nothing was put on sale
  })

  test('only the owner: 401 unsigned, 403 another wallet; unknown feeds 404', async () => {
    const stranger = newWallet()
    const unsigned = await call(app, 'PUT', path(feed), { body: month })
    expect(unsigned.status).toBe(401)
    for (const reply of [
      await call(app, 'PUT', path(feed), { wallet: stranger, body: month }),
      await call(app, 'DELETE', path(feed), { wallet: stranger }),
    ])
      expect([reply.status, reply.body.code]).toEqual([403, 'UNAUTHORIZED'])
    const unknown = { id: '01900000-0000-7000-8000-000000000000' }
    expect((await call(app, 'GET', path(unknown))).body.code).toBe('FEED_NOT_FOUND')
    expect((await call(app, 'PUT', path(unknown), { wallet: owner, body: month })).body.code).toBe('FEED_NOT_FOUND')
    expect((await call(app, 'GET', '/v1/feeds/not-a-uuid/pass')).status).toBe(400)
    expect((await call(app, 'GET', path(feed))).body.code).toBe('PASS_NOT_FOUND')
  })
})
