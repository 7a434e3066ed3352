// Operator takedowns on a real server and a real chain: a feed or an entry taken down is hidden from every listing,
// board, page, reader feed and discovery document, every direct read of it (its owner's and its buyer's too) answers
// 451, its sales stay in the ledger, and reinstatement gives back exactly what the owner had. The same from the
// command line, against the running server.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestServer, trellis, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'

const ADMIN_KEY = 'moderation-admin-key-0123456789abcdef'
const PRICE = 25_000n
const admin = { 'admin-api-key': ADMIN_KEY }

let chain: TestChain
let server: TestServer
let creator: Wallet

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer({ ...chain.env, TRELLIS_ADMIN_KEY: ADMIN_KEY, TRELLIS_STATS_REFRESH_S: '1' })
  creator = newWallet()
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

const get = (path: string, headers: Record<string, string> = {}) => call(server.url, 'GET', path, { headers })
const takeDown = (kind: 'feeds' | 'entries', id: string, reason = 'a court order') =>
  call(server.url, 'POST', `/v1/admin/${kind}/${id}/takedown`, { headers: admin, body: { reason } })
const reinstate = (kind: 'feeds' | 'entries', id: string, body?: unknown) =>
  call(server.url, 'POST', `/v1/admin/${kind}/${id}/reinstate`, { headers: admin, body })
const feedIds = async (query: string) => ((await get(`/v1/feeds?${query}`)).body.data as { id: string }[]).map((f) => f.id)
const boardIds = async (board: string) =>
  ((await get(`/v1/leaderboards/${board}`)).body.data as { id?: string; feed_id?: string }[]).map((item) => item.id ?? item.feed_id)
const entryIds = async (feedId: string) => ((await get(`/v1/feeds/${feedId}/entries`)).body.data as { id: string }[]).map((e) => e.id)

async function until(what: string, check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await Bun.sleep(100)
  }
}

