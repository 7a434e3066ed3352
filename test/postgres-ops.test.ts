// The data commands on PostgreSQL, as an operator runs them: an embedded instance moved over with
// `migrate-to-postgres` serves the same market, byte for byte, and verifies clean; a backup of a PostgreSQL instance
// (taken while it serves) restores into another PostgreSQL database and into an embedded data directory alike; a
// restore into a database that holds a market is refused; the key moves with the records.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { SQL } from 'bun'
import { readFileSync, rmSync, writeFileSync } from 'node:fs'
import { startTestServer, tempDir, trellis, type TestServer } from '../dev/server.ts'
import { TEST_POSTGRES, emptyDatabase, postgresForTest } from '../dev/test-database.ts'
import { withRecords } from '../dev/records-sql.ts'
import { b64, call, createEntry, createFeed, expectError, newWallet } from '../dev/api.ts'

// PostgreSQL's data commands: run once, in the PostgreSQL pass.
describe.skipIf(!TEST_POSTGRES)("PostgreSQL's data commands", () => {
  let postgres: Awaited<ReturnType<typeof postgresForTest>>
  const servers: TestServer[] = []
  const dirs: string[] = []
  const dir = (prefix: string) => {
    const path = tempDir(prefix)
    dirs.push(path)
    return path
  }
  beforeAll(async () => {
    postgres = await postgresForTest()
  })
  afterAll(async () => {
    for (const server of servers) await server.dispose()
    for (const path of dirs) rmSync(path, { recursive: true, force: true })
    await postgres.stop()
  })

  /** What clients see: the feeds (every page), each feed's entries, each free entry's bytes, a wallet's stats, the ledger. */
  async function marketOf(url: string, owner: string) {
    const feeds = (await call(url, 'GET', '/v1/feeds?page_size=100')).body.data
    const entries: Record<string, unknown[]> = {}
    const bytes: Record<string, string> = {}
    for (const feed of feeds) {
      entries[feed.id] = (await call(url, 'GET', `/v1/feeds/${feed.id}/entries?page_size=100`)).body.data
      for (const e of entries[feed.id] as Array<{ id: string; is_free: boolean }>) {
        if (e.is_free)
          bytes[e.id] = Buffer.from(await (await fetch(`${url}/v1/feeds/${feed.id}/entries/${e.id}/content`)).arrayBuffer()).toString(
            'base64',
          )
      }
    }
    const wallet = (await call(url, 'GET', `/v1/wallets/${owner}`)).body
    const ledger = (await call(url, 'GET', '/v1/transactions?page_size=100')).body.data
    return { feeds, entries, bytes, wallet, ledger }
  }

  async function seed(server: TestServer) {
    const owner = newWallet()
    const feed = await createFeed(server.url, owner, { name: 'moved', tags: ['Moving', 'pg'] })
    const big = globalThis.crypto.getRandomValues(new Uint8Array(3 * 1024 * 1024)) // several blocks
    const free = await createEntry(server.url, owner, feed.id, { content_base64: b64(big), mime_type: 'video/mp4' })
    const paid = await createEntry(server.url, owner, feed.id, {
      content_base64: b64('paid words'),
      is_free: false,
      price: { amount: '2500000' },
    })
    await createFeed(server.url, owner, { name: 'second' })
    // Two sales as a settlement records them (payment settled, ledger row, totals, the buyer's wallet and entitlement),
    // written here since no chain runs in this test; the tallies follow from the ledger rows by the triggers.
    await withRecords(server, async (db) => {
      for (const [i, payer] of ['0x00000000000000000000000000000000000000a1', '0x00000000000000000000000000000000000000b2'].entries()) {
        const at = 1_700_000_000 + i * 86_400
        const hash = `0x${String(i + 1).padStart(64, '0')}`
        await db.run(
          `INSERT INTO wallets (id, address, address_lc, network, created_at, updated_at) VALUES (?, ?, ?, 'base-sepolia', ?, ?)`,
          [`w${i}`, payer, payer, at, at],
        )
        await db.run(
          `INSERT INTO payments (id, payer_lc, nonce, entry_id, pay_to, amount, x402_version, payload, ` +
            `requirements, valid_before, status, transaction_hash, created_at, updated_at, network)
        VALUES (?, ?, ?, ?, ?, 2500000, 2, '{}', '{}', ?, 'settled', ?, ?, ?, 'base-sepolia')`,
          [`p${i}`, payer, hash, paid.id, owner.address, at + 600, hash, at, at],
        )
        await db.run(`UPDATE entries SET total_purchases = total_purchases + 1, total_revenue = total_revenue + 2500000 WHERE id = ?`, [
          paid.id,
        ])
        await db.run(`UPDATE feeds SET total_purchases = total_purchases + 1, total_revenue = total_revenue + 2500000 WHERE id = ?`, [
          feed.id,
        ])
        await db.run(
          `INSERT INTO transactions (id, piid, payer, payer_lc, pay_to, pay_to_lc, amount, asset, entry_id, transaction_hash, created_at,
          kind, feed_id, network) VALUES (?, ?, ?, ?, ?, ?, 2500000, 'USDC', ?, ?, ?, 'entry', ?, 'base-sepolia')`,
          [`t${i}`, `p${i}`, payer, payer, owner.address, owner.address.toLowerCase(), paid.id, hash, at, feed.id],
        )
        await db.run(`INSERT INTO purchases (wallet_id, entry_id, transaction_id, created_at) VALUES (?, ?, ?, ?)`, [
          `w${i}`,
          paid.id,
          `t${i}`,
          at,
        ])
      }
    })
    return { owner: owner.address, free, paid }
  }

  describe('moving an embedded instance into PostgreSQL', () => {
    test('migrate-to-postgres moves records, content and key; the server on PostgreSQL serves the same market; ' +
      'verify is clean', async () => {
      const embedded = await startTestServer({}, { embedded: true })
      servers.push(embedded)
      const { owner } = await seed(embedded)
      const before = await marketOf(embedded.url, owner)
      const session = (await call(embedded.url, 'GET', '/v1/transactions?page_size=1')).body.pagination.next_page_token as string
      expect(session).toBeString()
      expect(before.ledger).toHaveLength(2)

      const url = await emptyDatabase(postgres.adminUrl)
      const refused = await trellis(['migrate-to-postgres', '--database-url', url], embedded.dataDir)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toContain('holds')
      await embedded.stop()

      const moved = await trellis(['migrate-to-postgres', '--database-url', url], embedded.dataDir)
      expect(moved.stderr).toStartWith('trellis migrate-to-postgres: done in')
      expect(moved.code).toBe(0)
      expect(moved.json.moved).toMatchObject({ feeds: 2, entries: 2, transactions: 2 })
      expect(moved.json.verify.ok).toBe(true)
      expect(moved.json.verify.inconsistencies).toEqual([])

      const onPostgres = await startTestServer({ TRELLIS_DATABASE_URL: url })
      servers.push(onPostgres)
      expect(await marketOf(onPostgres.url, owner)).toEqual(before)
      // The key moved: a page token the embedded server signed still reads on PostgreSQL.
      const paged = await call(onPostgres.url, 'GET', `/v1/transactions?page_size=1&page_token=${session}`)
      expect(paged.body.data).toEqual([before.ledger[1]])
      expect(paged.status).toBe(200)

      const again = await trellis(['migrate-to-postgres', '--database-url', url], embedded.dataDir)
      expect(again.code).toBe(1)
      expect(again.stderr).toContain('is not empty (it holds a market already)')
    }, 120_000)
  })

  describe('backup and restore with records in PostgreSQL', () => {
    test('a backup taken while it serves restores into another database and into a data directory, serving the same', async () => {
      const source = await startTestServer({ TRELLIS_DATABASE_URL: await emptyDatabase(postgres.adminUrl) })
      servers.push(source)
      const { owner } = await seed(source)
      const before = await marketOf(source.url, owner)
      const backupDir = `${dir('trellis-pgbackup-')}/b`
      const made = await trellis(['backup', backupDir], source.dataDir, source.recordsEnv)
      expect(made.stderr).not.toContain('rror:')
      expect(made.code).toBe(0)
      expect(made.json.counts).toMatchObject({ feeds: 2, entries: 2, transactions: 2 })

      const verified = await trellis(['verify'], source.dataDir, source.recordsEnv)
      expect(verified.json).toMatchObject({ ok: true })
      expect(verified.code).toBe(0)
      expect(verified.json.ok).toBe(true)

      const target = await emptyDatabase(postgres.adminUrl)
      const restored = await trellis(['restore', backupDir, '--database-url', target], dir('trellis-pgrestore-'))
      expect(restored.stderr).toStartWith('trellis restore: done')
      expect(restored.code).toBe(0)
      const intoPostgres = await startTestServer({ TRELLIS_DATABASE_URL: target })
      servers.push(intoPostgres)
      expect(await marketOf(intoPostgres.url, owner)).toEqual(before)

      const intoData = dir('trellis-pgrestore-embedded-')
      const embeddedRestore = await trellis(['restore', backupDir], intoData)
      expect(embeddedRestore.code).toBe(0)
      const embedded = await startTestServer({}, { dataDir: intoData, embedded: true })
      servers.push(embedded)
      expect(await marketOf(embedded.url, owner)).toEqual(before)

      const occupied = await trellis(['restore', backupDir, '--database-url', target], dir('trellis-pgrestore-'))
      expect(occupied.code).toBe(1)
      expect(occupied.stderr).toContain('is not empty (it holds a market already)')

      // Two restores into one empty database at once: one loads it, the other finds it taken.
      const contested = await emptyDatabase(postgres.adminUrl)
      const racing = await Promise.all(
        [0, 1].map(() => trellis(['restore', backupDir, '--database-url', contested], dir('trellis-pgrestore-'))),
      )
      expect(racing.map((r) => r.code).sort()).toEqual([0, 1])
      expect(racing.find((r) => r.code === 1)!.stderr).toContain('is not empty (it holds a market already)')
    }, 120_000)
  })

  describe('gc with records in PostgreSQL', () => {
    test('one collection at a time over a database, whichever instance or command runs it', async () => {
      const server = await startTestServer({ TRELLIS_DATABASE_URL: await emptyDatabase(postgres.adminUrl), TRELLIS_GC_GRACE_S: '0' })
      servers.push(server)
      await seed(server)
      // Another collection holds the lease (as a gc of another instance would) ...
      const other = new SQL(server.recordsEnv.TRELLIS_DATABASE_URL!, { max: 1 })
      const held = await other.reserve()
      expect((await held.unsafe(`SELECT pg_try_advisory_lock(hashtext('gc')) AS got`))[0].got).toBe(true)
      // ... so neither this server (the command goes through it) nor a command on another data directory collects.
      for (const dataDir of [server.dataDir, dir('trellis-pg-other-instance-')]) {
        const refused = await trellis(['gc'], dataDir, server.recordsEnv)
        expect([refused.code, refused.stderr]).toEqual([
          1,
          'trellis gc: another trellis gc is collecting from these records: run it again once that one is done\n',
        ])
      }
      await held.unsafe(`SELECT pg_advisory_unlock(hashtext('gc'))`)
      held.release()
      await other.close()
      const done = await trellis(['gc'], server.dataDir, server.recordsEnv)
      expect(done.code).toBe(0)
      expect(done.json).toMatchObject({ removed: 0, dry_run: false })
    })
  })

  describe('text an older Trellis stored with NUL (U+0000), which PostgreSQL cannot hold', () => {
    /** What a client sees of a feed and its entries: the feed, each entry, each entry's bytes and their type, a tag filter. */
    async function served(url: string, feedId: string, tag: string) {
      const feed = (await call(url, 'GET', `/v1/feeds/${feedId}`)).body
      const entries = (await call(url, 'GET', `/v1/feeds/${feedId}/entries?page_size=100`)).body.data as Array<{ id: string }>
      const content: Record<string, [string | null, string]> = {}
      for (const e of entries) {
        const reply = await fetch(`${url}/v1/feeds/${feedId}/entries/${e.id}/content`)
        content[e.id] = [reply.headers.get('content-type'), await reply.text()]
      }
      const tagged = (await call(url, 'GET', `/v1/feeds?owner_id=${feed.owner_id}&tags=${tag}`)).body.data.map((f: { id: string }) => f.id)
      return { feed, entries, content, tagged }
    }

    test('migrate-to-postgres carries a media type over as it is served, and leaves out the lookup row ' +
      'of a tag no request can ask for', async () => {
      const embedded = await startTestServer({}, { embedded: true })
      servers.push(embedded)
      const owner = newWallet()
      const feed = await createFeed(embedded.url, owner, { name: 'legacy', tags: ['keep'] })
      const html = await createEntry(embedded.url, owner, feed.id, { content_base64: b64('<b>hi</b>'), mime_type: 'text/html' })
      const plain = await createEntry(embedded.url, owner, feed.id, { content_base64: b64('hello') })
      await embedded.stop()
      // As an older Trellis accepted them: a media type with NUL (so not one: served as application/octet-stream, or
      // as its base type when that is one) and a tag with NUL (its feed_tags row holds the NUL, the feed's JSON escapes it).
      await withRecords(embedded, async (db) => {
        await db.run('UPDATE entries SET mime_type = ? WHERE id = ?', ['text/html\u0000', html.id])
        await db.run('UPDATE entries SET mime_type = ? WHERE id = ?', ['text/plain; charset=utf-8\u0000', plain.id])
        await db.run('UPDATE feeds SET tags = ? WHERE id = ?', [JSON.stringify(['keep', 'a\u0000B']), feed.id])
        expect(await db.all('SELECT tag_lc FROM feed_tags WHERE feed_id = ? ORDER BY tag_lc', [feed.id])).toEqual([
          { tag_lc: 'a\u0000b' },
          { tag_lc: 'keep' },
        ])
      })
      await embedded.restart()
      const before = await served(embedded.url, feed.id, 'keep')
      expect(before.content).toEqual({
        [html.id]: ['application/octet-stream', '<b>hi</b>'],
        [plain.id]: ['text/plain; charset=utf-8', 'hello'],
      })
      expect(before.feed.tags).toEqual(['keep', 'a\u0000B'])
      expect(before.tagged).toEqual([feed.id])
      await embedded.stop()

      const url = await emptyDatabase(postgres.adminUrl)
      const moved = await trellis(['migrate-to-postgres', '--database-url', url], embedded.dataDir)
      expect(moved.stderr).toStartWith('trellis migrate-to-postgres: done in')
      expect(moved.code).toBe(0)
      expect(moved.json.verify.ok).toBe(true)
      expect([...moved.json.changed_text].sort()).toEqual(
        [
          `entries.mime_type of the entries row id "${html.id}": stored as "application/octet-stream", the type it is served as`,
          `entries.mime_type of the entries row id "${plain.id}": stored as "text/plain", the type it is served as`,
          `feed_tags.tag_lc of the feed_tags row tag_lc "a\\u0000b", feed_id "${feed.id}": not copied (a ` +
            `tag with NUL cannot be asked for; the feed keeps it)`,
        ].sort(),
      )

      const onPostgres = await startTestServer({ TRELLIS_DATABASE_URL: url })
      servers.push(onPostgres)
      const after = await served(onPostgres.url, feed.id, 'keep')
      // The same bytes, with the same types, the same feed and tag filter; the entries' records now name the type served.
      expect(after.content).toEqual(before.content)
      expect(after.feed).toEqual(before.feed)
      expect(after.tagged).toEqual(before.tagged)
      const stored: Record<string, string> = { [html.id]: 'application/octet-stream', [plain.id]: 'text/plain' }
      expect(after.entries).toEqual(before.entries.map((e) => ({ ...e, mime_type: stored[e.id] })))
      expectError(await call(onPostgres.url, 'GET', `/v1/feeds?tags=${encodeURIComponent('a\u0000b')}`), 400, 'INVALID_PARAMETER')
    }, 120_000)

    test('any other such text refuses the move, naming each value, before anything is loaded; ' +
      '--replace-nul stores U+FFFD for each NUL', async () => {
      const embedded = await startTestServer({}, { embedded: true })
      servers.push(embedded)
      const owner = newWallet()
      const feed = await createFeed(embedded.url, owner, { name: 'named' })
      const entry = await createEntry(embedded.url, owner, feed.id, { title: 'titled' })
      await embedded.stop()
      await withRecords(embedded, async (db) => {
        await db.run('UPDATE entries SET title = ? WHERE id = ?', ['a\u0000b', entry.id])
        await db.run('UPDATE feeds SET name = ? WHERE id = ?', ['\u0000name', feed.id])
      })
      const backupDir = `${dir('trellis-nulbackup-')}/b`
      expect((await trellis(['backup', backupDir], embedded.dataDir)).code).toBe(0)

      const url = await emptyDatabase(postgres.adminUrl)
      const refused = await trellis(['migrate-to-postgres', '--database-url', url], embedded.dataDir)
      expect(refused.code).toBe(1)
      expect(refused.stderr).toBe(
        `trellis migrate-to-postgres: the data directory ${embedded.dataDir} holds 2 text values with a ` +
          `NUL character (U+0000), which PostgreSQL cannot store: ` +
          (`feeds.name of the feeds row id "${feed.id}"; entries.title of the entries row id ` +
            `"${entry.id}". Nothing was loaded. Run migrate-to-postgres again with --replace-nul `) +
          `to store each NUL as U+FFFD (�) in PostgreSQL (${embedded.dataDir} keeps them as they are), or change those values first.\n`,
      )
      const target = new SQL(url, { max: 1 })
      try {
        expect(await target`SELECT (SELECT COUNT(*) FROM feeds)::int AS feeds, (SELECT COUNT(*) FROM wallets)::int AS wallets`).toEqual([
          { feeds: 0, wallets: 0 },
        ])
      } finally {
        await target.close()
      }
      // A backup of it, restored into PostgreSQL: the same refusal, in a restore's words.
      const restoreRefused = await trellis(
        ['restore', backupDir, '--database-url', await emptyDatabase(postgres.adminUrl)],
        dir('trellis-nulrestore-'),
      )
      expect(restoreRefused.code).toBe(1)
      expect(restoreRefused.stderr).toContain(
        `trellis restore: the backup ${backupDir} holds 2 text values with a NUL character (U+0000), ` +
          `which PostgreSQL cannot store: feeds.name of the feeds row id "${feed.id}"; entries.title of ` +
          `the entries row id "${entry.id}"`,
      )
      expect(restoreRefused.stderr).toContain('Run the restore again with --replace-nul')
      expect((await trellis(['restore', backupDir, '--replace-nul'], dir('trellis-nulrestore-'))).stderr).toContain(
        '--replace-nul is for a restore into PostgreSQL',
      )

      const replaced = await trellis(['migrate-to-postgres', '--database-url', url, '--replace-nul'], embedded.dataDir)
      expect(replaced.stderr).toStartWith('trellis migrate-to-postgres: done in')
      expect(replaced.code).toBe(0)
      expect(replaced.json.changed_text).toEqual([
        `feeds.name of the feeds row id "${feed.id}": stored with U+FFFD for each NUL`,
        `entries.title of the entries row id "${entry.id}": stored with U+FFFD for each NUL`,
      ])
      const onPostgres = await startTestServer({ TRELLIS_DATABASE_URL: url })
      servers.push(onPostgres)
      expect((await call(onPostgres.url, 'GET', `/v1/feeds/${feed.id}`)).body.name).toBe('\uFFFDname')
      expect((await call(onPostgres.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}`)).body.title).toBe('a\uFFFDb')
      const restored = await trellis(
        ['restore', backupDir, '--database-url', await emptyDatabase(postgres.adminUrl), '--replace-nul'],
        dir('trellis-nulrestore-'),
      )
      expect(restored.code).toBe(0)
      expect(restored.json.changed_text).toEqual(replaced.json.changed_text)
    }, 120_000)
  })

  describe('a database that cannot be used at start', () => {
    const start = async (databaseUrl: string) => {
      const run = Bun.spawn(
        [process.execPath, 'src/main.ts', '--port', '0', '--data-dir', dir('trellis-pgfault-'), '--database-url', databaseUrl],
        { stdout: 'pipe', stderr: 'pipe' },
      )
      const [stderr, code] = await Promise.all([new Response(run.stderr).text(), run.exited])
      return { stderr, code }
    }
    const closedPort = () => {
      const probe = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
      const port = probe.port
      probe.stop(true)
      return port
    }

    test('unreachable: one line naming the URL without its password, exit 2', async () => {
      const port = closedPort()
      const { stderr, code } = await start(`postgres://trellis:s3cret-pw@127.0.0.1:${port}/market`)
      expect(code).toBe(2)
      expect(stderr).toBe(
        `trellis: cannot use PostgreSQL at postgres://trellis@127.0.0.1:${port}/market: connection ` +
          `refused (is PostgreSQL running, and listening there?)\n`,
      )
    })

    test('a database a newer Trellis migrated: refused, naming it once', async () => {
      const url = await emptyDatabase(postgres.adminUrl)
      const sql = new SQL(url, { max: 1 })
      await sql.unsafe('CREATE TABLE schema_migrations (version bigint PRIMARY KEY, name text NOT NULL, applied_at bigint NOT NULL)')
      await sql.unsafe("INSERT INTO schema_migrations VALUES (999, '999-future', 0)")
      await sql.close()
      const { stderr, code } = await start(url)
      expect(stderr).toStartWith(`trellis: the database ${url} has schema version 999, newer than this Trellis knows`)
      expect(code).toBe(1)
    })

    test('a wrong password: said so, naming the URL without the password, exit 2', async () => {
      const role = `pw_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
      const admin = new SQL(postgres.adminUrl, { max: 1 })
      try {
        // The throwaway clusters trust every local login: this role alone must give a password (the first line that
        // matches decides).
        const [{ hba_file: hba }] = await admin.unsafe('SHOW hba_file')
        writeFileSync(hba, `host all ${role} 127.0.0.1/32 scram-sha-256\n${readFileSync(hba, 'utf8')}`)
        await admin.unsafe('SELECT pg_reload_conf()')
        await admin.unsafe(`CREATE ROLE ${role} LOGIN PASSWORD 'the-right-one'`)
      } finally {
        await admin.close()
      }
      const url = new URL(await emptyDatabase(postgres.adminUrl))
      url.username = role
      url.password = 'a-wrong-one'
      const { stderr, code } = await start(url.toString())
      expect(code).toBe(2)
      expect(stderr).toBe(
        `trellis: cannot use PostgreSQL at postgres://${role}@${url.host}${url.pathname}: password authentication failed\n`,
      )
    })

    test('a missing database: said so, without the password, exit 2', async () => {
      const url = new URL(postgres.adminUrl)
      url.password = 's3cret-pw'
      url.pathname = '/no_such_market'
      const { stderr, code } = await start(url.toString())
      expect(code).toBe(2)
      expect(stderr).toContain('the database does not exist')
      expect(stderr).toContain(`postgres://postgres@${url.host}/no_such_market`)
      expect(stderr).not.toContain('s3cret')
      expect(stderr.trim().split('\n')).toHaveLength(1)
    })
  })
})
