// Access-link uses share durable commits (the records adapter's group commit) yet stay exact: of many concurrent opens exactly
// max_uses are served, and after a kill -9 the recorded uses cover every open that was answered, never more than
// max_uses.
import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'

let server: TestServer
let owner: Wallet
let feed: any

beforeAll(async () => {
  server = await startTestServer()
  owner = newWallet()
  feed = await createFeed(server.url, owner, { name: 'link commits' })
})
afterAll(() => server.dispose())

async function linkTo(entry: any, maxUses: number) {
  const reply = await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries/${entry.id}/access-link`, {
    wallet: owner,
    body: { max_uses: maxUses },
  })
  expect(reply.status).toBe(201)
  return reply.body
}

async function usesOf(entry: any, link: any): Promise<number> {
  const listed = await call(server.url, 'GET', `/v1/feeds/${feed.id}/entries/${entry.id}/access-links?page_size=100`, { wallet: owner })
  return listed.body.data.find((l: any) => l.id === link.id).current_uses
}

/** One open: 'served' only when the whole body arrived. */
const openOnce = (url: string, body: string) =>
  fetch(url).then(
    async (r) => (r.status === 200 ? ((await r.text()) === body ? 'served' : 'short') : `${r.status} ${(await r.json()).code}`),
    () => 'lost',
  )

test('200 concurrent opens of a max_uses 50 link: exactly 50 served with the bytes, 150 refused ACCESS_LINK_EXHAUSTED', async () => {
  const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64('fifty of them') })
  const link = await linkTo(entry, 50)
  const outcomes = await Promise.all(Array.from({ length: 200 }, () => openOnce(link.url, 'fifty of them')))
  const tally = Object.fromEntries([...new Set(outcomes)].map((o) => [o, outcomes.filter((x) => x === o).length]))
  expect(tally).toEqual({ served: 50, '410 ACCESS_LINK_EXHAUSTED': 150 })
  expect(await usesOf(entry, link)).toBe(50)
})

test('kill -9 during a burst of opens, three times: every answered open is recorded, and never more than max_uses', async () => {
  for (const round of [1, 2, 3]) {
    const entry = await createEntry(server.url, owner, feed.id, { content_base64: b64(`burst ${round}`) })
    const maxUses = 5000 // more than the burst reaches before the kill: the kill lands mid-burst
    const link = await linkTo(entry, maxUses)
    const outcomes: string[] = []
    let stop = false
    // 40 clients opening in a loop, more in all than the link allows, until the server dies under them.
    const clients = Array.from({ length: 40 }, async () => {
      while (!stop) {
        const outcome = await openOnce(link.url, `burst ${round}`)
        outcomes.push(outcome)
        if (outcome === 'lost') return
      }
    })
    const killAfterMs = Math.floor(50 + Math.random() * 300)
    await Bun.sleep(killAfterMs)
    await server.kill()
    stop = true
    await Promise.all(clients)
    const served = outcomes.filter((o) => o === 'served').length
    await server.restart()
    const recorded = await usesOf(entry, link)
    console.log(`round ${round}: kill -9 after ${killAfterMs} ms; ${served} opens served, ${recorded} uses recorded`)
    expect(outcomes.filter((o) => o !== 'served' && o !== 'lost' && o !== '410 ACCESS_LINK_EXHAUSTED')).toEqual([])
    expect(recorded).toBeGreaterThanOrEqual(served)
    expect(recorded).toBeLessThanOrEqual(maxUses)
  }
}, 120_000)
