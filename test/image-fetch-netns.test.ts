// The cover-image fetch against a hostile network, for real: the server runs inside a private network namespace
// whose DNS server (test/helpers/rebinding-world.ts) answers a public address first and 127.0.0.1 after, with a
// "secret" service on the namespace's loopback. Needs root and iproute2 (see test/helpers/netns.ts).
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomBytes } from 'node:crypto'
import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { call, createFeed, newWallet, type InProcess } from '../dev/api.ts'
import { waitForLine } from '../dev/lines.ts'
import { netnsUnavailable, openNetns, type Netns } from './helpers/netns.ts'
import { PUBLIC_PNG, TEST_CERT_PATH } from './helpers/rebinding-world.ts'

const PUBLIC_ADDRESS = '93.184.216.34' // any globally routable address: inside the namespace it is only ours

let ns: Netns
let world: Subprocess<'ignore', 'pipe', 'inherit'>
let bridge: Subprocess<'ignore', 'pipe', 'inherit'>
let server: TestServer
let trellis: InProcess
const worldLines: string[] = []
const socketPath = join(tmpdir(), `trellis-bridge-${randomBytes(4).toString('hex')}.sock`)
const secretConnections = () => worldLines.filter((line) => line === 'secret-connection').length
const unique = () => randomBytes(4).toString('hex')

beforeAll(async () => {
  const unavailable = netnsUnavailable()
  if (unavailable) throw new Error(`this test needs a network namespace: ${unavailable}`)
  ns = openNetns([PUBLIC_ADDRESS])
  world = Bun.spawn(ns.exec([process.execPath, 'test/helpers/rebinding-world.ts', PUBLIC_ADDRESS]), { stdout: 'pipe', stderr: 'inherit' })
  await waitForLine(world.stdout, (line) => (line === 'ready' ? true : undefined), {
    timeoutMs: 10_000,
    what: 'the rebinding world',
    onLine: (line) => worldLines.push(line),
  })
  // Embedded records even when the suite runs on PostgreSQL: the namespace's only network is its own, so a cluster on
  // the host's loopback is out of its reach (and what is tested here is the fetch, not where records are kept).
  server = await startTestServer(
    { NODE_EXTRA_CA_CERTS: TEST_CERT_PATH },
    { command: ns.exec([process.execPath, 'src/main.ts']), embedded: true },
  )
  bridge = Bun.spawn(ns.exec([process.execPath, 'test/helpers/unix-bridge.ts', socketPath, new URL(server.url).port]), {
    stdout: 'pipe',
    stderr: 'inherit',
  })
  await waitForLine(bridge.stdout, (line) => (line === 'bridging' ? true : undefined), { timeoutMs: 10_000, what: 'the bridge' })
  trellis = {
    url: 'http://trellis.netns',
    handle: async (request) => {
      const path = new URL(request.url).pathname
      const body = request.body ? await request.arrayBuffer() : undefined
      return fetch(`http://localhost${path}`, { method: request.method, headers: request.headers, body, unix: socketPath })
    },
  }
})

afterAll(async () => {
  bridge?.kill()
  await server?.dispose()
  world?.kill()
  await Promise.all([bridge?.exited, world?.exited])
  ns?.dispose()
  rmSync(socketPath, { force: true })
})

const coverBytes = async (feedId: string) =>
  Buffer.from(await (await trellis.handle(new Request(`${trellis.url}/v1/feeds/${feedId}/image`))).arrayBuffer())

describe('image_url over a hostile network (private namespace, stub DNS)', () => {
  test('DNS rebinding: a name answering public, then 127.0.0.1, never makes the server fetch from loopback', async () => {
    const wallet = newWallet()
    for (let i = 0; i < 8; i++) {
      const feed = await createFeed(trellis, wallet, { image_url: `http://rebind-${unique()}.rebind.test:8080/cover.png` })
      expect(await coverBytes(feed.id)).toEqual(PUBLIC_PNG)
    }
    // https too: connected to the vetted address, the certificate is still checked against the name (SNI).
    for (let i = 0; i < 3; i++) {
      const feed = await createFeed(trellis, newWallet(), { image_url: `https://rebind-${unique()}.rebind.test:8443/cover.png` })
      expect(await coverBytes(feed.id)).toEqual(PUBLIC_PNG)
    }
    expect(secretConnections()).toBe(0)
  })

  test('every redirect hop is resolved and vetted the same way', async () => {
    const wallet = newWallet()
    const viaRebinding = await createFeed(trellis, wallet, { image_url: `http://${PUBLIC_ADDRESS}:8080/to/rebind-${unique()}.rebind.test` })
    expect(await coverBytes(viaRebinding.id)).toEqual(PUBLIC_PNG)
    const toLoopback = await call(trellis, 'POST', '/v1/feeds', {
      wallet,
      body: { name: 'img', image_url: `http://${PUBLIC_ADDRESS}:8080/to/loop-${unique()}.rebind.test` },
    })
    expect(toLoopback.status).toBe(400)
    expect(secretConnections()).toBe(0)
  })

  test('every fetch failure answers one and the same error: open, refusing and closed ports look alike', async () => {
    const wallet = newWallet()
    const failing = [
      `http://${PUBLIC_ADDRESS}:8081/admin`, // open, answers a page
      `http://${PUBLIC_ADDRESS}:8082/`, // refused
      `http://${PUBLIC_ADDRESS}:8083/`, // accepts, then resets
      `http://${PUBLIC_ADDRESS}:8080/missing`, // 404
      `https://${PUBLIC_ADDRESS}:8443/cover.png`, // a certificate for the name, not for the address
      `http://${PUBLIC_ADDRESS}:8080/huge`, // over 10 MB
      `http://${PUBLIC_ADDRESS}:8080/to/loop-${unique()}.rebind.test`, // redirect to loopback
      `http://loop-${unique()}.rebind.test:8080/cover.png`, // loopback by name
      'http://127.0.0.1:8080/cover.png', // loopback by address
      'http://[::ffff:127.0.0.1]:8080/cover.png', // loopback as IPv4-mapped IPv6
      'http://[::1]:8080/cover.png',
      `http://nowhere-${unique()}.invalid/cover.png`, // does not resolve
    ]
    const replies = []
    for (const image_url of failing) replies.push(await call(trellis, 'POST', '/v1/feeds', { wallet, body: { name: 'img', image_url } }))
    for (const [i, reply] of replies.entries()) {
      expect(reply.status, failing[i]).toBe(400)
      expect(reply.text, failing[i]).toBe(replies[0].text)
    }
    expect(replies[0].body).toEqual({ error: 'invalid_request', message: expect.any(String), details: { field: 'image_url' } })
    expect(secretConnections()).toBe(0)
  })
})
