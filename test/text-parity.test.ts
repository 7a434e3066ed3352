// Text answers the same on both engines. Two real servers, side by side: one embedded (SQLite, which compares text by
// its bytes and folds A-Z only), one on a PostgreSQL database whose default collation is ICU's en-US (where 'a' < 'B'
// < 'é' < 'Z' and lower() folds every letter), made on a cluster of this test's own (or the suite's). The same
// requests to each get the same answers: list order and its pages, search, tag filters, uniqueness. And a NUL
// (U+0000), which PostgreSQL's text cannot hold, in any text a request carries (every string of a body, query or path
// the OpenAPI document lists) is refused alike on both, never a 500.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { databaseUrl, postgresForTest } from '../dev/test-database.ts'
import { authHeaders, call, createEntry, createFeed, newWallet, type Reply, type Wallet } from '../dev/api.ts'

const ADMIN_KEY = 'text-parity-admin-key-0123456789abcdef'
const asAdmin = { 'admin-api-key': ADMIN_KEY }

let postgres: Awaited<ReturnType<typeof postgresForTest>>
let admin: SQL
let icuDatabase: string
let embedded: TestServer
let onIcu: TestServer
const engines = () =>
  [
    ['sqlite', embedded.url],
    ['postgres', onIcu.url],
  ] as const

beforeAll(async () => {
  postgres = await postgresForTest()
  admin = new SQL(postgres.adminUrl, { max: 1 })
  const [{ icu }] = await admin`SELECT EXISTS (SELECT 1 FROM pg_collation WHERE collprovider = 'i') AS icu`
  if (!icu)
    throw new Error(
      'this PostgreSQL was built without ICU: no database with a non-bytewise default collation can ' +
        'be made here (the machine has only the C locales)',
    )
  icuDatabase = `text_icu_${process.pid}_${crypto.randomUUID().replaceAll('-', '').slice(0, 8)}`
  await admin.unsafe(`CREATE DATABASE "${icuDatabase}" TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'en-US'`)
  embedded = await startTestServer({ TRELLIS_ADMIN_KEY: ADMIN_KEY }, { embedded: true })
  onIcu = await startTestServer({ TRELLIS_ADMIN_KEY: ADMIN_KEY, TRELLIS_DATABASE_URL: databaseUrl(postgres.adminUrl, icuDatabase) })
}, 120_000)

afterAll(async () => {
  await embedded?.dispose()
  await onIcu?.dispose()
  if (icuDatabase) await admin.unsafe(`DROP DATABASE IF EXISTS "${icuDatabase}" WITH (FORCE)`)
  await admin?.close()
  await postgres?.stop()
})

/** UTF-8 byte order (SQLite's BINARY), the order every text column keeps on both engines. */
const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b))

/** Every page of GET /v1/categories (page_size 3, so cursors are used), as names. */
async function categoryNames(url: string, query = ''): Promise<{ names: string[]; pages: number }> {
  const names: string[] = []
  let token: string | null = null
  let pages = 0
  do {
    const reply: Reply = await call(
      url,
      'GET',
      `/v1/categories?page_size=3${query}${token ? `&page_token=${encodeURIComponent(token)}` : ''}`,
    )
    expect(reply.status).toBe(200)
    names.push(...reply.body.data.map((c: { name: string }) => c.name))
    token = reply.body.pagination.next_page_token
    pages++
  } while (token)
  return { names, pages }
}

const NAMES = ['B', 'a', 'é', 'Z', '_x', 'Ä', 'ab', 'a b', 'b2', 'zb', 'éb']
const TAGS = ['B', 'a', 'é', 'É', 'Z', '_x', 'ä']

