// The records contract: what every adapter of the records port (src/store/records.ts) promises, on the real stores of
// a migrated schema. Each adapter's runner calls recordsContract with a way to open its records
// (test/records-contract-*.test.ts), as Hono's runtimes run common.case.test.ts and a blockstore runs
// interface-blockstore-tests; a third engine is done when its runner passes. What differs between adapters by design
// is an option here, never a branch on the engine.
import { afterEach, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import type { Records, Stores } from '../../src/store/stores.ts'
import type { NewEntry } from '../../src/store/entries.ts'
import { isUniqueViolation } from '../../src/lib/store-faults.ts'
import { CID } from 'multiformats/cid'
import * as raw from 'multiformats/codecs/raw'
import { sha256 } from 'multiformats/hashes/sha2'

export interface RecordsContractOptions {
  /** Names the adapter in the test names. */
  name: string
  /** Records on a migrated database; the contract closes each one it opened. */
  open: () => Promise<Records>
  /**
   * Whether two openings reach one database, as instances of a cluster do (PostgreSQL): a lease is then held by one
   * opening at a time. False where an opening is the only process (the embedded engine): every lease is granted.
   */
  sharedDatabase: boolean
  /** Whether the engine hosts content blocks beside its records (records.blockSpaces), for instances sharing them. */
  hostsBlocks: boolean
}

const now = () => Math.floor(Date.now() / 1000)
const unique = (what: string) => `${what}-${crypto.randomUUID()}`
const anAddress = () => `0x${randomBytes(20).toString('hex')}`

/** A wallet and a feed of its own, committed. */
async function aFeed(records: Records): Promise<string> {
  const feedId = unique('feed')
  await records.transact(async (tx) => {
    const owner = await tx.wallets.ensure(unique('wallet'), anAddress(), 'base-sepolia', now())
    await tx.feeds.insert({
      id: feedId,
      owner_id: owner,
      category_id: null,
      name: 'contract feed',
      description: null,
      image_cid: null,
      tags: [],
      now: now(),
    })
  })
  return feedId
}

const anEntry = (feedId: string, more: Partial<NewEntry> = {}): NewEntry => ({
  id: unique('entry'),
  feed_id: feedId,
  cid: 'bafkreicontract',
  size: 11,
  mime_type: 'text/plain',
  title: 'a title',
  description: null,
  metadata: '{"k":1}',
  tags: ['one', 'two'],
  is_free: true,
  price: 0n,
  expires_at: null,
  now: now(),
  ...more,
})

/** A sale's row in the ledger, inside `tx`: its id. */
async function aSale(
  tx: Stores,
  payer: string,
  sold: { kind: 'entry' | 'pass'; entry_id: string | null; feed_id: string | null },
  at: number,
): Promise<string> {
  const id = unique('tx')
  await tx.transactions.insert({
    id,
    piid: null,
    payer,
    pay_to: anAddress(),
    amount: 5n,
    asset: anAddress(),
    transaction_hash: `0x${randomBytes(32).toString('hex')}`,
    created_at: at,
    network: 'base-sepolia',
    ...sold,
  })
  return id
}

const aNonce = () => ({ nonce: unique('nonce'), address_lc: anAddress(), message: 'sign in', expires_at: now() + 300 })

export function recordsContract({ name, open: openRecords, sharedDatabase, hostsBlocks }: RecordsContractOptions): void {
  describe(`the records contract: ${name}`, () => {
    const opened: Records[] = []
    const open = async () => {
      const records = await openRecords()
      opened.push(records)
      return records
    }
    afterEach(async () => {
      for (const records of opened.splice(0)) await records.close()
    })

    test('transact commits all of its writes, which read then sees; one that throws keeps none and rejects with its error', async () => {
      const records = await open()
      const kept = { address: anAddress(), feed: unique('feed'), key: unique('meta') }
      const answer = await records.transact(async (tx) => {
        const owner = await tx.wallets.ensure(unique('wallet'), kept.address, 'base-sepolia', now())
        await tx.feeds.insert({
          id: kept.feed,
          owner_id: owner,
          category_id: null,
          name: 'kept',
          description: null,
          image_cid: null,
          tags: ['t'],
          now: now(),
        })
        await tx.meta.set(kept.key, 'kept')
        return (await tx.feeds.byId(kept.feed))?.name // a transaction reads its own writes
      })
      expect(answer).toBe('kept')
      expect((await records.read.wallets.byAddress(kept.address))?.total_feeds).toBe(1)
      expect(await records.read.meta.get(kept.key)).toBe('kept')

      const lost = { address: anAddress(), feed: unique('feed'), key: unique('meta') }
      const refusal = new Error('refused after three writes')
      const thrown = await records
        .transact(async (tx) => {
          const owner = await tx.wallets.ensure(unique('wallet'), lost.address, 'base-sepolia', now())
          await tx.feeds.insert({
            id: lost.feed,
            owner_id: owner,
            category_id: null,
            name: 'lost',
            description: null,
            image_cid: null,
            tags: [],
            now: now(),
          })
          await tx.meta.set(kept.key, 'overwritten')
          throw refusal
        })
        .catch((error: unknown) => error)
      expect(thrown).toBe(refusal)
      expect(await records.read.wallets.byAddress(lost.address)).toBeUndefined()
      expect(await records.read.feeds.byId(lost.feed)).toBeUndefined()
      expect(await records.read.meta.get(kept.key)).toBe('kept')
    })

    test('concurrent transactions each commit or roll back alone', async () => {
      const records = await open()
      const keys = Array.from({ length: 12 }, (_, i) => `${unique('concurrent')}-${i}`)
      const results = await Promise.allSettled(
        keys.map((key, i) =>
          records.transact(async (tx) => {
            await tx.meta.set(key, String(i))
            if (i % 4 === 1) throw new Error(`refused ${i}`)
            return i
          }),
        ),
      )
      expect(results.map((r) => (r.status === 'fulfilled' ? r.value : (r.reason as Error).message))).toEqual(
        keys.map((_, i) => (i % 4 === 1 ? `refused ${i}` : i)),
      )
      expect(await Promise.all(keys.map((key) => records.read.meta.get(key)))).toEqual(keys.map((_, i) => (i % 4 === 1 ? null : String(i))))
    })

    test('single commits its work and answers what it read after its write', async () => {
      const records = await open()
      const key = unique('claim')
      // meta.claim writes (unless there is a value) and then reads: the first claim wins, the second reads it back.
      expect(await records.single((tx) => tx.meta.claim(key, 'first'))).toBe('first')
      expect(await records.single((tx) => tx.meta.claim(key, 'second'))).toBe('first')
      expect(await records.read.meta.get(key)).toBe('first')
      const nonce = aNonce()
      await records.single((tx) => tx.nonces.insert(nonce), { durability: 'lazy', unkept: true }) // lazy may commit fully; it commits
      expect((await records.read.nonces.find(nonce.nonce))?.message).toBe('sign in')
    })

    test('a snapshot sees one moment: a commit made during it is not seen inside it, and is seen after', async () => {
      const records = await open()
      const key = unique('snapshot')
      await records.transact((tx) => tx.meta.set(key, 'before'))
      let write!: Promise<void>
      const inside = await records.snapshot(async (view) => {
        const first = await view.meta.get(key)
        write = records.transact((tx) => tx.meta.set(key, 'after'))
        // PostgreSQL commits it meanwhile; the embedded engine holds it until the snapshot ends. Neither shows it here.
        await Promise.race([write, Bun.sleep(300)])
        return [first, await view.meta.get(key)]
      })
      expect(inside).toEqual(['before', 'before'])
      await write
      expect(await records.read.meta.get(key)).toBe('after')
      expect(await records.snapshot((view) => view.meta.get(key))).toBe('after')
    })

    test('changes: the version moves once per commit and the listeners are told; a rollback moves nothing', async () => {
      const records = await open()
      expect(records.changes.live()).toBe(true)
      const start = records.changes.version()
      const heard: number[] = []
      const stop = records.changes.onChange(() => heard.push(records.changes.version()))
      const key = unique('changes')
      await records.transact((tx) => tx.meta.set(key, '1'))
      expect(records.changes.version()).toBe(start + 1)
      await records.single((tx) => tx.meta.set(key, '2'))
      expect(records.changes.version()).toBe(start + 2)
      await records
        .transact(async (tx) => {
          await tx.meta.set(key, 'rolled back')
          throw new Error('no')
        })
        .catch(() => {})
      expect(records.changes.version()).toBe(start + 2)
      expect(heard).toEqual([start + 1, start + 2]) // told after the version moved
      stop()
      await records.transact((tx) => tx.meta.set(key, '3'))
      expect(records.changes.version()).toBe(start + 3)
      expect(heard).toEqual([start + 1, start + 2]) // no longer told
    })

    test('unkept writes (nonces) commit without moving the version', async () => {
      const records = await open()
      const heard: number[] = []
      records.changes.onChange(() => heard.push(records.changes.version()))
      const start = records.changes.version()
      const [one, two, three, doomed] = [aNonce(), aNonce(), aNonce(), aNonce()]
      await records.single((tx) => tx.nonces.insert(one), { durability: 'lazy', unkept: true })
      await records.transact((tx) => tx.nonces.insert(two), { durability: 'lazy', unkept: true })
      await records.read.nonces.insert(three) // outside a transaction: the statement commits alone
      const claim = { nonce: one.nonce, addressLc: one.address_lc, message: one.message, expiresAt: one.expires_at }
      // A claim is granted only as the nonce was issued: its address, message and expiry; then once.
      for (const wrong of [{ addressLc: anAddress() }, { message: 'sign in!' }, { expiresAt: one.expires_at + 1 }]) {
        expect(await records.single((tx) => tx.nonces.consume({ ...claim, ...wrong }, now()), { unkept: true })).toBe(false)
      }
      expect(await records.single((tx) => tx.nonces.consume(claim, one.expires_at), { unkept: true })).toBe(false) // expired by then
      expect(await records.single((tx) => tx.nonces.consume(claim, now()), { unkept: true })).toBe(true)
      expect(await records.single((tx) => tx.nonces.consume(claim, now()), { unkept: true })).toBe(false)
      await records
        .transact(
          async (tx) => {
            await tx.nonces.insert(doomed)
            throw new Error('no')
          },
          { unkept: true },
        )
        .catch(() => {})
      expect(records.changes.version()).toBe(start)
      expect(heard).toEqual([])
      expect((await records.read.nonces.find(one.nonce))?.used_at).toBeNumber()
      expect((await records.read.nonces.find(two.nonce))?.used_at).toBeNull()
      expect(await records.read.nonces.find(three.nonce)).toBeDefined()
      expect(await records.read.nonces.find(doomed.nonce)).toBeUndefined()
      await records.single((tx) => tx.meta.set(unique('kept'), 'kept'))
      expect(records.changes.version()).toBe(start + 1)
    })

    if (sharedDatabase) {
      test('a lease is held by one opening at a time, and free again once released', async () => {
        const [one, two] = [await open(), await open()]
        const name = unique('lease')
        const held = await one.lease(name)
        expect(held).not.toBeNull()
        expect(await two.lease(name)).toBeNull()
        const other = await two.lease(unique('another lease'))
        expect(other).not.toBeNull()
        await other!.release()
        await held!.release()
        const taken = await two.lease(name)
        expect(taken).not.toBeNull()
        expect(await one.lease(name)).toBeNull()
        await taken!.release()
      })

      test("another opening hears of an access link's creation and revocation, not of its uses; of a pass offer", async () => {
        const [writer, listener] = [await open(), await open()]
        const feedId = await aFeed(writer)
        const entry = anEntry(feedId)
        await writer.single((tx) => tx.entries.add(entry, 10))
        const heard = () => listener.changes.version()
        /** Waits until the listener has heard of a change (true), or a second went by without one (false). */
        const hears = async (before: number) => {
          for (let waited = 0; waited < 1000 && heard() === before; waited += 20) await Bun.sleep(20)
          return heard() !== before
        }
        const link = { id: unique('link'), entry_id: entry.id, feed_id: feedId, created_by: anAddress(), expires_at: now() + 60 }
        let before = heard()
        await writer.transact((tx) => tx.accessLinks.insert({ ...link, max_uses: null, description: null, now: now() }))
        expect(await hears(before)).toBe(true)
        before = heard()
        expect(await writer.single((tx) => tx.accessLinks.use(link.id, now()), { unkept: true })).toBe(true)
        expect(await hears(before)).toBe(false)
        expect(await writer.transact((tx) => tx.accessLinks.deactivate(link.id, now()))).toBe(true)
        expect(await hears(before)).toBe(true)
        // A feed read carries its pass on sale: an offer's change is heard too.
        before = heard()
        const offer = { feed_id: feedId, price: 5_000_000n, duration_s: 3600, description: null }
        await writer.transact((tx) => tx.passOffers.put(offer, now()))
        expect(await hears(before)).toBe(true)
        expect((await listener.read.feeds.byId(feedId))?.pass).toMatchObject({ price: 5_000_000n, duration_s: 3600, is_active: true })
        // A read through a holder's private feed URL is kept: its revocation is heard, on every instance.
        const holder = anAddress()
        await writer.transact((tx) => tx.passFeedUrls.standing({ id: unique('url'), feed_id: feedId, holder_lc: holder, now: now() }))
        before = heard()
        expect(await writer.transact((tx) => tx.passFeedUrls.revoke(feedId, holder, now()))).toBe(true)
        expect(await hears(before)).toBe(true)
      })
    } else {
      test('a lease is always granted: one opening is the only process', async () => {
        const records = await open()
        const name = unique('lease')
        const [first, second] = [await records.lease(name), await records.lease(name)]
        expect(first).not.toBeNull()
        expect(second).not.toBeNull()
        await first!.release()
        await second!.release()
        expect(await records.lease(name)).not.toBeNull()
      })
    }

    test(
      'the server key: 32 bytes, the same when asked again' + (sharedDatabase ? ', and the same for every opening of the database' : ''),
      async () => {
        const records = await open()
        const key = await records.secret()
        expect(key.byteLength).toBe(32)
        expect(Buffer.from(await records.secret()).equals(Buffer.from(key))).toBe(true)
        if (sharedDatabase) expect(Buffer.from(await (await open()).secret()).equals(Buffer.from(key))).toBe(true)
      },
    )

    test(
      'a block space the records host keeps a block by its CID' + (hostsBlocks ? '' : ' (none here: content is kept apart)'),
      async () => {
        const records = await open()
        if (!hostsBlocks) return expect(records.blockSpaces).toBeNull()
        const space = await records.blockSpaces!.inDatabase()
        const bytes = new TextEncoder().encode(unique('block'))
        const cid = CID.createV1(raw.code, await sha256.digest(bytes))
        await space.put(cid, bytes)
        expect(await space.has(cid)).toBe(true)
        const chunks: Uint8Array[] = []
        for await (const chunk of space.get(cid)) chunks.push(chunk)
        expect(Buffer.concat(chunks).equals(Buffer.from(bytes))).toBe(true)
      },
    )

    test('a duplicate key is a unique violation, from a transaction and from a statement alone', async () => {
      const records = await open()
      const feedId = await aFeed(records)
      const key = unique('meta')
      const duplicate = await records
        .transact(async (tx) => {
          await tx.meta.set(key, 'lost with the transaction')
          const owner = (await tx.feeds.byId(feedId))!.owner_id
          await tx.feeds.insert({
            id: feedId,
            owner_id: owner,
            category_id: null,
            name: 'again',
            description: null,
            image_cid: null,
            tags: [],
            now: now(),
          })
        })
        .catch((error: unknown) => error)
      expect(isUniqueViolation(duplicate)).toBe(true)
      expect(await records.read.meta.get(key)).toBeNull()
      expect((await records.read.feeds.byId(feedId))?.name).toBe('contract feed')

      const nonce = aNonce()
      await records.read.nonces.insert(nonce)
      const again = await records.read.nonces.insert(nonce).catch((error: unknown) => error)
      expect(isUniqueViolation(again)).toBe(true)
      expect(isUniqueViolation(new Error('refused'))).toBe(false)
    })

    test('a refused update inside a transaction answers false, and the transaction goes on to commit', async () => {
      const records = await open()
      const username = unique('name')
      const [taker, other] = await records.transact(async (tx) => [
        await tx.wallets.ensure(unique('wallet'), anAddress(), 'base-sepolia', now()),
        await tx.wallets.ensure(unique('wallet'), anAddress(), 'base-sepolia', now()),
      ])
      expect(await records.transact((tx) => tx.wallets.update(taker!, { username }, now()))).toBe(true)
      const key = unique('meta')
      const outcome = await records.transact(async (tx) => {
        const renamed = await tx.wallets.update(other!, { username: username.toUpperCase() }, now()) // taken, case-insensitively
        await tx.meta.set(key, 'after the refusal')
        return renamed
      })
      expect(outcome).toBe(false)
      expect(await records.read.meta.get(key)).toBe('after the refusal')
      expect((await records.read.wallets.byId(other!))?.username).toBeNull()
    })

    test("a pass offer: put, changed, withdrawn; a feed's read carries the one on sale, while the feed is active", async () => {
      const records = await open()
      const feedId = await aFeed(records)
      expect((await records.read.feeds.byId(feedId))!.pass).toBeNull()
      const offer = { feed_id: feedId, price: 9_007_199_254_740_993n, duration_s: 60, description: 'a minute' }
      await records.transact((tx) => tx.passOffers.put(offer, 1000))
      expect((await records.read.feeds.byId(feedId))!.pass).toEqual({ ...offer, is_active: true, created_at: 1000, updated_at: 1000 })
      await records.transact((tx) => tx.passOffers.put({ ...offer, price: 7n, duration_s: 31_536_000, description: null }, 2000))
      const changed = {
        feed_id: feedId,
        price: 7n,
        duration_s: 31_536_000,
        description: null,
        is_active: true,
        created_at: 1000,
        updated_at: 2000,
      }
      expect((await records.read.feeds.byId(feedId))!.pass).toEqual(changed)
      const listed = await records.read.feeds.list({ ownerId: (await records.read.feeds.byId(feedId))!.owner_id, minEntries: 0, limit: 5 })
      expect(listed.map((f) => f.pass)).toEqual([changed])
      // On sale (x402 discovery's list): the feed with its offer and its category's name, counted; not while inactive.
      const onSale = async () => (await records.read.passOffers.onSale(1000, 0)).filter((one) => one.feed.id === feedId)
      expect((await onSale()).map((one) => [one.feed.pass, one.category_name])).toEqual([[changed, null]])
      const counted = await records.read.passOffers.onSaleCount()
      await records.transact((tx) => tx.feeds.update(feedId, { is_active: false }, 2500))
      expect((await records.read.feeds.byId(feedId))!.pass).toBeNull()
      expect([await onSale(), await records.read.passOffers.onSaleCount()]).toEqual([[], counted - 1])
      await records.transact((tx) => tx.feeds.update(feedId, { is_active: true }, 2600))
      expect((await records.read.feeds.byId(feedId))!.pass).toEqual(changed)
      expect(await records.transact((tx) => tx.passOffers.withdraw(feedId, 3000))).toBe(true)
      expect(await records.transact((tx) => tx.passOffers.withdraw(feedId, 3001))).toBe(false)
      expect((await records.read.feeds.byId(feedId))!.pass).toBeNull()
      expect([await onSale(), await records.read.passOffers.onSaleCount()]).toEqual([[], counted - 1])
      await records.transact((tx) => tx.passOffers.put(offer, 4000))
      expect((await records.read.feeds.byId(feedId))!.pass).toMatchObject({ created_at: 1000, updated_at: 4000, is_active: true })
    })

    test('passes: one bought ahead runs on from the end of the last; the expiry marks each ended once, oldest first', async () => {
      const records = await open()
      const feedId = await aFeed(records)
      const holder = anAddress()
      const sell = (id: string, at: number, duration: number) =>
        records.transact(async (tx) => {
          const txId = await aSale(tx, holder, { kind: 'pass', entry_id: null, feed_id: feedId }, at)
          return tx.passes.grant({ id, feed_id: feedId, holder_lc: holder, duration_s: duration, transaction_id: txId, now: at })
        })
      const first = await sell(unique('pass'), 1_000, 60)
      const second = await sell(unique('pass'), 1_030, 60) // bought while the first runs: it extends it
      expect([first.starts_at, first.expires_at, second.starts_at, second.expires_at]).toEqual([1_000, 1_060, 1_060, 1_120])
      expect(await records.read.passes.runningUntil(holder, feedId, 1_059)).toBe(1_060)
      expect(await records.read.passes.runningUntil(holder, feedId, 1_060)).toBe(1_120)
      expect(await records.read.passes.runningUntil(holder, feedId, 1_120)).toBeNull()
      expect(await records.read.passes.byId(second.id)).toEqual(second)
      expect((await records.read.passes.byTransaction(second.transaction_id))!.id).toBe(second.id)
      const third = await sell(unique('pass'), 2_000, 60) // after a gap: from its sale
      expect([third.starts_at, third.expires_at]).toEqual([2_000, 2_060])
      const marked = async (at: number, limit: number) => records.transact((tx) => tx.passes.markEnded(at, limit), { unkept: true })
      expect(await marked(1_059, 10)).toBe(0)
      expect(await marked(1_200, 1)).toBe(1)
      expect(await marked(1_200, 10)).toBe(1)
      expect(await marked(1_200, 10)).toBe(0)
      expect(await marked(3_000, 10)).toBe(1)
      expect((await records.read.passes.listByHolder(holder, undefined, 10)).map((p) => p.id)).toEqual(
        [first.id, second.id, third.id].sort().reverse(),
      )
    })

    test('entitledAmong: of the entries asked about, those bought and those of a feed whose pass runs; none asked, none', async () => {
      const records = await open()
      const [feedId, passFeedId] = [await aFeed(records), await aFeed(records)]
      const paid = (feed: string) => anEntry(feed, { is_free: false, price: 5n })
      const entries = Array.from({ length: 30 }, () => paid(feedId))
      const passEntries = [paid(passFeedId), paid(passFeedId)]
      for (const entry of [...entries, ...passEntries]) await records.single((tx) => tx.entries.add(entry, 100))
      const buyer = anAddress()
      const bought = [entries[3]!.id, entries[17]!.id]
      await records.transact(async (tx) => {
        const walletId = await tx.wallets.ensure(unique('wallet'), buyer, 'base-sepolia', now())
        for (const entryId of bought)
          await tx.purchases.grant(
            walletId,
            entryId,
            await aSale(tx, buyer, { kind: 'entry', entry_id: entryId, feed_id: null }, 1_000),
            1_000,
          )
        const txId = await aSale(tx, buyer, { kind: 'pass', entry_id: null, feed_id: passFeedId }, 1_000)
        await tx.passes.grant({
          id: unique('pass'),
          feed_id: passFeedId,
          holder_lc: buyer,
          duration_s: 60,
          transaction_id: txId,
          now: 1_000,
        })
      })
      const ids = [...entries, ...passEntries].map((e) => e.id)
      const among = async (address: string, at: number, asked = ids) =>
        [...(await records.read.purchases.entitledAmong(address, asked, at))].sort()
      expect(await among(buyer.toUpperCase().replace('0X', '0x'), 1_030)).toEqual([...bought, ...passEntries.map((e) => e.id)].sort())
      expect(await among(buyer, 1_060)).toEqual([...bought].sort()) // the pass has ended
      expect(await among(buyer, 999)).toEqual([...bought].sort()) // nor begun
      expect(await among(buyer, 1_030, [entries[3]!.id, entries[4]!.id])).toEqual([entries[3]!.id])
      expect(await among(buyer, 1_030, [])).toEqual([])
      expect(await among(anAddress(), 1_030)).toEqual([])
      for (const id of ids) expect(await records.read.purchases.owns(buyer, id)).toBe(bought.includes(id))
    })

    test("a holder's private feed URL: one stands per feed and holder, asked for at once too; revoked, the next is new", async () => {
      // With a shared database, from two openings at once, as two instances would.
      const openings = sharedDatabase ? [await open(), await open()] : [await open()]
      const records = openings[0]!
      const feedId = await aFeed(records)
      const holder = anAddress()
      const ask = (r: Records, holderLc = holder) =>
        r.transact((tx) => tx.passFeedUrls.standing({ id: unique('url'), feed_id: feedId, holder_lc: holderLc, now: 1000 }))
      const asked = await Promise.all(Array.from({ length: 10 }, (_, i) => ask(openings[i % openings.length]!)))
      const first = asked[0]!
      expect(asked.map((url) => url.id)).toEqual(asked.map(() => first.id))
      expect(first).toEqual({ id: first.id, feed_id: feedId, holder_lc: holder, created_at: 1000, revoked_at: null })
      expect(await records.read.passFeedUrls.byId(first.id)).toEqual(first)
      const other = await ask(records, anAddress())
      expect(other.id).not.toBe(first.id)

      expect(await records.transact((tx) => tx.passFeedUrls.revoke(feedId, holder, 2000))).toBe(true)
      expect(await records.transact((tx) => tx.passFeedUrls.revoke(feedId, holder, 2001))).toBe(false)
      expect(await records.read.passFeedUrls.byId(first.id)).toEqual({ ...first, revoked_at: 2000 })
      const next = await ask(records)
      expect(next).toMatchObject({ feed_id: feedId, holder_lc: holder, revoked_at: null })
      expect(next.id).not.toBe(first.id)
      expect((await records.read.passFeedUrls.byId(other.id))?.revoked_at).toBeNull()
      expect(await records.read.passFeedUrls.byId(unique('url'))).toBeUndefined()
    })

    test('WebSub: a request replaced by the next, verified into a subscription; an entry published is owed to it once', async () => {
      const records = await open()
      const feedId = await aFeed(records)
      const unkept = { unkept: true }
      const key = { feed_id: feedId, format: 'feed.xml' as const, callback: `https://reader.example/${unique('cb')}` }
      const intent = (id: string, mode: 'subscribe' | 'unsubscribe', at: number) => ({
        id,
        mode,
        ...key,
        callback_host: 'reader.example',
        secret: null,
        lease_seconds: 3600,
        next_attempt_at: at,
        created_at: at,
      })
      const [first, second] = [unique('intent'), unique('intent')]
      await records.transact((tx) => tx.websub.request(intent(first, 'subscribe', 1000)), unkept)
      await records.transact((tx) => tx.websub.request({ ...intent(second, 'subscribe', 1001), secret: 's' }), unkept)
      expect(await records.read.websub.waiting(key)).toBe(true)
      expect(await records.read.websub.waitingCount('reader.example')).toBe(1)
      const due = (await records.read.websub.dueIntents(1001, 1000)).filter((i) => i.feed_id === feedId)
      expect(due).toEqual([{ ...intent(second, 'subscribe', 1001), secret: 's', attempts: 0 }])
      expect(await records.transact((tx) => tx.websub.claimIntent(first, 1001, 1061), unkept)).toBe(false) // replaced
      expect(await records.transact((tx) => tx.websub.claimIntent(second, 1001, 1061), unkept)).toBe(true)
      expect(await records.transact((tx) => tx.websub.claimIntent(second, 1001, 1061), unkept)).toBe(false) // claimed
      const subscriptionId = unique('sub')
      const expires = now() + 3600
      await records.transact(async (tx) => {
        expect(await tx.websub.dropIntent(second)).toBe(true)
        await tx.websub.subscribe({ ...due[0]!, attempts: 1 }, subscriptionId, now(), expires)
      }, unkept)
      expect(await records.read.websub.waiting(key)).toBe(false)
      expect(await records.read.websub.subscription(key)).toMatchObject({
        id: subscriptionId,
        secret: 's',
        expires_at: expires,
        failures: 0,
      })
      expect(await records.read.websub.subscribedCount('reader.example')).toBeGreaterThanOrEqual(1)

      const entry = anEntry(feedId)
      await records.single((tx) => tx.entries.add(entry, 10))
      const owed = (await records.read.websub.dueDeliveries(now(), 1000, [], false)).filter((d) => d.subscription_id === subscriptionId)
      expect(owed).toMatchObject([
        { entry_id: entry.id, feed_id: feedId, format: 'feed.xml', callback: key.callback, secret: 's', attempts: 0 },
      ])
      expect(await records.transact((tx) => tx.websub.claimDelivery(owed[0]!.id, now(), now() + 60), unkept)).toBe(true)
      await records.transact((tx) => tx.websub.failed(subscriptionId, owed[0]!.id, now() - 1, now() + 300, 'answered 503'), unkept)
      expect((await records.read.websub.dueDeliveries(now(), 1000, [], false)).filter((d) => d.subscription_id === subscriptionId)).toEqual(
        [],
      )
      await records.transact((tx) => tx.websub.delivered(subscriptionId, [owed[0]!.id]), unkept)
      expect((await records.read.websub.subscription(key))?.failures).toBe(0)
      expect(
        (await records.read.websub.dueDeliveries(now() + 600, 1000, [], false)).filter((d) => d.subscription_id === subscriptionId),
      ).toEqual([])

      await records.single((tx) => tx.entries.add(anEntry(feedId), 10))
      expect(await records.transact((tx) => tx.websub.expire(expires), unkept)).toBeGreaterThanOrEqual(1)
      expect(await records.read.websub.subscription(key)).toBeUndefined()
      expect((await records.read.websub.dueDeliveries(now(), 1000, [], false)).filter((d) => d.subscription_id === subscriptionId)).toEqual(
        [],
      )
    })

    test("an entry takes one of its feed's slots: the entry as stored, else full, inactive or missing", async () => {
      const records = await open()
      const feedId = await aFeed(records)
      const key = new Uint8Array(randomBytes(32))
      const paid = anEntry(feedId, { is_free: false, price: 1_234_567n, expires_at: now() + 3600, content_key: key })
      const stored = await records.single((tx) => tx.entries.add(paid, 2))
      const { content_key: _, now: at, ...fields } = paid
      expect(stored).toEqual({
        ...fields,
        is_active: true,
        taken_down: false,
        total_purchases: 0,
        total_revenue: 0n,
        created_at: at,
        updated_at: at,
      })
      expect(Buffer.from((await records.read.entries.contentKey(paid.id))!).equals(Buffer.from(key))).toBe(true)
      // Inside a transaction as well as alone.
      const free = anEntry(feedId)
      expect(await records.transact((tx) => tx.entries.add(free, 2))).toMatchObject({ id: free.id, is_free: true, price: 0n })
      const third = anEntry(feedId)
      expect(await records.single((tx) => tx.entries.add(third, 2))).toBe('full')
      expect(await records.read.entries.byId(third.id)).toBeUndefined()
      expect((await records.read.feeds.byId(feedId))?.total_entries).toBe(2)
      expect((await records.read.entries.list({ feedId, limit: 10 })).map((e) => e.id).sort()).toEqual([paid.id, free.id].sort())

      expect(await records.transact((tx) => tx.feeds.update(feedId, { is_active: false }, now()))).toBe(true)
      const late = anEntry(feedId)
      expect(await records.single((tx) => tx.entries.add(late, 10))).toBe('inactive')
      expect(await records.read.entries.byId(late.id)).toBeUndefined()
      const stray = anEntry(unique('no such feed'))
      expect(await records.single((tx) => tx.entries.add(stray, 10))).toBe('missing')
      expect(await records.read.entries.byId(stray.id)).toBeUndefined()
      expect((await records.read.feeds.byId(feedId))?.total_entries).toBe(2)
    })

    test(
      'search: every word matches; a name above a body; a paid body, an inactive or taken-down item never; ' +
        'pages by rank and id; a body set later is found',
      async () => {
        const records = await open()
        const word = () => `zq${[...randomBytes(8)].map((b) => 'bcdfghjklmnpqrstvwxz'[b % 20]).join('')}`
        const [w, secret, later, lone] = [word(), word(), word(), word()]
        const feedId = await aFeed(records)
        const named = anEntry(feedId, { title: `The ${w}` })
        const inBody = anEntry(feedId, { title: 'plain', body_text: `${w} ${w} ${w} and ${lone} in the text` })
        const paid = anEntry(feedId, { title: 'paid', is_free: false, price: 10n, body_text: `${w} ${secret}` })
        const gone = anEntry(feedId, { title: `Gone ${w}` })
        const down = anEntry(feedId, { title: `Down ${w}` })
        for (const entry of [named, inBody, paid, gone, down]) await records.single((tx) => tx.entries.add(entry, 100))
        await records.transact(async (tx) => {
          await tx.entries.deactivate(gone.id, feedId, now())
          await tx.entries.moderate(down.id, feedId, { is_active: false, taken_down: true, deactivated_with_feed: false }, now())
        })
        const find = (words: string[], more: { kind?: 'feed' | 'entry'; after?: { rank: number; key: string }; limit?: number } = {}) =>
          records.read.search.find({ words, limit: 10, ...more })
        const hits = await find([w])
        expect(hits.map((hit) => hit.item_id)).toEqual([named.id, inBody.id])
        expect(hits.map((hit) => [hit.kind, hit.feed_id])).toEqual([
          ['entry', feedId],
          ['entry', feedId],
        ])
        expect(hits[0]!.rank).toBeLessThan(hits[1]!.rank)
        expect(hits[0]!.snippet).toContain(`«${w}»`)
        expect(hits[1]!.snippet).toContain(`«${w}»`)
        expect(await find([w, lone])).toHaveLength(1)
        expect(await find([secret])).toEqual([])
        expect(await find([w], { kind: 'feed' })).toEqual([])
        // A page starts after the last hit of the one before: by rank, then the engine's key.
        const first = await find([w], { limit: 1 })
        const second = await find([w], { limit: 1, after: { rank: first[0]!.rank, key: first[0]!.key } })
        expect([...first, ...second].map((hit) => hit.item_id)).toEqual([named.id, inBody.id])
        expect(await find([w], { after: { rank: second[0]!.rank, key: second[0]!.key } })).toEqual([])
        // A feed's words; a body set later; a feed deactivated takes its entries' hits with it.
        await records.transact((tx) => tx.feeds.update(feedId, { name: `Feed ${later}` }, now()))
        await records.transact((tx) => tx.search.setBody(named.id, `now with ${later}`))
        expect((await find([later])).map((hit) => [hit.kind, hit.item_id])).toEqual([
          ['feed', feedId],
          ['entry', named.id],
        ])
        await records.transact((tx) => tx.feeds.update(feedId, { is_active: false }, now()))
        expect(await find([w])).toEqual([])
        expect(await find([later])).toEqual([])
      },
    )

    test('search pages through 150 hits of one rank, 140 of them hidden: each shown one exactly once, in order', async () => {
      // Only the best documents are ranked at first: here most of them are hidden, so more must be ranked to fill a page.
      const records = await open()
      const w = `zq${[...randomBytes(8)].map((b) => 'bcdfghjklmnpqrstvwxz'[b % 20]).join('')}`
      const feedId = await aFeed(records)
      const entries = Array.from({ length: 150 }, () => anEntry(feedId, { title: `Same ${w}` }))
      await records.transact(async (tx) => {
        for (const entry of entries) await tx.entries.add(entry, 1000)
      })
      const shown = entries.filter((_, i) => i % 15 === 7).map((entry) => entry.id)
      await records.transact(async (tx) => {
        for (const entry of entries) if (!shown.includes(entry.id)) await tx.entries.deactivate(entry.id, feedId, now())
      })
      const seen: string[] = []
      let after: { rank: number; key: string } | undefined
      for (let pages = 0; pages < 5; pages++) {
        const page = await records.read.search.find({ words: [w], kind: 'entry', after, limit: 7 })
        if (page.length === 0) break
        expect(page.length).toBe(seen.length === 0 ? 7 : 3)
        for (let i = 1; i < page.length; i++) expect(page[i - 1]!.rank).toBeLessThanOrEqual(page[i]!.rank)
        seen.push(...page.map((hit) => hit.item_id))
        after = { rank: page.at(-1)!.rank, key: page.at(-1)!.key }
      }
      expect(seen).toHaveLength(10)
      expect([...seen].sort()).toEqual([...shown].sort())
    })

    test('the feed limit holds under concurrency: 20 adds at once into room for 5 store exactly 5', async () => {
      // With a shared database, from two openings at once, as two instances would.
      const openings = sharedDatabase ? [await open(), await open()] : [await open()]
      const feedId = await aFeed(openings[0]!)
      const outcomes = await Promise.all(
        Array.from({ length: 20 }, (_, i) => openings[i % openings.length]!.single((tx) => tx.entries.add(anEntry(feedId), 5))),
      )
      expect(outcomes.filter((outcome) => typeof outcome === 'object')).toHaveLength(5)
      expect(outcomes.filter((outcome) => outcome === 'full')).toHaveLength(15)
      for (const records of openings) {
        expect((await records.read.feeds.byId(feedId))?.total_entries).toBe(5)
        expect(await records.read.entries.list({ feedId, limit: 100 })).toHaveLength(5)
      }
    })
  })
}
