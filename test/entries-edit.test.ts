// PATCH /v1/feeds/{feed_id}/entries/{entry_id}: the owner edits an entry's words and price, never its content. On a
// real chain: a buyer keeps access after a price change, a payment signed for the old price is refused with the
// price it now costs, and the next purchase pays the new one.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, testClockFile, type TestServer } from '../dev/server.ts'
import { authHeaders, b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'

let chain: TestChain
let server: TestServer
let owner: Wallet
let feed: any

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_TEST_CLOCK_FILE: testClockFile() })
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'editable' })
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const entryPath = (entry: { id: string }) => `/v1/feeds/${feed.id}/entries/${entry.id}`
const edit = (entry: { id: string }, body: unknown, wallet: Wallet | null = owner) =>
  call(server.url, 'PATCH', entryPath(entry), { body, ...(wallet ? { wallet } : {}) })
const paidEntry = (amount: string, extra: Record<string, unknown> = {}) =>
  createEntry(server.url, owner, feed.id, {
    content_base64: b64('paid words'),
    title: 'Paid',
    is_free: false,
    price: { amount, currency: 'USDC' },
    ...extra,
  })
const pay = async (buyer: Awaited<ReturnType<TestChain['newFundedBuyer']>>, entry: { id: string }, value: bigint) =>
  fetch(`${server.url}${entryPath(entry)}/content`, {
    headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value })) },
  })