/** The same requests to one server: what each answered (names, never ids, which differ between the two). */
async function textAnswers(url: string) {
  const seen: Record<string, unknown> = {}
  for (const name of NAMES) expect((await call(url, 'POST', '/v1/categories', { headers: asAdmin, body: { name } })).status).toBe(201)
  // Unique by lower case: each of these is taken on both engines.
  seen.taken = await Promise.all(
    ['b', 'É', 'z', 'ä', 'AB', 'A B', '_X'].map(async (name) => {
      const reply = await call(url, 'POST', '/v1/categories', { headers: asAdmin, body: { name } })
      return [name, reply.status, reply.body.code]
    }),
  )
  seen.free = (await call(url, 'POST', '/v1/categories', { headers: asAdmin, body: { name: 'e' } })).status // 'é' does not take 'e'
  seen.list = await categoryNames(url)
  seen.search = Object.fromEntries(
    await Promise.all(
      ['a', 'A', '_', '_X', 'É', 'é', 'a b', '%', 'b', 'e'].map(async (search) => [
        search,
        (await categoryNames(url, `&search=${encodeURIComponent(search)}`)).names,
      ]),
    ),
  )

  const owner = newWallet()
  const feeds = new Map<string, string>()
  for (const tag of TAGS) feeds.set((await createFeed(url, owner, { name: `feed ${tag}`, tags: [tag] })).id, tag)
  const ownerId = (await call(url, 'GET', `/v1/wallets/address/${owner.address}`)).body.id
  seen.tags = Object.fromEntries(
    await Promise.all(
      ['b', 'B', 'é', 'É', 'z', '_X', 'ä', 'Ä', 'A', 'a,Z'].map(async (tags) => {
        const reply = await call(url, 'GET', `/v1/feeds?owner_id=${ownerId}&tags=${encodeURIComponent(tags)}&page_size=100`)
        expect(reply.status).toBe(200)
        return [tags, reply.body.data.map((f: { name: string }) => f.name)]
      }),
    ),
  )

  // Feeds of a category named in any case; the category-stats board lists categories by revenue, then name.
  const categories = (await call(url, 'GET', '/v1/categories?page_size=100')).body.data as { id: string; name: string }[]
  const other = newWallet()
  const inAcute = await createFeed(url, other, { name: 'in é', category_id: categories.find((c) => c.name === 'é')!.id })
  await createEntry(url, other, inAcute.id)
  seen.category = Object.fromEntries(
    await Promise.all(
      ['é', 'É', 'e', 'E'].map(async (category) => [
        category,
        (await call(url, 'GET', `/v1/feeds?category=${encodeURIComponent(category)}`)).body.data.map((f: { name: string }) => f.name),
      ]),
    ),
  )

  const names = async (wallet: Wallet, username: string) => {
    const id = (await call(url, 'GET', `/v1/wallets/address/${wallet.address}`)).body.id
    const reply = await call(url, 'PATCH', `/v1/wallets/${id}`, { wallet, body: { username } })
    return [username, reply.status, reply.body.code ?? reply.body.username]
  }
  seen.usernames = [
    await names(owner, 'Bob1'),
    await names(other, 'bob1'),
    await names(other, 'BOB1'),
    await names(other, 'Éclair'),
    await names(other, 'Alice'),
  ]
  return seen
}

