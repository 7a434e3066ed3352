// The OpenAPI document is a valid OpenAPI 3.1 document, names every route the app answers, and tells the truth:
// a walk over every operation, honest and hostile requests alike, gets only documented statuses, and every JSON body
// matches the schema documented for its status.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Validator } from '@seriousme/openapi-schema-validator'
import Ajv2020 from 'ajv/dist/2020.js'
import addFormats from 'ajv-formats'
import { startInProcess, type InProcessApp } from '../dev/in-process.ts'
import { authHeaders, b64, call, createEntry, createFeed, newWallet, type Reply, type Wallet } from '../dev/api.ts'

const ADMIN_KEY = 'openapi-test-admin-key'
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64, 7)])
const UNKNOWN = '00000000-0000-4000-8000-000000000000'

let app: InProcessApp
let doc: any
beforeAll(async () => {
  // TRELLIS_TEST_ALLOW_PRIVATE_FETCH: a webhook on loopback.
  app = await startInProcess({ TRELLIS_ADMIN_KEY: ADMIN_KEY, TRELLIS_TEST_HOOKS: '1', TRELLIS_TEST_ALLOW_PRIVATE_FETCH: '1' })
  doc = (await call(app, 'GET', '/v1/openapi.json')).body
})
afterAll(() => app.dispose())

test('the document is valid OpenAPI 3.1, with servers, security schemes and no empty request body', async () => {
  const result = await new Validator().validate(doc)
  expect(result.errors ?? []).toEqual([])
  expect(result.valid).toBe(true)
  expect(doc.openapi).toBe('3.1.0')
  expect(doc.servers).toEqual([{ url: app.url }])
  expect(Object.keys(doc.components.securitySchemes).sort()).toEqual([
    'adminApiKey',
    'walletAddress',
    'walletMessage',
    'walletSignature',
    'walletTimestamp',
  ])
  for (const [path, operations] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(operations)) {
      if (!op.requestBody) continue
      const schema = op.requestBody.content?.['application/json']?.schema
      expect({ path, method, schema: Boolean(schema?.$ref ?? schema?.properties) }).toEqual({ path, method, schema: true })
    }
  }
  // Create entry also takes a form, the content as a file part.
  const create = doc.paths['/v1/feeds/{feed_id}/entries'].post.requestBody.content
  expect(Object.keys(create).sort()).toEqual(['application/json', 'multipart/form-data'])
  expect(create['multipart/form-data'].schema).toEqual({ $ref: '#/components/schemas/CreateEntryForm' })
  expect(doc.components.schemas.CreateEntryForm.properties.content).toMatchObject({ type: 'string', format: 'binary' })
  // Nothing internal leaks: no $id and no TypeBox-only keyword outside the components' own extensions.
  expect(JSON.stringify(doc)).not.toContain('"$id"')
})

