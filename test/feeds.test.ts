import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { withRecords } from '../dev/records-sql.ts'
import { authHeaders, call, createEntry, createFeed, expectError, newWallet, b64 } from '../dev/api.ts'

let server: InProcessApp
let imageHost: ReturnType<typeof Bun.serve>
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex')

beforeAll(async () => {
  server = await startInProcess({ TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1' })
  imageHost = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/cover.png') return new Response(PNG, { headers: { 'content-type': 'image/png' } })
      if (path === '/redirect') return Response.redirect('/cover.png', 302)
      if (path === '/huge') return new Response(new Uint8Array(11 * 1024 * 1024))
      if (path === '/stall') return new Promise<Response>(() => {}) // never answers
      return new Response('no', { status: 404 })
    },
  })
})
afterAll(async () => {
  imageHost.stop(true)
  await server.dispose()
})

const categoryId = async (name: string) => (await call(server, 'GET', `/v1/categories?search=${name}`)).body.data[0].id

describe('POST /v1/feeds', () => {
  test('creates a feed, echoing fields, and creates the owner wallet with the x-chain-id network', async () => {
    const wallet = newWallet()
    const tech = await categoryId('Tech')
    const reply = await call(server, 'POST', '/v1/feeds', {
      wallet,
      body: { name: 'Market notes', description: 'Daily', tags: ['b', 'a', 'c'], category_id: tech },
    })
    expect(reply.status).toBe(201)
    const feed = reply.body
    expect(feed.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    expect(feed).toMatchObject({
      name: 'Market notes',
      description: 'Daily',
      tags: ['b', 'a', 'c'],
      category_id: tech,
      owner_wallet_address: wallet.address,
      is_active: true,
      total_entries: 0,
      total_purchases: 0,
      total_revenue: '0',
      image_cid: null,
    })
    expect(feed.created_at).toBe(feed.updated_at)
    expect(Math.abs(feed.created_at - Date.now() / 1000)).toBeLessThan(10)
    const owner = await call(server, 'GET', `/v1/wallets/${feed.owner_id}`)
    expect(owner.status).toBe(200)
    expect(owner.body).toMatchObject({
      id: feed.owner_id,
      address: wallet.address,
      wallet_address: wallet.address,
      network: 'base-sepolia',
      wallet_address_network: 'base-sepolia',
    })
    expect((await call(server, 'GET', `/v1/feeds/${feed.id}`)).body).toEqual(feed)
  })

  test('validation failures answer shape B with the field', async () => {
    const wallet = newWallet()
    const cases: [unknown, string][] = [
      [{}, 'name'],
      [{ name: '' }, 'name'],
      [{ name: '   ' }, 'name'],
      [{ name: 'x'.repeat(256) }, 'name'],
      [{ name: 'ok', description: 'x'.repeat(2001) }, 'description'],
      [{ name: 'ok', tags: Array.from({ length: 21 }, (_, i) => `t${i}`) }, 'tags'],
      [{ name: 'ok', tags: 'not-an-array' }, 'tags'],
      [{ name: 'ok', category_id: 'not-a-uuid' }, 'category_id'],
      [{ name: 'ok', category_id: '01900000-0000-7000-8000-000000000000' }, 'category_id'],
      [{ name: 12 }, 'name'],
    ]
    for (const [body, field] of cases) {
      const reply = await call(server, 'POST', '/v1/feeds', { wallet, body })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(typeof reply.body.message).toBe('string')
      expect(reply.body.details.field).toBe(field)
    }
    expect(
      (await call(server, 'POST', '/v1/feeds', { wallet, body: { name: 'x'.repeat(255), description: 'd'.repeat(2000) } })).status,
    ).toBe(201)
  })

  test('no auth → 401 even with an invalid body; bad JSON with auth → 400 INVALID_JSON', async () => {
    const unauth = await call(server, 'POST', '/v1/feeds', { rawBody: '{not json' })
    expect(unauth.status).toBe(401)
    expect(unauth.body.code).toBe('AUTH_REQUIRED')
    const bad = await call(server, 'POST', '/v1/feeds', { wallet: newWallet(), rawBody: '{not json' })
    expect(bad.status).toBe(400)
    expect(bad.body.code).toBe('INVALID_JSON')
  })

  test('image_url: http(s) URL (with redirect), data URI, base64 and a known CID all become image_cid', async () => {
    const wallet = newWallet()
    const host = `http://127.0.0.1:${imageHost.port}`
    const fromUrl = await createFeed(server, wallet, { image_url: `${host}/cover.png` })
    expect(fromUrl.image_cid).toMatch(/^bafk/)
    const fromRedirect = await createFeed(server, wallet, { image_url: `${host}/redirect` })
    const fromData = await createFeed(server, wallet, { image_url: `data:image/png;base64,${b64(PNG)}` })
    const fromBase64 = await createFeed(server, wallet, { image_url: b64(PNG) })
    const fromCid = await createFeed(server, wallet, { image_url: fromUrl.image_cid })
    for (const feed of [fromRedirect, fromData, fromBase64, fromCid]) expect(feed.image_cid).toBe(fromUrl.image_cid)
    for (const image_url of [
      `${host}/missing`,
      `${host}/huge`,
      'ftp://example.com/x.png',
      '%%%not-base64%%%',
      'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy',
    ]) {
      const reply = await call(server, 'POST', '/v1/feeds', { wallet, body: { name: 'img', image_url } })
      expect(reply.status).toBe(400)
      expect(reply.body.error).toBe('invalid_request')
      expect(reply.body.details.field).toBe('image_url')
    }
  })

  test("only images are covers: bytes that are no image, an entry's content or an unknown CID are refused", async () => {
    const wallet = newWallet()
    const feed = await createFeed(server, wallet)
    const paidPng = Buffer.concat([PNG, globalThis.crypto.getRandomValues(new Uint8Array(64))]) // never uploaded as a cover
    const paid = await createEntry(server, wallet, feed.id, {
      content_base64: b64(paidPng),
      mime_type: 'image/png',
      is_free: false,
      price: { amount: '1000' },
    })
    const text = await createEntry(server, wallet, feed.id, { content_base64: b64('just text'), mime_type: 'text/plain' })
    for (const image_url of [
      `data:image/png;base64,${b64('not a png')}`,
      b64('<html><script>alert(1)</script></html>'),
      paid.cid,
      text.cid,
    ]) {
      const reply = await call(server, 'POST', '/v1/feeds', { wallet, body: { name: 'img', image_url } })
      expect(reply.status, image_url).toBe(400)
      expect(reply.body.details.field).toBe('image_url')
    }
    for (const image_cid of [paid.cid, text.cid, 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy', 'not-a-cid']) {
      const reply = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet, body: { image_cid } })
      expect(reply.status, image_cid).toBe(400)
      expect(reply.body.details.field).toBe('image_cid')
    }
    const svg = '<?xml version="1.0"?>\n<!-- a cover -->\n<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    const withSvg = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, {
      wallet,
      body: { image_url: `data:image/svg+xml;base64,${b64(svg)}` },
    })
    expect(withSvg.status).toBe(200)
    const other = await createFeed(server, newWallet(), { image_url: withSvg.body.image_cid }) // a stored image, by CID
    expect(other.image_cid).toBe(withSvg.body.image_cid)
  })

  test('GET /v1/feeds/{id}/image: the bytes with their type, ETag = CID, nosniff, SVG sandboxed; 304, immutable by CID, 404s', async () => {
    const wallet = newWallet()
    const feed = await createFeed(server, wallet, { image_url: `data:image/png;base64,${b64(PNG)}` })
    const url = `/v1/feeds/${feed.id}/image`
    const reply = await server.fetch(url)
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toBe('image/png')
    expect(reply.headers.get('etag')).toBe(`"${feed.image_cid}"`)
    expect(reply.headers.get('x-content-type-options')).toBe('nosniff')
    expect(reply.headers.get('cache-control')).toBe('public, max-age=60')
    expect(reply.headers.get('content-security-policy')).toBeNull()
    expect(Buffer.compare(new Uint8Array(await reply.arrayBuffer()), PNG)).toBe(0)
    expect((await server.fetch(url, { headers: { 'if-none-match': `"${feed.image_cid}"` } })).status).toBe(304)
    expect((await server.fetch(`${url}?cid=${feed.image_cid}`)).headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
    expect(
      (await server.fetch(`${url}?cid=bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy`)).headers.get('cache-control'),
    ).toBe('public, max-age=60')

    const svg = '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
    expect((await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet, body: { image_url: b64(svg) } })).status).toBe(200)
    const svgReply = await server.fetch(url)
    expect(svgReply.headers.get('content-type')).toBe('image/svg+xml')
    expect(svgReply.headers.get('content-security-policy')).toBe('sandbox')
    expect(await svgReply.text()).toBe(svg)

    expect((await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet, body: { image_cid: null } })).status).toBe(200)
    expectError(await call(server, 'GET', `/v1/feeds/${feed.id}/image`), 404, 'NOT_FOUND')
    expectError(await call(server, 'GET', `/v1/feeds/${globalThis.crypto.randomUUID()}/image`), 404, 'FEED_NOT_FOUND')
    expectError(await call(server, 'GET', '/v1/feeds/nope/image'), 400, 'INVALID_PARAMETER')
  })

  test("a cover set before images were recorded: served if it is an image, never if it is an entry's content", async () => {
    const wallet = newWallet()
    const cover = Buffer.concat([PNG, globalThis.crypto.getRandomValues(new Uint8Array(32))])
    const legacy = await createFeed(server, wallet, { image_url: b64(cover) })
    const thief = await createFeed(server, wallet, { name: 'points at paid content' })
    const paidBytes = Buffer.concat([PNG, globalThis.crypto.getRandomValues(new Uint8Array(32))])
    const paid = await createEntry(server, wallet, thief.id, {
      content_base64: b64(paidBytes),
      mime_type: 'image/png',
      is_free: false,
      price: { amount: '1000' },
    })
    // As a database from before migration 007 could hold: image_cid set, no images row (then, image_cid took any stored CID).
    await server.stop()
    await withRecords(server, async (db) => {
      await db.run('DELETE FROM images WHERE cid = ?', [legacy.image_cid])
      await db.run('UPDATE feeds SET image_cid = ? WHERE id = ?', [paid.cid, thief.id])
    })
    await server.restart()
    const served = await server.fetch(`/v1/feeds/${legacy.id}/image`)
    expect(served.status).toBe(200)
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(Buffer.compare(new Uint8Array(await served.arrayBuffer()), cover)).toBe(0)
    expectError(await call(server, 'GET', `/v1/feeds/${thief.id}/image`), 404, 'NOT_FOUND')
    expect((await call(server, 'GET', `/v1/feeds/${paid.feed_id}/entries/${paid.id}/content`)).status).toBe(402)
  })

  test('a large cover image as a data URI (up to 10 MB) is accepted; over 10 MB is refused', async () => {
    const wallet = newWallet()
    const big = new Uint8Array(9 * 1024 * 1024).fill(7)
    big.set(PNG) // a PNG signature: only images are taken
    const ok = await call(server, 'POST', '/v1/feeds', {
      wallet,
      body: { name: 'big cover', image_url: `data:image/png;base64,${b64(big)}` },
    })
    expect(ok.status).toBe(201)
    expect(ok.body.image_cid).toMatch(/^baf/)
    const tooBig = await call(server, 'POST', '/v1/feeds', {
      wallet,
      body: { name: 'huge cover', image_url: b64(new Uint8Array(10 * 1024 * 1024 + 1)) },
    })
    expect(tooBig.status).toBe(400)
    expect(tooBig.body.details.field).toBe('image_url')
  })

  test('an image host that never answers is given up after 10 s', async () => {
    const started = Date.now()
    const reply = await call(server, 'POST', '/v1/feeds', {
      wallet: newWallet(),
      body: { name: 'slow', image_url: `http://127.0.0.1:${imageHost.port}/stall` },
    })
    const waited = Date.now() - started
    expect(reply.status).toBe(400)
    expect(reply.body).toMatchObject({ error: 'invalid_request', details: { field: 'image_url' } })
    expect(waited).toBeGreaterThanOrEqual(9_500)
    expect(waited).toBeLessThan(15_000)
  })

  test('a wallet may own at most 10 active feeds', async () => {
    const wallet = newWallet()
    const feeds = []
    for (let i = 0; i < 10; i++) feeds.push(await createFeed(server, wallet, { name: `f${i}` }))
    const eleventh = await call(server, 'POST', '/v1/feeds', { wallet, body: { name: 'too many' } })
    expect(eleventh.status).toBe(403)
    expect(eleventh.body.code).toBe('FEED_LIMIT_REACHED')
    expect((await call(server, 'DELETE', `/v1/feeds/${feeds[0].id}`, { wallet })).status).toBe(204)
    expect((await call(server, 'POST', '/v1/feeds', { wallet, body: { name: 'room again' } })).status).toBe(201)
    // Reactivating the deleted one would make 11.
    const reactivate = await call(server, 'PATCH', `/v1/feeds/${feeds[0].id}`, { wallet, body: { is_active: true } })
    expect(reactivate.status).toBe(403)
    expect(reactivate.body.code).toBe('FEED_LIMIT_REACHED')
  })
})