/** A feed with a free entry and a paid one bought by a buyer on chain. */
async function marketFeed(name: string) {
  const feed = await createFeed(server.url, creator, { name, tags: ['moderated'] })
  const free = await createEntry(server.url, creator, feed.id, { content_base64: b64(`free words of ${name}`), title: 'Free' })
  const paid = await createEntry(server.url, creator, feed.id, {
    content_base64: b64(`paid words of ${name}`),
    title: 'Paid',
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const bought = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}/content`, {
    headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })) },
  })
  expect(bought.status).toBe(200)
  expect(await bought.text()).toBe(`paid words of ${name}`)
  return { feed, free, paid, buyer }
}

describe('admin routes', () => {
  test('need the admin key: none or a wrong one → 401 ADMIN_KEY_REQUIRED, before the body is looked at', async () => {
    const feed = await createFeed(server.url, creator, { name: 'guarded' })
    for (const headers of [{}, { 'admin-api-key': 'wrong' }] as Record<string, string>[]) {
      expectError(
        await call(server.url, 'POST', `/v1/admin/feeds/${feed.id}/takedown`, { headers, body: { reason: 'x' } }),
        401,
        'ADMIN_KEY_REQUIRED',
      )
      expectError(
        await call(server.url, 'POST', `/v1/admin/feeds/${feed.id}/takedown`, { headers, rawBody: '{not json' }),
        401,
        'ADMIN_KEY_REQUIRED',
      )
      expectError(await get('/v1/admin/takedowns', headers), 401, 'ADMIN_KEY_REQUIRED')
    }
    expect((await get(`/v1/feeds/${feed.id}`)).status).toBe(200)
  })

  test('bad input: unknown or malformed ids, a missing or blank reason, a bad state', async () => {
    const feed = await createFeed(server.url, creator, { name: 'inputs' })
    expectError(await takeDown('feeds', crypto.randomUUID()), 404, 'FEED_NOT_FOUND')
    expectError(await takeDown('entries', crypto.randomUUID()), 404, 'ENTRY_NOT_FOUND')
    expectError(await takeDown('feeds', 'not-a-uuid'), 400, 'INVALID_PARAMETER')
    for (const body of [{}, { reason: '' }, { reason: '   ' }, { reason: 'x'.repeat(1001) }, { reason: 'a\u0000b' }]) {
      const reply = await call(server.url, 'POST', `/v1/admin/feeds/${feed.id}/takedown`, { headers: admin, body })
      expect(reply.status).toBe(400)
    }
    expectError(await reinstate('feeds', feed.id), 409, 'NOT_TAKEN_DOWN')
    expectError(await get('/v1/admin/takedowns?state=gone', admin), 400, 'INVALID_PARAMETER')
    expect((await get(`/v1/feeds/${feed.id}`)).body.is_active).toBe(true)
  })
})

describe('a feed taken down', () => {
  test('is hidden everywhere and answers 451 to everyone; its sales stay; reinstated, it is back as it was', async () => {
    const { feed, free, paid, buyer } = await marketFeed('to be taken down')
    const before = (await get(`/v1/feeds/${feed.id}`)).body
    const ledgerBefore = (await get(`/v1/transactions?entry_id=${paid.id}`)).body
    expect(ledgerBefore.data).toHaveLength(1)
    await until('the feed on the boards', async () => (await boardIds('top-feeds')).includes(feed.id))
    expect(await feedIds('tags=moderated')).toContain(feed.id)

    const taken = await takeDown('feeds', feed.id, 'copyright complaint #1')
    expect(taken.status).toBe(201)
    expect(taken.body).toMatchObject({
      kind: 'feed',
      feed_id: feed.id,
      entry_id: null,
      reason: 'copyright complaint #1',
      reinstated_at: null,
      reinstate_reason: null,
    })
    expectError(await takeDown('feeds', feed.id), 409, 'ALREADY_TAKEN_DOWN')

    // Direct reads: 451 for anyone, the owner and the buyer included.
    for (const path of [
      `/v1/feeds/${feed.id}`,
      `/v1/feeds/${feed.id}/entries`,
      `/v1/feeds/${feed.id}/entries/${free.id}`,
      `/v1/feeds/${feed.id}/entries/${free.id}/content`,
      `/v1/feeds/${feed.id}/entries/${paid.id}/content`,
      `/v1/feeds/${feed.id}/feed.xml`,
      `/v1/feeds/${feed.id}/feed.json`,
    ]) {
      expectError(await get(path), 451, 'TAKEN_DOWN')
    }
    expectError(await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: buyer }), 451, 'TAKEN_DOWN')
    expectError(await call(server.url, 'GET', `/v1/feeds/${feed.id}`, { wallet: creator }), 451, 'TAKEN_DOWN')
    const page = await fetch(`${server.url}/feeds/${feed.id}`, { headers: { accept: 'text/html' } })
    expect(page.status).toBe(451)
    expect(await page.text()).toContain('taken down')
    // The owner cannot bring it back, edit it or delete it.
    expectError(await call(server.url, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: creator, body: { is_active: true } }), 451, 'TAKEN_DOWN')
    expectError(await call(server.url, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: creator, body: { name: 'renamed' } }), 451, 'TAKEN_DOWN')
    expectError(await call(server.url, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: creator }), 451, 'TAKEN_DOWN')
    expectError(
      await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, {
        wallet: creator,
        body: { content_base64: b64('more'), mime_type: 'text/plain' },
      }),
      451,
      'TAKEN_DOWN',
    )
    // A payment for it is refused before anything settles: no money moves.
    const late = await chain.newFundedBuyer(1_000_000n)
    const refused = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${paid.id}/content`, {
      headers: { 'x-payment': encodePaymentHeader(await v1Payment(late, { to: creator.address, value: PRICE })) },
    })
    expect(refused.status).toBe(451)
    expect(await chain.balanceOf(late.address)).toBe(1_000_000n)

    // Listings, boards (at once, not at the next build), pages, discovery: nowhere.
    for (const query of [
      'tags=moderated',
      'is_active=false',
      `owner_wallet_address=${creator.address}`,
      `owner_wallet_address=${creator.address}&is_active=false`,
    ]) {
      expect(await feedIds(query)).not.toContain(feed.id)
    }
    for (const board of ['top-feeds', 'trending', 'most-popular', 'top-revenue']) expect(await boardIds(board)).not.toContain(feed.id)
    expect(((await get('/v1/leaderboards/recent-entries')).body.data as { id: string }[]).map((e) => e.id)).not.toContain(free.id)
    expect(JSON.stringify((await get('/discovery/resources?limit=100')).body)).not.toContain(paid.id)
    expect(await (await fetch(`${server.url}/creators/${creator.address}`, { headers: { accept: 'text/html' } })).text()).not.toContain(
      feed.id,
    )
    expect(await (await fetch(`${server.url}/`, { headers: { accept: 'text/html' } })).text()).not.toContain(feed.id)
    // The next build of the boards leaves it out too.
    await Bun.sleep(2_500)
    expect(await boardIds('top-revenue')).not.toContain(feed.id)

    // The ledger is untouched.
    expect((await get(`/v1/transactions?entry_id=${paid.id}`)).body).toEqual(ledgerBefore)

    // Listed with its reason.
    const standing = (await get('/v1/admin/takedowns', admin)).body
    expect(standing.data.find((t: { feed_id: string }) => t.feed_id === feed.id)).toMatchObject({
      id: taken.body.id,
      reason: 'copyright complaint #1',
    })

    const back = await reinstate('feeds', feed.id, { reason: 'counter-notice' })
    expect(back.status).toBe(200)
    expect(back.body).toMatchObject({ id: taken.body.id, reinstate_reason: 'counter-notice' })
    expect(back.body.reinstated_at).toBeGreaterThanOrEqual(taken.body.taken_down_at)
    expectError(await reinstate('feeds', feed.id), 409, 'NOT_TAKEN_DOWN')
    const after = (await get(`/v1/feeds/${feed.id}`)).body
    expect({ ...after, updated_at: 0 }).toEqual({ ...before, updated_at: 0 })
    expect(await entryIds(feed.id)).toEqual([paid.id, free.id])
    const content = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: buyer })
    expect(content.text).toBe('paid words of to be taken down')
    await until('the feed back on the boards', async () => (await boardIds('top-revenue')).includes(feed.id))
    expect(((await get('/v1/admin/takedowns', admin)).body.data as { id: string }[]).map((t) => t.id)).not.toContain(taken.body.id)
    expect(((await get('/v1/admin/takedowns?state=reinstated', admin)).body.data as { id: string }[]).map((t) => t.id)).toContain(
      taken.body.id,
    )
  })

  test('a feed its owner had deleted comes back deleted; owners racing a takedown never bring a feed back', async () => {
    const deleted = await createFeed(server.url, creator, { name: 'deleted first' })
    await createEntry(server.url, creator, deleted.id, { content_base64: b64('x') })
    expect((await call(server.url, 'DELETE', `/v1/feeds/${deleted.id}`, { wallet: creator })).status).toBe(204)
    expect((await takeDown('feeds', deleted.id)).status).toBe(201)
    expect((await reinstate('feeds', deleted.id)).status).toBe(200)
    expect((await get(`/v1/feeds/${deleted.id}`)).body).toMatchObject({ is_active: false, total_entries: 0 })

    const raced = await createFeed(server.url, creator, { name: 'raced' })
    await createEntry(server.url, creator, raced.id, { content_base64: b64('y') })
    const toggles = Array.from({ length: 12 }, (_, i) =>
      call(server.url, i % 2 ? 'DELETE' : 'PATCH', `/v1/feeds/${raced.id}`, {
        wallet: creator,
        body: i % 2 ? undefined : { is_active: true },
      }),
    )
    const [takedown, ...owners] = await Promise.all([takeDown('feeds', raced.id), ...toggles])
    expect(takedown!.status).toBe(201)
    for (const reply of owners) expect([200, 204, 451]).toContain(reply.status)
    expectError(await get(`/v1/feeds/${raced.id}`), 451, 'TAKEN_DOWN')
    expect(await feedIds(`owner_wallet_address=${creator.address}&is_active=false`)).not.toContain(raced.id)
    expect((await reinstate('feeds', raced.id)).status).toBe(200)
    const back = (await get(`/v1/feeds/${raced.id}`)).body
    // Whichever owner's write came last before the takedown: the feed and its entries agree.
    expect(back.total_entries).toBe(back.is_active ? 1 : 0)
  })
})