test('every route the app answers is documented, and every documented operation exists', () => {
  const answered = app.routes
    .filter((r) => !r.hidden && r.method !== 'OPTIONS' && r.method !== 'HEAD')
    .map((r) => `${r.method.toLowerCase()} ${r.path.replace(/:([^/]+)/g, '{$1}')}`)
  const documented = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`))
  expect(documented.sort()).toEqual([...new Set(answered)].sort())
})

test('a walk over every operation gets only documented statuses and bodies that match their schemas', async () => {
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  addFormats(ajv)
  ajv.addFormat('binary', true)
  const validators = new Map<object, ReturnType<typeof ajv.compile>>()
  const validate = (schema: object, body: unknown) => {
    let check = validators.get(schema)
    if (!check) validators.set(schema, (check = ajv.compile({ ...schema, components: doc.components })))
    return check(body) ? null : check.errors
  }

  const seen = new Set<string>()
  const problems: string[] = []
  /** One request to an operation, by its documented path template. */
  async function hit(
    method: string,
    template: string,
    params: Record<string, string>,
    options: Parameters<typeof call>[3] = {},
  ): Promise<Reply> {
    const path = template.replace(/\{([^}]+)\}/g, (_, name) => params[name] ?? '')
    const reply = await call(app, method.toUpperCase(), path, options)
    const [bare] = template.split('?')
    const op = doc.paths[bare!]?.[method]
    seen.add(`${method} ${bare}`)
    if (!op) return (problems.push(`${method} ${bare}: not documented`), reply)
    const documented = op.responses[String(reply.status)]
    if (!documented) return (problems.push(`${method} ${path}: ${reply.status} is not documented (${reply.text.slice(0, 120)})`), reply)
    const schema = documented.content?.['application/json']?.schema
    if (schema) {
      const errors = validate(schema, reply.body)
      if (errors) problems.push(`${method} ${path} ${reply.status}: ${JSON.stringify(errors).slice(0, 400)} in ${reply.text.slice(0, 200)}`)
    } else if (!documented.content && reply.text !== '')
      problems.push(`${method} ${path} ${reply.status}: documented without a body, got ${reply.text.slice(0, 80)}`)
    for (const name of Object.keys(documented.headers ?? {})) {
      if (name === 'payment-required' && !reply.headers.get(name)) problems.push(`${method} ${path} ${reply.status}: no ${name} header`)
    }
    // Trellis's own answer headers are documented where they are sent.
    for (const name of ['trellis-warning']) {
      if (reply.headers.get(name) && !documented.headers?.[name]) problems.push(`${method} ${path} ${reply.status}: ${name} undocumented`)
    }
    return reply
  }

  const owner = newWallet()
  const stranger = newWallet()
  const signedBy = async (wallet: Wallet) => ({ headers: await authHeaders(app, wallet) })

  await hit('get', '/health', {})
  await hit('post', '/v1/auth/nonce', {}, { body: { wallet_address: owner.address } })
  await hit('post', '/v1/auth/nonce', {}, { body: {} })
  await hit('post', '/v1/auth/nonce', {}, { rawBody: '{"wallet_address":' })
  const session = await hit('post', '/v1/auth/session', {}, { wallet: owner })
  await hit('post', '/v1/auth/session', {}, {})
  await hit('post', '/v1/auth/session', {}, { wallet: owner, headers: { 'sec-fetch-site': 'cross-site' } })
  await hit('get', '/v1/auth/session', {}, { headers: { cookie: session.headers.getSetCookie()[0]!.split(';')[0]! } })
  await hit('get', '/v1/auth/session', {})
  await hit('delete', '/v1/auth/session', {})
  const page = { origin: new URL(app.url).origin, 'sec-fetch-site': 'same-origin' }
  const studio = await hit('post', '/v1/auth/studio', {}, { wallet: owner, headers: page })
  await hit('post', '/v1/auth/studio', {}, {})
  await hit('post', '/v1/auth/studio', {}, { wallet: owner, headers: { 'sec-fetch-site': 'cross-site' } })
  await hit('get', '/v1/auth/studio', {}, { headers: { cookie: studio.headers.getSetCookie()[0]!.split(';')[0]!, ...page } })
  await hit('get', '/v1/auth/studio', {}, { headers: page })
  await hit('get', '/v1/auth/studio', {})
  await hit('delete', '/v1/auth/studio', {})

  // Feeds
  await hit('post', '/v1/feeds', {}, { body: { name: 'x' } })
  await hit('post', '/v1/feeds', {}, { wallet: owner, body: { name: '' } })
  await hit('post', '/v1/feeds', {}, { wallet: owner, body: { name: 'walk', tags: ['a'], image_url: `data:image/png;base64,${b64(PNG)}` } })
  const limited = newWallet()
  for (let i = 0; i < 10; i++) await createFeed(app, limited, { name: `f${i}` })
  await hit('post', '/v1/feeds', {}, { wallet: limited, body: { name: 'eleventh' } })
  const feed = await createFeed(app, owner, { name: 'Walked', image_url: `data:image/png;base64,${b64(PNG)}` })
  const bare = await createFeed(app, owner, { name: 'No cover' })
  const free = await createEntry(app, owner, feed.id, { content_base64: b64('free bytes'), mime_type: 'text/plain' })
  const paid = await createEntry(app, owner, feed.id, {
    content_base64: b64('paid bytes'),
    mime_type: 'text/plain',
    is_free: false,
    price: { amount: '2500', currency: 'USDC' },
  })
  await hit('get', '/v1/feeds', {})
  await hit('get', '/v1/search?q=walk', {})
  await hit('get', '/v1/search?q=walk&type=feed&page_size=1', {})
  await hit('get', '/v1/search?q=%22', {})
  await hit('get', '/v1/search?q=walk&page_token=forged', {})
  await hit('get', '/v1/feeds?page_token=forged', {})
  await hit('get', '/v1/feeds?owner_id=nope', {})
  await hit('get', '/v1/feeds/{feed_id}', { feed_id: feed.id })
  await hit('get', '/v1/feeds/{feed_id}', { feed_id: 'nope' })
  await hit('get', '/v1/feeds/{feed_id}', { feed_id: UNKNOWN })
  await hit('patch', '/v1/feeds/{feed_id}', { feed_id: feed.id }, { wallet: owner, body: { description: 'walked' } })
  await hit('patch', '/v1/feeds/{feed_id}', { feed_id: feed.id }, { wallet: owner, body: { name: 7 } })
  await hit('patch', '/v1/feeds/{feed_id}', { feed_id: feed.id }, { wallet: stranger, body: { name: 'mine' } })
  await hit('patch', '/v1/feeds/{feed_id}', { feed_id: UNKNOWN }, { wallet: owner, body: { name: 'x' } })
  await hit('patch', '/v1/feeds/{feed_id}', { feed_id: feed.id }, { body: { name: 'x' } })
  await hit('get', '/v1/feeds/{feed_id}/image', { feed_id: feed.id })
  const cover = await hit('get', '/v1/feeds/{feed_id}/image', { feed_id: feed.id }, { headers: { range: 'bytes=0-3' } })
  expect(cover.status).toBe(206)
  await hit(
    'get',
    '/v1/feeds/{feed_id}/image',
    { feed_id: feed.id },
    { headers: { 'if-none-match': `"${(await call(app, 'GET', `/v1/feeds/${feed.id}`)).body.image_cid}"` } },
  )
  await hit('get', '/v1/feeds/{feed_id}/image', { feed_id: feed.id }, { headers: { range: 'bytes=99999-' } })
  await hit('get', '/v1/feeds/{feed_id}/image', { feed_id: bare.id })
  await hit('get', '/v1/feeds/{feed_id}/image', { feed_id: 'nope' })

  // Entries
  const entries = '/v1/feeds/{feed_id}/entries'
  await hit(
    'post',
    entries,
    { feed_id: feed.id },
    { wallet: owner, body: { content_base64: b64('{"a":1}'), mime_type: 'application/json', title: 'T' } },
  )
  // A price below the settlement cost: created, with the warning in a header and in the body (both documented).
  const cheap = await hit(
    'post',
    entries,
    { feed_id: feed.id },
    { wallet: owner, body: { content_base64: b64('c'), mime_type: 'text/plain', is_free: false, price: { amount: '1000' } } },
  )
  expect([cheap.status, Boolean(cheap.headers.get('trellis-warning')), cheap.body.price_warning?.code]).toEqual([
    201,
    true,
    'price_below_settlement_cost',
  ])
  await hit('post', entries, { feed_id: feed.id }, { wallet: owner, body: { content_base64: b64('x'), mime_type: 'application/x-nope' } })
  await hit(
    'post',
    entries,
    { feed_id: feed.id },
    { wallet: owner, body: { content_base64: b64('x'), mime_type: 'text/plain', is_free: false, price: { amount: '-1' } } },
  )
  await hit('post', entries, { feed_id: feed.id }, { wallet: stranger, body: { content_base64: b64('x'), mime_type: 'text/plain' } })
  await hit('post', entries, { feed_id: UNKNOWN }, { wallet: owner, body: { content_base64: b64('x'), mime_type: 'text/plain' } })
  await hit('post', entries, { feed_id: feed.id }, { body: { content_base64: b64('x'), mime_type: 'text/plain' } })
  // The same as a form: the content as a file part; a form without it; another multipart type.
  const formOf = (type: string, ...parts: string[]) => ({
    rawBody: `${parts.map((p) => `--B\r\n${p}\r\n`).join('')}--B--\r\n`,
    headers: { 'content-type': `${type}; boundary=B` },
  })
  const contentPart = 'Content-Disposition: form-data; name="content"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\nhi'
  const titlePart = 'Content-Disposition: form-data; name="title"\r\n\r\nT'
  expect(
    (await hit('post', entries, { feed_id: feed.id }, { wallet: owner, ...formOf('multipart/form-data', contentPart, titlePart) })).status,
  ).toBe(201)
  expect((await hit('post', entries, { feed_id: feed.id }, { wallet: owner, ...formOf('multipart/form-data', titlePart) })).status).toBe(
    400,
  )
  expect((await hit('post', entries, { feed_id: feed.id }, { wallet: owner, ...formOf('multipart/mixed', contentPart) })).status).toBe(415)
  await hit('get', entries, { feed_id: feed.id })
  await hit('get', `${entries}?page_token=forged`, { feed_id: feed.id })
  await hit('get', `${entries}?is_free=maybe`, { feed_id: feed.id })
  const entry = `${entries}/{entry_id}`
  await hit('get', entry, { feed_id: feed.id, entry_id: free.id })
  const challenge = await hit('get', entry, { feed_id: feed.id, entry_id: paid.id })
  expect(challenge.status).toBe(402)
  await hit('get', entry, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner })
  await hit(
    'get',
    entry,
    { feed_id: feed.id, entry_id: paid.id },
    { headers: { 'x-wallet-address': owner.address, 'x-signature': '0x00', 'x-message': 'm', 'x-timestamp': '1' } },
  )
  await hit('get', entry, { feed_id: feed.id, entry_id: paid.id }, { headers: { 'x-payment': 'not-base64-json' } })
  await hit('get', entry, { feed_id: feed.id, entry_id: UNKNOWN })
  await hit(
    'patch',
    entry,
    { feed_id: feed.id, entry_id: paid.id },
    { wallet: owner, body: { title: 'Renamed', price: { amount: '2600', currency: 'USDC' } } },
  )
  const cheaper = { wallet: owner, body: { price: { amount: '1000', currency: 'USDC' } } }
  expect((await hit('patch', entry, { feed_id: feed.id, entry_id: paid.id }, cheaper)).headers.get('trellis-warning')).toBeTruthy()
  await hit(
    'patch',
    entry,
    { feed_id: feed.id, entry_id: paid.id },
    { wallet: owner, body: { price: { amount: '2600', currency: 'USDC' } } },
  )
  await hit('patch', entry, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner, body: { content_base64: b64('new') } })
  await hit(
    'patch',
    entry,
    { feed_id: feed.id, entry_id: free.id },
    { wallet: owner, body: { is_free: false, price: { amount: '1', currency: 'USDC' } } },
  )
  await hit('patch', entry, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner, body: { expires_at: 1 } })
  await hit('patch', entry, { feed_id: feed.id, entry_id: paid.id }, { wallet: stranger, body: { title: 'x' } })
  await hit('patch', entry, { feed_id: feed.id, entry_id: UNKNOWN }, { wallet: owner, body: { title: 'x' } })
  await hit('patch', entry, { feed_id: feed.id, entry_id: paid.id }, { body: { title: 'x' } })
  await hit('get', entry, { feed_id: feed.id, entry_id: 'nope' })
  const content = `${entry}/content`
  await hit('get', content, { feed_id: feed.id, entry_id: free.id })
  await hit('get', content, { feed_id: feed.id, entry_id: free.id }, { headers: { range: 'bytes=1-2' } })
  await hit('get', content, { feed_id: feed.id, entry_id: free.id }, { headers: { range: 'bytes=500-' } })
  await hit('get', content, { feed_id: feed.id, entry_id: free.id }, { headers: { 'if-none-match': `"${free.cid}"` } })
  await hit('get', content, { feed_id: feed.id, entry_id: paid.id })
  await hit('get', content, { feed_id: feed.id, entry_id: paid.id }, await signedBy(owner))
  await hit('get', content, { feed_id: UNKNOWN, entry_id: paid.id })

  // Access links
  const linkPath = `${entry}/access-link`
  await hit('post', linkPath, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner, body: { expires_at: 1 } })
  await hit('post', linkPath, { feed_id: feed.id, entry_id: paid.id }, { wallet: stranger, body: {} })
  await hit('post', linkPath, { feed_id: feed.id, entry_id: UNKNOWN }, { wallet: owner, body: {} })
  await hit('post', linkPath, { feed_id: feed.id, entry_id: paid.id }, { body: {} })
  const link = (
    await hit('post', linkPath, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner, body: { max_uses: 5, description: 'walk' } })
  ).body
  const links = `${entry}/access-links`
  await hit('get', links, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner })
  await hit('get', links, { feed_id: feed.id, entry_id: paid.id }, { wallet: stranger })
  await hit('get', `${links}?page_token=forged`, { feed_id: feed.id, entry_id: paid.id }, { wallet: owner })
  await hit('get', '/v1/access/{token}', { token: link.access_token })
  await hit('get', '/v1/access/{token}', { token: link.access_token }, { headers: { range: 'bytes=0-1' } })
  await hit('get', '/v1/access/{token}', { token: `${link.access_token}x` })
  await hit('delete', '/v1/access-links/{id}', { id: link.id }, { wallet: stranger })
  await hit('delete', '/v1/access-links/{id}', { id: UNKNOWN }, { wallet: owner })
  await hit('delete', '/v1/access-links/{id}', { id: link.id }, { wallet: owner })
  await hit('get', '/v1/access/{token}', { token: link.access_token })

  // Wallets
  const walletId = feed.owner_id
  await hit('get', '/v1/wallets/address/{address}', { address: owner.address })
  await hit('get', '/v1/wallets/address/{address}', { address: stranger.address })
  await hit('get', '/v1/wallets/address/{address}', { address: 'nope' })
  await hit('get', '/v1/wallets/{wallet_id}', { wallet_id: walletId })
  await hit('get', '/v1/wallets/{wallet_id}', { wallet_id: 'nope' })
  await hit('get', '/v1/wallets/{wallet_id}', { wallet_id: UNKNOWN })
  await hit('get', '/v1/wallets/{wallet_id}/stats', { wallet_id: walletId })
  await hit('get', '/v1/wallets/{wallet_id}/stats', { wallet_id: UNKNOWN })
  await hit('patch', '/v1/wallets/{wallet_id}', { wallet_id: walletId }, { wallet: owner, body: { username: 'walker' } })
  await hit('patch', '/v1/wallets/{wallet_id}', { wallet_id: walletId }, { wallet: owner, body: { username: '!' } })
  await hit('patch', '/v1/wallets/{wallet_id}', { wallet_id: walletId }, { wallet: stranger, body: { username: 'thief' } })
  const limitedId = (await call(app, 'GET', `/v1/wallets/address/${limited.address}`)).body.id
  await hit('patch', '/v1/wallets/{wallet_id}', { wallet_id: limitedId }, { wallet: limited, body: { username: 'WALKER' } })
  await hit('patch', '/v1/wallets/{wallet_id}', { wallet_id: walletId }, { body: {} })
  const analytics = '/v1/wallets/{wallet_id}/analytics'
  expect((await hit('get', analytics, { wallet_id: walletId }, { wallet: owner })).status).toBe(200)
  await hit('get', `${analytics}?interval=month&from=1700000000&to=1767225600`, { wallet_id: walletId }, { wallet: owner })
  await hit('get', `${analytics}?interval=hour`, { wallet_id: walletId }, { wallet: owner })
  await hit('get', `${analytics}?from=0`, { wallet_id: walletId }, { wallet: owner }) // too many days
  await hit('get', `${analytics}?from=soon`, { wallet_id: walletId }, { wallet: owner })
  await hit('get', analytics, { wallet_id: walletId }, { wallet: stranger })
  await hit('get', analytics, { wallet_id: UNKNOWN }, { wallet: owner })
  await hit('get', analytics, { wallet_id: walletId })

  // Categories
  const admin = { 'admin-api-key': ADMIN_KEY }
  await hit('get', '/v1/categories', {})
  await hit('get', '/v1/categories?page_token=forged', {})
  const category = (await hit('post', '/v1/categories', {}, { headers: admin, body: { name: 'Walking' } })).body
  await hit('post', '/v1/categories', {}, { headers: admin, body: { name: 'walking' } })
  await hit('post', '/v1/categories', {}, { headers: admin, body: { name: '' } })
  await hit('post', '/v1/categories', {}, { body: { name: 'No key' } })
  await hit('get', '/v1/categories/{category_id}', { category_id: category.id })
  await hit('get', '/v1/categories/{category_id}', { category_id: UNKNOWN })
  await hit('get', '/v1/categories/{category_id}', { category_id: 'nope' })
  await hit('patch', '/v1/categories/{category_id}', { category_id: category.id }, { headers: admin, body: { description: 'on foot' } })
  await hit('patch', '/v1/categories/{category_id}', { category_id: UNKNOWN }, { headers: admin, body: { description: 'x' } })

  // Leaderboards
  for (const board of ['most-popular', 'top-revenue', 'top-providers', 'top-buyers']) {
    await hit('get', `/v1/leaderboards/${board}`, {})
    await hit('get', `/v1/leaderboards/${board}?period=7d&page_size=5`, {})
    await hit('get', `/v1/leaderboards/${board}?period=week`, {})
  }
  for (const board of ['trending', 'top-feeds', 'category-stats', 'recent-entries']) await hit('get', `/v1/leaderboards/${board}`, {})
  await hit('get', '/v1/leaderboards/top-feeds?page_size=0', {})
  await hit('get', '/v1/leaderboards/recent-entries?page_token=forged', {})

  // Feeds for readers
  for (const format of ['feed.xml', 'feed.atom', 'feed.json']) {
    await hit('get', `/v1/feeds/{feed_id}/${format}`, { feed_id: feed.id })
    await hit('get', `/v1/feeds/{feed_id}/${format}`, { feed_id: UNKNOWN })
    await hit('get', `/v1/feeds/{feed_id}/${format}`, { feed_id: 'nope' })
    const etag = (await call(app, 'GET', `/v1/feeds/${feed.id}/${format}`)).headers.get('etag')!
    await hit('get', `/v1/feeds/{feed_id}/${format}`, { feed_id: feed.id }, { headers: { 'if-none-match': etag } })
  }

  // Passes
  const pass = '/v1/feeds/{feed_id}/pass'
  const terms = { price: { amount: '5000000', currency: 'USDC' }, duration_s: 2_592_000, description: '30 days' }
  await hit('get', pass, { feed_id: feed.id })
  await hit('put', pass, { feed_id: feed.id }, { wallet: owner, body: { ...terms, duration_s: 59 } })
  await hit('put', pass, { feed_id: feed.id }, { wallet: owner, body: { ...terms, price: { amount: '0' } } })
  await hit('put', pass, { feed_id: feed.id }, { wallet: stranger, body: terms })
  await hit('put', pass, { feed_id: feed.id }, { body: terms })
  await hit('put', pass, { feed_id: UNKNOWN }, { wallet: owner, body: terms })
  const cheapPass = { wallet: owner, body: { ...terms, price: { amount: '1000', currency: 'USDC' } } }
  expect((await hit('put', pass, { feed_id: feed.id }, cheapPass)).body.price_warning?.code).toBe('price_below_settlement_cost')
  await hit('put', pass, { feed_id: feed.id }, { wallet: owner, body: terms })
  await hit('get', pass, { feed_id: feed.id })
  await hit('get', '/v1/feeds/{feed_id}', { feed_id: feed.id })
  await hit('delete', pass, { feed_id: feed.id }, { wallet: stranger })
  await hit('delete', pass, { feed_id: feed.id }, { wallet: owner })
  await hit('delete', pass, { feed_id: feed.id }, { wallet: owner })
  await hit('put', pass, { feed_id: feed.id }, { wallet: owner, body: terms })
  const purchases = '/v1/feeds/{feed_id}/pass/purchases'
  await hit('post', purchases, { feed_id: feed.id }, {})
  await hit('post', purchases, { feed_id: feed.id }, { headers: { 'x-payment': 'not a payment' } })
  await hit('post', purchases, { feed_id: UNKNOWN }, {})
  await hit('get', `/v1/passes?holder=${owner.address}`, {}, { wallet: owner })
  await hit('get', `/v1/passes?holder=${owner.address}`, {}, { wallet: stranger })
  await hit('get', `/v1/passes?holder=${owner.address}&page_token=forged`, {}, { wallet: owner })
  // A holder's private feed URL (the owner holds one without a pass), what it reads, and its revocation
  const feedUrl = '/v1/feeds/{feed_id}/pass/feed-url'
  await hit('post', feedUrl, { feed_id: feed.id }, {})
  await hit('post', feedUrl, { feed_id: feed.id }, { wallet: stranger })
  await hit('post', feedUrl, { feed_id: UNKNOWN }, { wallet: owner })
  const token = /\/pass-feeds\/([^/]+)\//.exec((await hit('post', feedUrl, { feed_id: feed.id }, { wallet: owner })).body.url)![1]!
  for (const format of ['feed.xml', 'feed.atom', 'feed.json']) {
    const etag = (await hit('get', `/v1/pass-feeds/{token}/${format}`, { token })).headers.get('etag')!
    await hit('get', `/v1/pass-feeds/{token}/${format}`, { token }, { headers: { 'if-none-match': etag } })
    await hit('get', `/v1/pass-feeds/{token}/${format}`, { token: 'nope' })
  }
  const enclosure = '/v1/pass-feeds/{token}/entries/{entry_id}/content'
  await hit('get', enclosure, { token, entry_id: free.id })
  await hit('get', enclosure, { token, entry_id: free.id }, { headers: { range: 'bytes=0-3' } })
  await hit('get', enclosure, { token, entry_id: free.id }, { headers: { range: 'bytes=999-' } })
  await hit('get', enclosure, { token, entry_id: 'nope' })
  await hit('get', enclosure, { token, entry_id: UNKNOWN })
  await hit('delete', feedUrl, { feed_id: feed.id }, { wallet: stranger })
  await hit('delete', feedUrl, { feed_id: feed.id }, { wallet: owner })
  await hit('get', '/v1/pass-feeds/{token}/feed.json', { token })

  // Discovery
  await hit('get', '/.well-known/x402', {})
  await hit('get', '/discovery/resources', {})
  await hit('get', '/discovery/resources?limit=1&offset=1&type=http', {})
  await hit('get', '/discovery/resources?limit=0', {})
  await hit('get', '/x402/v2/discovery/resources', {})
  await hit('get', '/discovery/resources?x402Version=2', {})
  await hit('get', '/discovery/resources?x402Version=3', {})
  await hit('get', '/x402/v2/discovery/resources?network=eip155:8453', {})
  await hit('get', '/x402/v2/discovery/resources?payTo=0x0', {})
  await hit('get', `/x402/v2/discovery/resources?payTo=${owner.address}`, {})
  await hit('get', '/x402/v2/discovery/resources?type=mcp', {})
  await hit('get', '/discovery/search?query=weather', {})
  await hit('get', '/discovery/search?query=weather&limit=1&type=http', {})
  await hit('get', '/discovery/search', {})
  await hit('get', '/discovery/search?query=weather&cursor=forged', {})

  // MCP (Streamable HTTP): JSON-RPC answers, and the transport's own refusals
  const mcp = (body: string, accept = 'application/json, text/event-stream') => ({ rawBody: body, headers: { accept } })
  await hit('post', '/mcp', {}, mcp('{"jsonrpc":"2.0","id":1,"method":"tools/list"}'))
  await hit(
    'post',
    '/mcp',
    {},
    mcp(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'search_feeds', arguments: { text: 'walk' } } })),
  )
  await hit(
    'post',
    '/mcp',
    {},
    mcp(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: 'get_entry', arguments: { feed_id: feed.id, entry_id: 'nope' } },
      }),
    ),
  )
  await hit('post', '/mcp', {}, mcp('{"jsonrpc":"2.0","method":"notifications/initialized"}'))
  await hit('post', '/mcp', {}, mcp('{"jsonrpc":'))
  await hit('post', '/mcp', {}, mcp('{"jsonrpc":"2.0","id":4,"method":"tools/list"}', 'application/json'))
  await hit('post', '/mcp', {}, { rawBody: 'x'.repeat(300 * 1024), headers: { accept: 'application/json, text/event-stream' } })
  await hit('post', '/mcp', {}, { rawBody: '{}', headers: { accept: 'application/json, text/event-stream', 'content-type': 'text/plain' } })
  await hit('get', '/mcp', {})
  await hit('delete', '/mcp', {})

  // Transactions
  await hit('get', '/v1/transactions', {})
  await hit('get', '/v1/transactions?payer=nope', {})
  await hit('get', '/v1/transactions?page_token=forged', {})
  await hit('get', '/v1/transactions/{id}', { id: `tx_${UNKNOWN}` })
  await hit('get', '/v1/transactions/{id}', { id: 'nope' })
  await hit('get', '/v1/transactions/hash/{hash}', { hash: `0x${'ab'.repeat(32)}` })
  await hit('get', '/v1/transactions/hash/{hash}', { hash: '0x12' })

  // Takedowns (admin), and what a taken-down feed and entry answer
  const downFeed = await createFeed(app, owner, { name: 'taken down' })
  const downEntry = await createEntry(app, owner, downFeed.id, { content_base64: b64('down'), mime_type: 'text/plain' })
  const downLink = (await call(app, 'POST', `/v1/feeds/${downFeed.id}/entries/${downEntry.id}/access-link`, { wallet: owner, body: {} }))
    .body
  await hit('post', '/v1/admin/entries/{entry_id}/takedown', { entry_id: downEntry.id }, { headers: admin, body: { reason: 'walk' } })
  await hit('post', '/v1/admin/entries/{entry_id}/takedown', { entry_id: downEntry.id }, { headers: admin, body: { reason: 'again' } })
  await hit('post', '/v1/admin/entries/{entry_id}/takedown', { entry_id: UNKNOWN }, { headers: admin, body: { reason: 'walk' } })
  await hit('post', '/v1/admin/entries/{entry_id}/takedown', { entry_id: downEntry.id }, { headers: admin, body: { reason: '' } })
  await hit('post', '/v1/admin/entries/{entry_id}/takedown', { entry_id: downEntry.id }, { body: { reason: 'no key' } })
  await hit('get', '/v1/feeds/{feed_id}/entries/{entry_id}', { feed_id: downFeed.id, entry_id: downEntry.id })
  await hit('get', '/v1/feeds/{feed_id}/entries/{entry_id}/content', { feed_id: downFeed.id, entry_id: downEntry.id })
  await hit('get', '/v1/access/{token}', { token: downLink.access_token })
  await hit('post', '/v1/admin/entries/{entry_id}/reinstate', { entry_id: downEntry.id }, { headers: admin })
  await hit('post', '/v1/admin/entries/{entry_id}/reinstate', { entry_id: downEntry.id }, { headers: admin, body: { reason: 'again' } })
  await hit('post', '/v1/admin/feeds/{feed_id}/takedown', { feed_id: downFeed.id }, { headers: admin, body: { reason: 'walk' } })
  await hit('post', '/v1/admin/feeds/{feed_id}/takedown', { feed_id: 'nope' }, { headers: admin, body: { reason: 'walk' } })
  await hit('get', '/v1/feeds/{feed_id}', { feed_id: downFeed.id })
  await hit('get', '/v1/feeds/{feed_id}/entries', { feed_id: downFeed.id })
  await hit('patch', '/v1/feeds/{feed_id}', { feed_id: downFeed.id }, { wallet: owner, body: { is_active: true } })
  await hit('get', '/v1/feeds/{feed_id}/feed.xml', { feed_id: downFeed.id })
  await hit('get', '/v1/admin/takedowns', {}, { headers: admin })
  await hit('get', '/v1/admin/takedowns?state=all&page_size=1', {}, { headers: admin })
  await hit('get', '/v1/admin/takedowns?state=gone', {}, { headers: admin })
  await hit('get', '/v1/admin/takedowns?page_token=forged', {}, { headers: admin })
  await hit('get', '/v1/admin/takedowns', {})
  await hit('post', '/v1/admin/feeds/{feed_id}/reinstate', { feed_id: downFeed.id }, { headers: admin, body: { reason: 'walked' } })
  await hit('post', '/v1/admin/feeds/{feed_id}/reinstate', { feed_id: UNKNOWN }, { headers: admin })

  // Webhooks
  const hook = (
    await hit('post', '/v1/webhooks', {}, { wallet: owner, body: { url: 'https://127.0.0.1:9/sales', events: ['sale.recorded'] } })
  ).body
  await hit('post', '/v1/webhooks', {}, { wallet: owner, body: { url: 'http://127.0.0.1/' } })
  await hit('post', '/v1/webhooks', {}, { wallet: owner, body: { url: 'https://user:pw@127.0.0.1/' } })
  await hit('post', '/v1/webhooks', {}, { body: { url: 'https://127.0.0.1/' } })
  for (let i = 0; i < 4; i++) await call(app, 'POST', '/v1/webhooks', { wallet: limited, body: { url: `https://127.0.0.1:9/${i}` } })
  await call(app, 'POST', '/v1/webhooks', { wallet: limited, body: { url: 'https://127.0.0.1:9/4' } })
  await hit('post', '/v1/webhooks', {}, { wallet: limited, body: { url: 'https://127.0.0.1:9/6' } })
  await hit('get', '/v1/webhooks', {}, { wallet: owner })
  await hit('get', '/v1/webhooks', {})
  await hit('post', '/v1/webhooks/{webhook_id}/test', { webhook_id: hook.id }, { wallet: owner }) // nothing listens: 200, not delivered
  await hit('post', '/v1/webhooks/{webhook_id}/test', { webhook_id: hook.id }, { wallet: stranger })
  await hit('post', '/v1/webhooks/{webhook_id}/test', { webhook_id: UNKNOWN }, { wallet: owner })
  await hit('post', '/v1/webhooks/{webhook_id}/test', { webhook_id: 'nope' }, { wallet: owner })
  await hit('post', '/v1/webhooks/{webhook_id}/test', { webhook_id: hook.id }, {})
  // The 6th test of a minute: 429.
  for (let i = 0; i < 5; i++) await hit('post', '/v1/webhooks/{webhook_id}/test', { webhook_id: hook.id }, { wallet: owner })
  await hit('get', '/v1/webhooks/{webhook_id}/deliveries', { webhook_id: hook.id }, { wallet: owner })
  await hit('get', '/v1/webhooks/{webhook_id}/deliveries', { webhook_id: hook.id }, { wallet: stranger })
  await hit('get', '/v1/webhooks/{webhook_id}/deliveries?page_token=forged', { webhook_id: hook.id }, { wallet: owner })
  await hit('get', '/v1/webhooks/{webhook_id}/deliveries', { webhook_id: UNKNOWN }, { wallet: owner })
  await hit('delete', '/v1/webhooks/{webhook_id}', { webhook_id: hook.id }, { wallet: stranger })
  await hit('delete', '/v1/webhooks/{webhook_id}', { webhook_id: hook.id }, { wallet: owner })
  await hit('delete', '/v1/webhooks/{webhook_id}', { webhook_id: hook.id }, { wallet: owner })
  await hit('delete', '/v1/webhooks/{webhook_id}', { webhook_id: 'nope' }, { wallet: owner })

  // WebSub
  const websub = (fields: Record<string, string>) => ({
    rawBody: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  })
  const subscription = {
    'hub.mode': 'subscribe',
    'hub.topic': `${app.url}/v1/feeds/${feed.id}/feed.atom`,
    'hub.callback': 'https://127.0.0.1:9/cb',
  }
  expect((await hit('post', '/v1/websub', {}, websub(subscription))).status).toBe(202)
  await hit('post', '/v1/websub', {}, { body: { ...subscription, 'hub.mode': 'unsubscribe' } })
  await hit('post', '/v1/websub', {}, websub({ ...subscription, 'hub.mode': 'publish' }))
  await hit('post', '/v1/websub', {}, websub({ ...subscription, 'hub.topic': `${app.url}/v1/feeds/${UNKNOWN}/feed.json` }))
  await hit('post', '/v1/websub', {}, websub({ ...subscription, 'hub.secret': 'x'.repeat(300) }))
  await hit('post', '/v1/websub', {}, { rawBody: '{"hub.mode":', headers: { 'content-type': 'application/json' } })
  await hit('post', '/v1/websub', {}, { rawBody: 'x'.repeat(9_000) })

  // Deletes last: the entry, then its feed, then a write to the deleted feed.
  await hit('delete', entry, { feed_id: feed.id, entry_id: free.id }, { wallet: stranger })
  await hit('delete', entry, { feed_id: feed.id, entry_id: free.id }, { wallet: owner })
  await hit('delete', entry, { feed_id: feed.id, entry_id: UNKNOWN }, { wallet: owner })
  await hit('get', entry, { feed_id: feed.id, entry_id: free.id })
  await hit('delete', '/v1/feeds/{feed_id}', { feed_id: feed.id }, { wallet: stranger })
  await hit('delete', '/v1/feeds/{feed_id}', { feed_id: feed.id }, { wallet: owner })
  await hit('delete', '/v1/feeds/{feed_id}', { feed_id: UNKNOWN }, { wallet: owner })
  await hit('post', entries, { feed_id: feed.id }, { wallet: owner, body: { content_base64: b64('late'), mime_type: 'text/plain' } })

  expect(problems).toEqual([])
  const documented = Object.entries<any>(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method} ${path}`))
  expect(documented.filter((op) => !seen.has(op))).toEqual([])
})