describe('GET/PATCH/DELETE /v1/feeds/{id}', () => {
  test('get: malformed id → 400 INVALID_PARAMETER, unknown → 404', async () => {
    expectError(await call(server, 'GET', '/v1/feeds/123'), 400, 'INVALID_PARAMETER')
    expectError(await call(server, 'GET', '/v1/feeds/01900000-0000-7000-8000-000000000000'), 404, 'FEED_NOT_FOUND')
  })

  test('patch changes only the given fields; owner only', async () => {
    const owner = newWallet()
    const feed = await createFeed(server, owner, { name: 'before', description: 'keep me', tags: ['x'] })
    await Bun.sleep(1100)
    const reply = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: owner, body: { name: 'after', tags: ['y', 'z'] } })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({ name: 'after', description: 'keep me', tags: ['y', 'z'], created_at: feed.created_at })
    expect(reply.body.updated_at).toBeGreaterThan(feed.updated_at)
    const cleared = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, {
      wallet: owner,
      body: { description: null, category_id: await categoryId('Games') },
    })
    expect(cleared.body.description).toBeNull()
    expect(cleared.body.category_id).toBe(await categoryId('Games'))
    const image = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, {
      wallet: owner,
      body: { image_cid: 'bafkreigh2akiscaildcqabsyg3dfr6chu3fgpregiymsck7e7aqa4s52zy' },
    })
    expect(image.status).toBe(400)
    expect(image.body.details.field).toBe('image_cid')
    // image_url works on update too (the SDK sends it), and a stored CID can then be reused as image_cid.
    const withImage = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, {
      wallet: owner,
      body: { image_url: `data:image/png;base64,${b64(PNG)}` },
    })
    expect(withImage.body.image_cid).toMatch(/^bafk/)
    const other = await createFeed(server, owner, { name: 'reuses the cover' })
    expect(
      (await call(server, 'PATCH', `/v1/feeds/${other.id}`, { wallet: owner, body: { image_cid: withImage.body.image_cid } })).body
        .image_cid,
    ).toBe(withImage.body.image_cid)
    const invalid = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: owner, body: { name: '' } })
    expect(invalid.status).toBe(400)
    expect(invalid.body).toMatchObject({ error: 'invalid_request', details: { field: 'name' } })

    const stranger = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: newWallet(), body: { name: 'mine now' } })
    expect(stranger.status).toBe(403)
    expect(stranger.body.code).toBe('UNAUTHORIZED')
    expect((await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { body: { name: 'x' } })).status).toBe(401)
    expect((await call(server, 'GET', `/v1/feeds/${feed.id}`)).body.name).toBe('after')
  })

  test('delete is soft: entries go inactive, listings hide it, GET still returns it; PATCH is_active=true restores both', async () => {
    const owner = newWallet()
    const feed = await createFeed(server, owner, { name: 'soft' })
    const e1 = await createEntry(server, owner, feed.id)
    const e2 = await createEntry(server, owner, feed.id)
    const deletedAlone = await createEntry(server, owner, feed.id)
    expect((await call(server, 'DELETE', `/v1/feeds/${feed.id}/entries/${deletedAlone.id}`, { wallet: owner })).status).toBe(204)
    expect((await call(server, 'GET', `/v1/feeds/${feed.id}`)).body.total_entries).toBe(2)

    expect((await call(server, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: newWallet() })).status).toBe(403)
    const del = await call(server, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: owner })
    expect(del.status).toBe(204)
    expect(del.text).toBe('')
    const after = (await call(server, 'GET', `/v1/feeds/${feed.id}`)).body
    expect(after.is_active).toBe(false)
    expect(after.total_entries).toBe(0)
    expect((await call(server, 'GET', `/v1/feeds/${feed.id}/entries/${e1.id}`)).body.is_active).toBe(false)
    const listed = await call(server, 'GET', `/v1/feeds?owner_id=${feed.owner_id}&min_entries=0`)
    expect(listed.body.data.map((f: any) => f.id)).not.toContain(feed.id)
    const inactive = await call(server, 'GET', `/v1/feeds?owner_id=${feed.owner_id}&min_entries=0&is_active=false`)
    expect(inactive.body.data.map((f: any) => f.id)).toContain(feed.id)

    const back = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { wallet: owner, body: { is_active: true } })
    expect(back.status).toBe(200)
    expect(back.body.is_active).toBe(true)
    expect(back.body.total_entries).toBe(2)
    const entries = (await call(server, 'GET', `/v1/feeds/${feed.id}/entries`)).body.data.map((e: any) => e.id)
    expect(entries.sort()).toEqual([e1.id, e2.id].sort())
  })

  test('GET and DELETE with Content-Type: application/json and no body are fine', async () => {
    const owner = newWallet()
    const feed = await createFeed(server, owner)
    const get = await server.fetch(`/v1/feeds/${feed.id}`, { headers: { 'content-type': 'application/json' } })
    expect(get.status).toBe(200)
    expect((await call(server, 'DELETE', `/v1/feeds/${feed.id}`, { wallet: owner })).status).toBe(204)
  })
})