describe('editing the words', () => {
  test('the owner changes title, description, metadata and tags; the answer and every later read show them', async () => {
    const entry = await createEntry(server.url, owner, feed.id, { title: 'Draft', description: 'old', tags: ['a'] })
    const edited = await edit(entry, { title: 'Final', description: null, metadata: '{"v":2}', tags: ['b', 'c'] })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({
      id: entry.id,
      title: 'Final',
      description: null,
      metadata: '{"v":2}',
      tags: ['b', 'c'],
      cid: entry.cid,
      mime_type: 'text/plain',
      is_free: true,
      price: '0',
    })
    expect(edited.body.updated_at).toBeGreaterThanOrEqual(entry.updated_at)
    expect((await call(server.url, 'GET', entryPath(entry))).body).toMatchObject({ title: 'Final', tags: ['b', 'c'] })
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries`)).body.data.find((e: any) => e.id === entry.id)).toMatchObject({
      title: 'Final',
    })
    expect(await (await fetch(`${server.url}/feeds/${feed.id}`)).text()).toContain('>Final</a>')
  })

  test('the content never changes: content_base64 or mime_type → 400 CONTENT_IMMUTABLE, nothing changed', async () => {
    const entry = await createEntry(server.url, owner, feed.id, { title: 'Fixed' })
    expectError(await edit(entry, { content_base64: b64('other'), title: 'Sneaky' }), 400, 'CONTENT_IMMUTABLE')
    expectError(await edit(entry, { mime_type: 'application/json' }), 400, 'CONTENT_IMMUTABLE')
    const after = (await call(server.url, 'GET', entryPath(entry))).body
    expect(after).toMatchObject({ title: 'Fixed', cid: entry.cid, mime_type: 'text/plain' })
  })

  test('only the owner, signed, of an active entry: 401, 403, 404', async () => {
    const entry = await createEntry(server.url, owner, feed.id)
    expectError(await edit(entry, { title: 'x' }, null), 401, 'AUTH_REQUIRED')
    expectError(await edit(entry, { title: 'x' }, newWallet()), 403, 'UNAUTHORIZED')
    expectError(await edit({ id: crypto.randomUUID() }, { title: 'x' }), 404, 'ENTRY_NOT_FOUND')
    expect((await call(server.url, 'DELETE', entryPath(entry), { wallet: owner })).status).toBe(204)
    expectError(await edit(entry, { title: 'x' }), 404, 'ENTRY_NOT_FOUND')
  })

  test('bad values are refused with the create rules: lengths, tags, a past expiry, a price on a free entry', async () => {
    const entry = await paidEntry('10000')
    expect((await edit(entry, { title: 'x'.repeat(501) })).status).toBe(400)
    expect((await edit(entry, { tags: 'not a list' })).status).toBe(400)
    expectError(await edit(entry, { expires_at: Math.floor(Date.now() / 1000) - 10 }), 400, 'INVALID_EXPIRES_AT')
    expectError(await edit(entry, { is_free: true, price: { amount: '5', currency: 'USDC' } }), 400, 'INVALID_PRICE')
    expectError(await edit(entry, { price: { amount: '0', currency: 'USDC' } }), 400, 'INVALID_PRICE')
    expectError(await edit(entry, { price: { amount: '1.5', currency: 'USDC' } }), 400, 'INVALID_PRICE')
    expect((await call(server.url, 'GET', entryPath(entry), { wallet: owner })).body).toMatchObject({ title: 'Paid', price: '10000' })
  })
})

describe('editing the price', () => {
  test('a buyer keeps access after a price change; a payment signed for the old price is refused with ' +
    'the new one; the next buyer pays the new price', async () => {
    const entry = await paidEntry('10000')
    const first = await chain.newFundedBuyer(1_000_000n)
    expect((await pay(first, entry, 10_000n)).status).toBe(200)
    const late = await chain.newFundedBuyer(1_000_000n)
    const signedForOld = encodePaymentHeader(await v1Payment(late, { to: owner.address, value: 10_000n })) // after the old 402

    const repriced = await edit(entry, { price: { amount: '25000', currency: 'USDC' } })
    expect(repriced.body).toMatchObject({ is_free: false, price: '25000' })
    const challenge = await fetch(`${server.url}${entryPath(entry)}/content`)
    expect(challenge.status).toBe(402)
    expect((await challenge.json()).accepts[0].maxAmountRequired).toBe('25000')

    const refused = await fetch(`${server.url}${entryPath(entry)}/content`, { headers: { 'x-payment': signedForOld } })
    expect(refused.status).toBe(402)
    expect((await refused.json()).error).toBe(
      'invalid_exact_evm_payload_authorization_value: the price is 25000 (smallest unit) now; ask for the 402 again',
    )
    const before = await chain.balanceOf(late.address)
    expect((await pay(late, entry, 25_000n)).status).toBe(200)
    expect(await chain.balanceOf(late.address)).toBe(before - 25_000n)

    const kept = await fetch(`${server.url}${entryPath(entry)}/content`, { headers: await authHeaders(server.url, first) })
    expect(kept.status).toBe(200)
    expect(await kept.text()).toBe('paid words')
    const ledger = (await call(server.url, 'GET', `/v1/transactions?entry_id=${entry.id}`)).body.data.map((t: any) => t.amount).sort()
    expect(ledger).toEqual(['10000', '25000'])
  }, 60_000)

  test(
    'paid → free: anyone reads it, and it stays free (409 ENTRY_CONTENT_PUBLIC): its bytes were ' +
      'public, and a receipt handed out meanwhile would open it',
    async () => {
      const entry = await paidEntry('10000')
      const freed = await edit(entry, { is_free: true })
      expect(freed.body).toMatchObject({ is_free: true, price: '0', expires_at: null })
      const read = await fetch(`${server.url}${entryPath(entry)}/content`)
      expect(read.status).toBe(200)
      expect(await read.text()).toBe('paid words')
      // Anyone reading it now gets a receipt (content_url, an hour long); were it sold again, that would still open it.
      const receipt = (await call(server.url, 'GET', entryPath(entry))).body.content_url
      expect(await (await fetch(receipt)).text()).toBe('paid words')
      for (const body of [
        { is_free: false, price: { amount: '20000', currency: 'USDC' } },
        { price: { amount: '20000', currency: 'USDC' } },
      ]) {
        expectError(await edit(entry, body), 409, 'ENTRY_CONTENT_PUBLIC')
      }
      expectError(
        await edit(entry, { is_free: false, price: { amount: '20000', currency: 'USDC' }, expires_at: Math.floor(Date.now() / 1000) + 60 }),
        409,
        'ENTRY_CONTENT_PUBLIC',
      )
      expect((await call(server.url, 'GET', entryPath(entry))).body).toMatchObject({ is_free: true, price: '0', expires_at: null })

      const published = await createEntry(server.url, owner, feed.id, { title: 'Given away' })
      expectError(await edit(published, { is_free: false, price: { amount: '10000', currency: 'USDC' } }), 409, 'ENTRY_CONTENT_PUBLIC')
      expectError(await edit(published, { price: { amount: '10000', currency: 'USDC' } }), 409, 'ENTRY_CONTENT_PUBLIC')
      expectError(await edit(published, { expires_at: Math.floor(Date.now() / 1000) + 60 }), 400, 'INVALID_EXPIRES_AT')
      expect((await call(server.url, 'GET', entryPath(published))).body).toMatchObject({ is_free: true, price: '0' })
    },
  )

  test('an entry whose early access ended is free for good: a new price or expiry answers 409 ENTRY_CONTENT_PUBLIC', async () => {
    // An hour of early access, ended by the server's clock moved on, not by a second the machine had to beat.
    const ends = Math.floor(Date.now() / 1000) + 3600
    const entry = await paidEntry('10000', { expires_at: ends })
    await server.moveClock(3660)
    // Signed as at the server's time (an x-timestamp of the wall clock is an hour old to it).
    const editLater = async (body: unknown) =>
      call(server.url, 'PATCH', entryPath(entry), {
        body,
        headers: { ...(await authHeaders(server.url, owner)), 'x-timestamp': String(Math.floor(Date.now() / 1000) + 3660) },
      })
    try {
      expect(await (await fetch(`${server.url}${entryPath(entry)}/content`)).text()).toBe('paid words')
      for (const body of [
        { price: { amount: '20000', currency: 'USDC' } },
        { is_free: false },
        { is_free: false, price: { amount: '10000', currency: 'USDC' }, expires_at: ends + 3600 },
      ]) {
        expectError(await editLater(body), 409, 'ENTRY_CONTENT_PUBLIC')
      }
      expect((await call(server.url, 'GET', entryPath(entry))).body).toMatchObject({ is_free: true, price: '0' })
      expect((await editLater({ title: 'Free now' })).body).toMatchObject({ title: 'Free now', is_free: true })
    } finally {
      await server.moveClock(0)
    }
  })

  test('early access: a new expiry moves when the entry turns free; null keeps it paid until changed', async () => {
    const soon = Math.floor(Date.now() / 1000) + 3600
    const entry = await paidEntry('10000', { expires_at: soon })
    expect((await edit(entry, { expires_at: soon + 60 })).body).toMatchObject({ expires_at: soon + 60, is_free: false, price: '10000' })
    expect((await edit(entry, { expires_at: null })).body).toMatchObject({ expires_at: null, is_free: false })
    expect((await edit(entry, { is_free: false })).body).toMatchObject({ price: '10000', is_free: false })
  })
})