describe('text on a database whose default collation is not bytewise (ICU en-US)', () => {
  let answers: Record<string, Record<string, any>>

  beforeAll(async () => {
    // The premise: this database orders as en-US does, not as SQLite does, and folds É.
    const sql = new SQL(databaseUrl(postgres.adminUrl, icuDatabase), { max: 1 })
    try {
      const [row] = await sql`SELECT 'a' < 'B' AS a_first, lower('É') AS folded,
          (SELECT datlocprovider FROM pg_database WHERE datname = current_database()) AS provider`
      expect(row).toEqual({ a_first: true, folded: 'é', provider: 'i' })
      // Every text column of the schema the server migrated compares bytewise anyway.
      const [{ n }] = await sql`SELECT COUNT(*)::int AS n FROM information_schema.columns
          WHERE table_schema = 'public' AND data_type = 'text' AND collation_name IS DISTINCT FROM 'C'`
      expect(n).toBe(0)
    } finally {
      await sql.close()
    }
    answers = {}
    for (const [engine, url] of engines()) answers[engine] = await textAnswers(url)
  }, 120_000)

  test('the category list and its pages are in byte order of the lower-case name on both engines', () => {
    const all = [...NAMES, 'e', 'Business', 'Crypto', 'Finance', 'Games', 'Politics', 'Sports', 'Tech']
    const expected = [...all].sort((a, b) => byBytes(a.toLowerCase(), b.toLowerCase()))
    // '_' (0x5F) before the letters, 'Ä' and 'é' (0xC3 …) after 'zb'; en-US would put 'ä' after 'a' and 'é' after 'e'.
    expect([expected.slice(0, 2), expected.slice(-5)]).toEqual([
      ['_x', 'a'],
      ['Z', 'zb', 'Ä', 'é', 'éb'],
    ])
    for (const engine of ['sqlite', 'postgres'])
      expect(answers[engine]!.list).toEqual({ names: expected, pages: Math.ceil(expected.length / 3) })
  })

  test('uniqueness by lower case refuses the same names on both engines', () => {
    expect(answers.sqlite!.taken).toEqual([
      ['b', 409, 'CATEGORY_CONFLICT'],
      ['É', 409, 'CATEGORY_CONFLICT'],
      ['z', 409, 'CATEGORY_CONFLICT'],
      ['ä', 409, 'CATEGORY_CONFLICT'],
      ['AB', 409, 'CATEGORY_CONFLICT'],
      ['A B', 409, 'CATEGORY_CONFLICT'],
      ['_X', 409, 'CATEGORY_CONFLICT'],
    ])
    expect(answers.sqlite!.free).toBe(201)
    expect(answers.sqlite!.usernames).toEqual([
      ['Bob1', 200, 'Bob1'],
      ['bob1', 409, 'USERNAME_CONFLICT'],
      ['BOB1', 409, 'USERNAME_CONFLICT'],
      ['Éclair', 400, 'INVALID_USERNAME'],
      ['Alice', 200, 'Alice'],
    ])
    for (const part of ['taken', 'free', 'usernames']) expect(answers.postgres![part]).toEqual(answers.sqlite![part])
  })

  test('search: the same matches in the same order; _ and % are plain characters', () => {
    expect(answers.sqlite!.search).toMatchObject({
      _: ['_x'],
      _X: ['_x'],
      É: ['é', 'éb'],
      é: ['é', 'éb'],
      'a b': ['a b'],
      '%': [],
      e: ['Business', 'e', 'Finance', 'Games', 'Tech'],
      b: ['a b', 'ab', 'B', 'b2', 'Business', 'zb', 'éb'],
    })
    expect(answers.postgres!.search).toEqual(answers.sqlite!.search)
  })

  test('tag filters fold A-Z only, as SQL lower() does on both engines: É and é are two tags', () => {
    expect(answers.sqlite!.tags).toEqual({
      b: ['feed B'],
      B: ['feed B'],
      é: ['feed é'],
      É: ['feed É'],
      z: ['feed Z'],
      _X: ['feed _x'],
      ä: ['feed ä'],
      Ä: [],
      A: ['feed a'],
      'a,Z': ['feed Z', 'feed a'],
    })
    expect(answers.postgres!.tags).toEqual(answers.sqlite!.tags)
  })

  test('a category named in any case lists its feeds on both engines', () => {
    expect(answers.sqlite!.category).toEqual({ é: ['in é'], É: ['in é'], e: [], E: [] })
    expect(answers.postgres!.category).toEqual(answers.sqlite!.category)
  })
})

describe('a lone surrogate (no Unicode character) in text a request carries', () => {
  test('is stored as U+FFFD on both engines, in tags as in every other field (PostgreSQL refused a feed whose tags held one)', async () => {
    const answers: Record<string, unknown> = {}
    for (const [engine, url] of engines()) {
      const owner = newWallet()
      const feed = await call(url, 'POST', '/v1/feeds', {
        wallet: owner,
        rawBody: '{"name":"a\\ud800","description":"\\udc00b","tags":["\\ud800","x\\udfff"]}',
      })
      expect(feed.status).toBe(201)
      const entry = await call(url, 'POST', `/v1/feeds/${feed.body.id}/entries`, {
        wallet: owner,
        rawBody: '{"content_base64":"aGk=","mime_type":"text/plain","title":"\\ud800","metadata":"\\udbff","tags":["\\udfff"]}',
      })
      expect(entry.status).toBe(201)
      const again = (await call(url, 'GET', `/v1/feeds/${feed.body.id}/entries/${entry.body.id}`)).body
      const ownerId = feed.body.owner_id
      answers[engine] = {
        feed: [feed.body.name, feed.body.description, feed.body.tags],
        entry: [again.title, again.metadata, again.tags],
        tagged: (await call(url, 'GET', `/v1/feeds?owner_id=${ownerId}&tags=${encodeURIComponent('x\uFFFD')}`)).body.data.length,
      }
    }
    expect(answers.sqlite).toEqual({
      feed: ['a\uFFFD', '\uFFFDb', ['\uFFFD', 'x\uFFFD']],
      entry: ['\uFFFD', '\uFFFD', ['\uFFFD']],
      tagged: 1,
    })
    expect(answers.postgres).toEqual(answers.sqlite)
  })
})

// ——— NUL ———

interface Fixtures {
  owner: Wallet
  feedId: string
  entryId: string
  walletId: string
  categoryId: string
  linkId: string
}