describe('GET /v1/feeds', () => {
  test('filters, newest first, cursor pagination that ends with null', async () => {
    const owner = newWallet()
    const crypto = await categoryId('Crypto')
    const made = []
    for (let i = 0; i < 5; i++) {
      const feed = await createFeed(server, owner, {
        name: `list ${i}`,
        tags: i % 2 ? ['odd', 'Shared'] : ['even'],
        category_id: i < 2 ? crypto : undefined,
      })
      await createEntry(server, owner, feed.id)
      made.push(feed)
    }
    const lonelyTag = `lonely${Date.now()}`
    const empty = await createFeed(server, owner, { name: 'no entries', tags: [lonelyTag] })
    const ownerId = made[0].owner_id
    const newestFirst = [...made].reverse().map((f) => f.id)
    const allOfOwner = [empty.id, ...newestFirst]

    // One owner's feeds: all of them by default, a new creator's empty feed too (what the SDK's myFeeds() asks for).
    const all = await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}`)
    expect(all.body.data.map((f: any) => f.id)).toEqual(allOfOwner)
    expect(all.body.pagination).toEqual({ page_size: 6, next_page_token: null, has_more: false })
    // The hosted service's default (min_entries=1) when asked for.
    const withEntries = await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&min_entries=1`)
    expect(withEntries.body.data.map((f: any) => f.id)).toEqual(newestFirst)
    expect(withEntries.body.data.every((f: any) => f.total_entries === 1)).toBe(true)
    // The market-wide listing keeps hiding feeds with no entries unless asked.
    expect((await call(server, 'GET', `/v1/feeds?tags=${lonelyTag}`)).body.data).toEqual([])
    expect((await call(server, 'GET', `/v1/feeds?tags=${lonelyTag}&min_entries=0`)).body.data.map((f: any) => f.id)).toEqual([empty.id])

    const withEmpty = await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&min_entries=0`)
    expect(withEmpty.body.data[0].id).toBe(empty.id)
    const byAddress = await call(server, 'GET', `/v1/feeds?owner_id=${owner.address.toLowerCase()}`)
    expect(byAddress.body.data.length).toBe(6)
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${ownerId.toUpperCase()}`)).body.data.map((f: any) => f.id)).toEqual(allOfOwner)
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${globalThis.crypto.randomUUID()}`)).body.data).toEqual([])
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${newWallet().address}`)).body.data).toEqual([])
    for (const bad of ['not-an-id', '0x1234', `${ownerId}x`, '%20']) {
      expectError(await call(server, 'GET', `/v1/feeds?owner_id=${bad}`), 400, 'INVALID_PARAMETER')
      expectError(await call(server, 'GET', `/v1/feeds?owner_wallet_address=${bad}`), 400, 'INVALID_PARAMETER')
    }

    const tagged = await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&tags=shared,nothing`)
    expect(tagged.body.data.map((f: any) => f.id)).toEqual([made[3].id, made[1].id])
    // Tags changed by PATCH are what the filter sees.
    const retag = async (feed: any, tags: string[]) => {
      const reply = await call(server, 'PATCH', `/v1/feeds/${feed.id}`, { headers: await authHeaders(server, owner), body: { tags } })
      expect(reply.status).toBe(200)
    }
    await retag(made[1], ['Later'])
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&tags=shared`)).body.data.map((f: any) => f.id)).toEqual([made[3].id])
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&tags=LATER`)).body.data.map((f: any) => f.id)).toEqual([made[1].id])
    await retag(made[1], ['odd', 'Shared'])
    const byCategory = await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&category=${crypto}`)
    expect(byCategory.body.data.map((f: any) => f.id)).toEqual([made[1].id, made[0].id])
    const byCategoryName = await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&category=crypto`)
    expect(byCategoryName.body.data.length).toBe(2)
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&min_age=3600`)).body.data).toEqual([])
    expect((await call(server, 'GET', `/v1/feeds?owner_id=${ownerId}&max_age=3600`)).body.data.length).toBe(6)

    const seen: string[] = []
    let token: string | null = null
    let pages = 0
    do {
      const reply: any = await call(
        server,
        'GET',
        `/v1/feeds?owner_id=${ownerId}&page_size=2${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
      )
      expect(reply.status).toBe(200)
      expect(reply.body.data.length).toBeGreaterThan(0)
      expect(reply.body.pagination.page_size).toBe(reply.body.data.length)
      expect(reply.body.pagination.has_more).toBe(reply.body.pagination.next_page_token !== null)
      seen.push(...reply.body.data.map((f: any) => f.id))
      token = reply.body.pagination.next_page_token
      pages++
    } while (token)
    expect(pages).toBe(3)
    expect(seen).toEqual(allOfOwner)
  })

  test('bad parameters: page_size, page_token, booleans, numbers', async () => {
    for (const q of ['page_size=0', 'page_size=101', 'page_size=abc', 'is_active=maybe', 'min_entries=-1', 'min_age=x']) {
      const reply = await call(server, 'GET', `/v1/feeds?${q}`)
      expect(reply.status).toBe(400)
      expect(reply.body.code).toBe('INVALID_PARAMETER')
    }
    for (const token of ['garbage', 'a.b', 'eyJzIjoiZmVlZHMiLCJjIjoienp6In0.AAAAAAAAAAAAAAAAAAAAAA']) {
      const reply = await call(server, 'GET', `/v1/feeds?page_token=${token}`)
      expect(reply.status).toBe(422)
      expect(reply.body.code).toBe('INVALID_PAGE_TOKEN')
    }
    // A real token from another listing is foreign here.
    const categories = await call(server, 'GET', '/v1/categories?page_size=1')
    const foreign = await call(server, 'GET', `/v1/feeds?page_token=${categories.body.pagination.next_page_token}`)
    expect(foreign.status).toBe(422)
    expect((await call(server, 'GET', '/v1/feeds?page_size=100')).status).toBe(200)
  })
})