describe('an entry taken down', () => {
  test('is hidden from its feed, answers 451, leaves the feed count, and survives its feed being deleted and restored', async () => {
    const { feed, free, paid, buyer } = await marketFeed('one entry down')
    expect((await takeDown('entries', paid.id, 'leaked material')).body).toMatchObject({
      kind: 'entry',
      feed_id: feed.id,
      entry_id: paid.id,
    })
    expectError(await takeDown('entries', paid.id), 409, 'ALREADY_TAKEN_DOWN')
    expectError(await get(`/v1/feeds/${feed.id}/entries/${paid.id}`), 451, 'TAKEN_DOWN')
    expectError(await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: buyer }), 451, 'TAKEN_DOWN')
    expectError(await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: creator }), 451, 'TAKEN_DOWN')
    expectError(
      await call(server.url, 'PATCH', `/v1/feeds/${feed.id}/entries/${paid.id}`, { wallet: creator, body: { title: 'again' } }),
      451,
      'TAKEN_DOWN',
    )
    expect(await entryIds(feed.id)).toEqual([free.id])
    expect((await get(`/v1/feeds/${feed.id}`)).body.total_entries).toBe(1)
    expect(await (await fetch(`${server.url}/v1/feeds/${feed.id}/feed.xml`)).text()).not.toContain(paid.id)
    expect((await get(`/v1/transactions?entry_id=${paid.id}`)).body.data).toHaveLength(1)

    // The owner deletes the feed and brings it back: the entry taken down stays down.
    expect((await call(server.url, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: creator })).status).toBe(204)
    expect((await call(server.url, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: creator, body: { is_active: true } })).status).toBe(200)
    expect(await entryIds(feed.id)).toEqual([free.id])
    expectError(await get(`/v1/feeds/${feed.id}/entries/${paid.id}`), 451, 'TAKEN_DOWN')

    // Reinstated while its feed is deleted: it comes back with the feed, not before.
    expect((await call(server.url, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: creator })).status).toBe(204)
    expect((await reinstate('entries', paid.id)).status).toBe(200)
    expect((await get(`/v1/feeds/${feed.id}/entries/${paid.id}`)).body.is_active).toBe(false)
    expect((await call(server.url, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: creator, body: { is_active: true } })).status).toBe(200)
    expect(await entryIds(feed.id)).toEqual([paid.id, free.id])
    expect((await get(`/v1/feeds/${feed.id}`)).body.total_entries).toBe(2)
    expect((await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${paid.id}/content`, { wallet: buyer })).text).toBe(
      'paid words of one entry down',
    )
  })
})

describe('access links of content taken down', () => {
  test('opening a link, making one, listing them and revoking one all answer 451 TAKEN_DOWN while the takedown stands', async () => {
    const feed = await createFeed(server.url, creator, { name: 'linked' })
    const entry = await createEntry(server.url, creator, feed.id, {
      content_base64: b64('linked words'),
      title: 'Linked',
      is_free: false,
      price: { amount: String(PRICE), currency: 'USDC' },
    })
    const links = `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`
    const made = await call(server.url, 'POST', links, { wallet: creator })
    expect(made.status).toBe(201)
    const opened = () => call(server.url, 'GET', `/v1/access/${made.body.access_token}`)
    expect((await opened()).text).toBe('linked words')

    const refusedWhileDown = async () => {
      expectError(await opened(), 451, 'TAKEN_DOWN')
      expect((await call(server.url, 'HEAD', `/v1/access/${made.body.access_token}`)).status).toBe(451)
      expectError(await call(server.url, 'POST', links, { wallet: creator }), 451, 'TAKEN_DOWN')
      expectError(await call(server.url, 'GET', `${links}s`, { wallet: creator }), 451, 'TAKEN_DOWN')
      expectError(await call(server.url, 'DELETE', `/v1/access-links/${made.body.id}`, { wallet: creator }), 451, 'TAKEN_DOWN')
    }
    for (const [kind, id] of [
      ['entries', entry.id],
      ['feeds', feed.id],
    ] as const) {
      expect((await takeDown(kind, id)).status).toBe(201)
      await refusedWhileDown()
      expect((await reinstate(kind, id)).status).toBe(200)
      // Back as it was: the link opens again and was neither used nor revoked meanwhile.
      expect((await opened()).text).toBe('linked words')
    }
    const listed = await call(server.url, 'GET', `${links}s`, { wallet: creator })
    expect(listed.body.data).toMatchObject([{ id: made.body.id, is_active: true, current_uses: 3 }])
  })
})

describe('the command line', () => {
  test('trellis takedown, takedowns and reinstate act through the running server; usage errors exit 2', async () => {
    const feed = await createFeed(server.url, creator, { name: 'by command' })
    const entry = await createEntry(server.url, creator, feed.id, { content_base64: b64('words') })
    const run = (args: string[]) => trellis(args, server.dataDir, server.recordsEnv)

    const down = await run(['takedown', 'entry', entry.id, '--reason', 'spam, reported twice'])
    expect(down.code).toBe(0)
    expect(down.json).toMatchObject({ kind: 'entry', target_id: entry.id, feed_id: feed.id, reason: 'spam, reported twice' })
    expectError(await get(`/v1/feeds/${feed.id}/entries/${entry.id}`), 451, 'TAKEN_DOWN')
    const again = await run(['takedown', 'entry', entry.id, '--reason', 'twice'])
    expect(again.code).toBe(1)
    expect(again.stderr).toContain('taken down already')

    const listed = await run(['takedowns'])
    expect(listed.code).toBe(0)
    expect((listed.json as { target_id: string }[]).map((t) => t.target_id)).toContain(entry.id)

    const up = await run(['reinstate', 'entry', entry.id])
    expect(up.code).toBe(0)
    expect((await get(`/v1/feeds/${feed.id}/entries/${entry.id}`)).status).toBe(200)
    const all = await run(['takedowns', '--state', 'all'])
    expect(
      (all.json as { target_id: string; reinstated_at: number | null }[]).find((t) => t.target_id === entry.id)!.reinstated_at,
    ).not.toBeNull()

    for (const args of [
      ['takedown', 'feed', feed.id],
      ['takedown', 'wallet', feed.id, '--reason', 'x'],
      ['takedown', 'feed', 'nope', '--reason', 'x'],
      ['takedowns', '--state', 'gone'],
      ['takedown', 'feed', feed.id, '--reason'],
    ]) {
      expect((await run(args)).code).toBe(2)
    }
    const unknown = await run(['takedown', 'feed', crypto.randomUUID(), '--reason', 'x'])
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('feed not found')
    expect((await get(`/v1/feeds/${feed.id}`)).status).toBe(200)
  })

  test('the ledger check still finds the records sound after takedowns and reinstatements', async () => {
    const verify = await trellis(['verify'], server.dataDir, server.recordsEnv)
    expect(verify.stderr).not.toContain('problem')
    expect(verify.code).toBe(0)
  })
})