async function fixtures(url: string): Promise<Fixtures> {
  const owner = newWallet()
  const feed = await createFeed(url, owner, { name: 'nul' })
  const entry = await createEntry(url, owner, feed.id)
  const link = await call(url, 'POST', `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`, { wallet: owner, body: {} })
  const category = await call(url, 'POST', '/v1/categories', { headers: asAdmin, body: { name: `nul ${crypto.randomUUID()}` } })
  return { owner, feedId: feed.id, entryId: entry.id, walletId: feed.owner_id, categoryId: category.body.id, linkId: link.body.id }
}

/** A valid body of each operation that takes one: a case puts NUL in one of its strings. */
const BASE_BODIES: Record<string, Record<string, unknown>> = {
  'POST /v1/auth/nonce': { wallet_address: '0x0000000000000000000000000000000000000001' },
  'POST /v1/feeds': { name: 'nul feed' },
  'PATCH /v1/feeds/{feed_id}': {},
  'POST /v1/feeds/{feed_id}/entries': { content_base64: 'aGk=', mime_type: 'text/plain', is_free: false, price: { amount: '1000' } },
  'POST /v1/feeds/{feed_id}/entries/{entry_id}/access-link': {},
  'POST /v1/categories': { name: 'nul category' },
  'PATCH /v1/categories/{category_id}': {},
  'PATCH /v1/wallets/{wallet_id}': {},
}

const NUL_TEXT = 'a\u0000b'

/** Where a string may be in a request: `query <name>`, `path <name>`, `body <dotted.path>` (`[]` for an array's items). */
interface Input {
  operation: string
  where: string
}

/** Every string input of every documented operation (a property of no declared type counts: it may be a string). */
function stringInputs(doc: any): Input[] {
  const inputs: Input[] = []
  const schemas = doc.components?.schemas ?? {}
  const walk = (schema: any, at: string, operation: string, found: Set<string>): void => {
    if (!schema) return
    if (schema.$ref) {
      walk(schemas[schema.$ref.split('/').pop()], at, operation, found)
      return
    }
    const types = [schema.type ?? []].flat()
    const combined = ['anyOf', 'oneOf', 'allOf'].some((k) => schema[k])
    if (types.includes('string') || (types.length === 0 && !combined && !schema.properties)) found.add(at)
    for (const k of ['anyOf', 'oneOf', 'allOf']) for (const s of schema[k] ?? []) walk(s, at, operation, found)
    if (schema.items) walk(schema.items, `${at}[]`, operation, found)
    for (const [name, s] of Object.entries(schema.properties ?? {})) walk(s, at ? `${at}.${name}` : name, operation, found)
  }
  for (const [path, operations] of Object.entries<any>(doc.paths)) {
    for (const [method, op] of Object.entries<any>(operations)) {
      const operation = `${method.toUpperCase()} ${path}`
      const found = new Set<string>()
      for (const p of op.parameters ?? []) if (p.in === 'query' || p.in === 'path') walk(p.schema, `${p.in} ${p.name}`, operation, found)
      const body = op.requestBody?.content?.['application/json']?.schema
      if (body) walk(body, 'body', operation, found)
      // An array of strings is tried with NUL in an item; the array's own entry (a query's union) as a plain string.
      for (const where of found) inputs.push({ operation, where })
    }
  }
  return inputs
}

/** The request that carries NUL at `input` (every other part valid), sent to `url`. */
async function sendWithNul(url: string, f: Fixtures, input: Input): Promise<Reply> {
  const [method, template] = input.operation.split(' ') as [string, string]
  const ids: Record<string, string> = {
    feed_id: f.feedId,
    entry_id: f.entryId,
    wallet_id: f.walletId,
    category_id: f.categoryId,
    id: template.startsWith('/v1/access-links') ? f.linkId : f.entryId,
    address: f.owner.address,
    hash: `0x${'0'.repeat(64)}`,
    token: 'x',
  }
  const [kind, name] = input.where.startsWith('body') ? ['body', undefined] : (input.where.split(' ') as [string, string])
  const path = template.replace(/\{(\w+)\}/g, (_, param: string) =>
    kind === 'path' && param === name ? encodeURIComponent(NUL_TEXT) : (ids[param] ?? param),
  )
  const query = kind === 'query' ? `?${name!.replace('[]', '')}=${encodeURIComponent(NUL_TEXT)}` : ''
  let body: unknown
  if (kind === 'body') {
    body = structuredClone(BASE_BODIES[input.operation] ?? {})
    const keys = input.where.slice('body'.length).split('.').filter(Boolean)
    let at = body as Record<string, unknown>
    keys.forEach((key, i) => {
      const item = key.endsWith('[]')
      const field = key.replace('[]', '')
      if (i === keys.length - 1) at[field] = item ? [NUL_TEXT] : NUL_TEXT
      else at = (at[field] ??= {}) as Record<string, unknown>
    })
  }
  const headers = { ...asAdmin, ...(method === 'GET' && !template.includes('access-links') ? {} : await authHeaders(url, f.owner)) }
  return call(url, method, `${path}${query}`, { headers, body })
}

describe('a NUL (U+0000) in any text a request carries', () => {
  let inputs: Input[]
  const replies: Record<string, Record<string, Reply>> = { sqlite: {}, postgres: {} }

  beforeAll(async () => {
    inputs = stringInputs(await (await fetch(`${embedded.url}/v1/openapi.json`)).json())
    for (const [engine, url] of engines()) {
      const f = await fixtures(url)
      for (const input of inputs) replies[engine]![`${input.operation} ${input.where}`] = await sendWithNul(url, f, input)
    }
  }, 120_000)

  test('every string input of every operation was tried (the OpenAPI document lists them)', () => {
    expect(inputs.length).toBeGreaterThan(60)
    for (const where of [
      'body.name',
      'body.tags[]',
      'body.description',
      'body.title',
      'body.metadata',
      'body.picture_url',
      'query search',
      'query tags',
      'path wallet_id',
    ]) {
      expect(
        inputs.some((i) => i.where === where),
        where,
      ).toBe(true)
    }
  })

  test('never a 500; the same status and error body on both engines', () => {
    for (const key of Object.keys(replies.sqlite!)) {
      const [sqlite, pg] = [replies.sqlite![key]!, replies.postgres![key]!]
      expect(sqlite.status, key).toBeLessThan(500)
      expect({ key, status: pg.status, body: pg.status >= 400 ? pg.body : null }).toEqual({
        key,
        status: sqlite.status,
        body: sqlite.status >= 400 ? sqlite.body : null,
      })
    }
  })

  test('text that would be stored or looked up is refused with the documented 400 of its route, naming the field', () => {
    const reply = (key: string) => replies.postgres![key]!
    // Shape B for the feed bodies.
    for (const key of ['POST /v1/feeds body.name', 'PATCH /v1/feeds/{feed_id} body.description', 'POST /v1/feeds body.tags[]']) {
      const field = key.split('body.')[1]!.replace('[]', '.0')
      expect({ key, status: reply(key).status, body: reply(key).body }).toEqual({
        key,
        status: 400,
        body: { error: 'invalid_request', message: `${field} must not contain NUL (U+0000)`, details: { field } },
      })
    }
    // Shape A, INVALID_PARAMETER, elsewhere.
    for (const [key, field] of [
      ['POST /v1/feeds/{feed_id}/entries body.title', 'title'],
      ['POST /v1/feeds/{feed_id}/entries body.metadata', 'metadata'],
      ['POST /v1/feeds/{feed_id}/entries body.tags[]', 'tags.0'],
      ['POST /v1/feeds/{feed_id}/entries/{entry_id}/access-link body.description', 'description'],
      ['POST /v1/categories body.name', 'name'],
      ['PATCH /v1/categories/{category_id} body.icon_url', 'icon_url'],
      ['GET /v1/categories query search', 'search'],
      ['GET /v1/feeds query category', 'category'],
      ['GET /v1/feeds query tags', 'tags'],
    ] as const) {
      expect({ key, status: reply(key).status, body: reply(key).body }).toEqual({
        key,
        status: 400,
        body: { error: `invalid ${field}`, code: 'INVALID_PARAMETER', details: `${field} must not contain NUL (U+0000)` },
      })
    }
    expect(reply('PATCH /v1/wallets/{wallet_id} body.picture_url').body).toEqual({
      error: 'invalid picture_url',
      code: 'INVALID_PICTURE_URL',
      details: 'picture_url must be a valid http or https URL',
    })
    expect(reply('POST /v1/feeds/{feed_id}/entries body.mime_type').status).toBe(400)
    expect(reply('POST /v1/feeds/{feed_id}/entries body.mime_type').body.code).toBe('UNSUPPORTED_MIME_TYPE')
  })

  test('nothing was stored by a refused request: the feed and its entries are as they were', async () => {
    for (const [, url] of engines()) {
      const mine = (await call(url, 'GET', '/v1/feeds?min_entries=0&page_size=100')).body.data.filter((f: { name: string }) =>
        f.name.includes('\u0000'),
      )
      expect(mine).toEqual([])
    }
  })
})
