// Facilitators that want credentials (a static bearer token; a CDP API key signing a JWT per call), checked by a
// facilitator on loopback that refuses calls without them; and the refusals to start on Base mainnet with test
// settings. Real server processes, a real chain, real JWT verification against the key's public half.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { exportJWK, exportPKCS8, generateKeyPair } from 'jose'
import { startTestServer, tempDir, type TestServer } from '../dev/server.ts'
import { b64, createEntry, createFeed, newWallet } from '../dev/api.ts'
import { devKey, encodePaymentHeader, startChain, v1Payment, type TestChain } from '../dev/chain.ts'
import { ledgerRows } from './helpers/ledger.ts'
import { startFacilitator, type FacilitatorCredentials } from './helpers/facilitator.ts'
import { rmSync } from 'node:fs'

const PRICE = 10_000n
const CDP_PATH = '/platform/v2/x402'

let chain: TestChain
beforeAll(async () => {
  chain = await startChain()
})
afterAll(async () => {
  await chain?.stop()
})

/** A facilitator demanding `requires`, and a server in facilitator mode pointed at it with `credentials`. */
async function setUp(requires: FacilitatorCredentials, credentials: Record<string, string>, basePath?: string) {
  const facilitator = startFacilitator(chain, devKey(5), { requires, basePath })
  const server = await startTestServer({
    ...chain.env,
    TRELLIS_SETTLEMENT: 'facilitator',
    TRELLIS_RELAYER_KEY: '',
    TRELLIS_FACILITATOR_URL: facilitator.url,
    ...credentials,
  })
  return { facilitator, server }
}

/** One purchase of a fresh paid entry: the answer, and the entry's ledger rows after it. */
async function buy(server: TestServer) {
  const owner = newWallet()
  const feed = await createFeed(server.url, owner)
  const entry = await createEntry(server.url, owner, feed.id, {
    content_base64: b64('mainnet-ready'),
    is_free: false,
    price: { amount: String(PRICE) },
  })
  const buyer = await chain.newFundedBuyer(1_000_000n)
  const reply = await fetch(`${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`, {
    headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: owner.address, value: PRICE })) },
  })
  return { status: reply.status, body: await reply.text(), rows: await ledgerRows(server.url, `entry_id=${entry.id}`), owner }
}

describe('a facilitator that wants a bearer token', () => {
  test('without it: 401 from the facilitator, 502 to the buyer, nothing charged; with TRELLIS_FACILITATOR_BEARER: settled', async () => {
    const { facilitator, server } = await setUp({ bearer: 'fac-token-123' }, {})
    try {
      const refused = await buy(server)
      expect(refused.status).toBe(502)
      expect(JSON.parse(refused.body).code).toBe('PAYMENT_BACKEND_UNAVAILABLE')
      expect(refused.rows).toHaveLength(0)
      expect(await chain.balanceOf(refused.owner.address)).toBe(0n)
      expect(facilitator.refused).toContain('/verify: no bearer token')

      await server.restart({
        ...chain.env,
        TRELLIS_SETTLEMENT: 'facilitator',
        TRELLIS_RELAYER_KEY: '',
        TRELLIS_FACILITATOR_URL: facilitator.url,
        TRELLIS_FACILITATOR_BEARER: 'fac-token-123',
      })
      const paid = await buy(server)
      expect(paid.status).toBe(200)
      expect(paid.body).toBe('mainnet-ready')
      expect(paid.rows).toHaveLength(1)
      expect(facilitator.calls).toEqual(['/verify', '/settle'])
      expect(server.logs.some((line) => line.includes('fac-token-123'))).toBe(false) // never logged
    } finally {
      await server.dispose()
      facilitator.stop()
    }
  })
})

describe('a CDP API key pair signing each call', () => {
  test("ES256 (PEM, pasted with \\n escapes as in CDP's key file): each call carries its own JWT; a purchase settles", async () => {
    const key = await generateKeyPair('ES256', { extractable: true })
    const secret = (await exportPKCS8(key.privateKey)).replace(/\n/g, '\\n')
    const { facilitator, server } = await setUp(
      { cdp: { keyId: 'organizations/test/apiKeys/es256', publicKey: key.publicKey } },
      { TRELLIS_CDP_API_KEY_ID: 'organizations/test/apiKeys/es256', TRELLIS_CDP_API_KEY_SECRET: secret },
      CDP_PATH,
    )
    try {
      const paid = await buy(server)
      expect(facilitator.refused).toEqual([])
      expect(paid.status).toBe(200)
      expect(paid.rows).toHaveLength(1)
      expect(facilitator.calls).toEqual(['/verify', '/settle'])
    } finally {
      await server.dispose()
      facilitator.stop()
    }
  })

  test('Ed25519 (base64, 64 bytes): settles; a key the facilitator does not know: 401, 502 to the buyer', async () => {
    const key = await generateKeyPair('EdDSA', { extractable: true })
    const jwk = await exportJWK(key.privateKey)
    const secret = Buffer.concat([Buffer.from(jwk.d!, 'base64url'), Buffer.from(jwk.x!, 'base64url')]).toString('base64')
    const { facilitator, server } = await setUp(
      { cdp: { keyId: 'ed-key', publicKey: key.publicKey } },
      { TRELLIS_CDP_API_KEY_ID: 'ed-key', TRELLIS_CDP_API_KEY_SECRET: secret },
      CDP_PATH,
    )
    try {
      expect((await buy(server)).status).toBe(200)
      const stranger = await generateKeyPair('ES256', { extractable: true })
      await server.restart({
        ...chain.env,
        TRELLIS_SETTLEMENT: 'facilitator',
        TRELLIS_RELAYER_KEY: '',
        TRELLIS_FACILITATOR_URL: facilitator.url,
        TRELLIS_CDP_API_KEY_ID: 'ed-key',
        TRELLIS_CDP_API_KEY_SECRET: await exportPKCS8(stranger.privateKey),
      })
      const refused = await buy(server)
      expect(refused.status).toBe(502)
      expect(refused.rows).toHaveLength(0)
      expect(facilitator.refused.some((why) => why.startsWith('/verify: JWT refused'))).toBe(true)
    } finally {
      await server.dispose()
      facilitator.stop()
    }
  })
})

describe('Base mainnet refuses test settings at start', () => {
  const DEAD_RPC = 'http://127.0.0.1:9'
  const startFails = async (env: Record<string, string>) => {
    const dataDir = tempDir()
    try {
      return await startTestServer({ TRELLIS_NETWORK: 'base', TRELLIS_RPC_URL: DEAD_RPC, ...env }, { dataDir }).then(
        async (server) => {
          await server.dispose()
          return 'started'
        },
        (error: Error) => error.message,
      )
    } finally {
      rmSync(dataDir, { recursive: true, force: true })
    }
  }

  test('the default (testnet-only) facilitator without credentials: one line saying what to set', async () => {
    const message = await startFails({})
    expect(message).toContain(
      'trellis: TRELLIS_NETWORK=base is mainnet but the facilitator https://x402.org/facilitator ' +
        'settles testnets only: set TRELLIS_CDP_API_KEY_ID and TRELLIS_CDP_API_KEY_SECRET',
    )
  })

  test('a testnet token address: one line naming TRELLIS_USDC_ADDRESS', async () => {
    const message = await startFails({
      TRELLIS_SETTLEMENT: 'local',
      TRELLIS_RELAYER_KEY: chain.relayer.privateKey,
      TRELLIS_USDC_ADDRESS: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
    })
    expect(message).toContain(
      'trellis: TRELLIS_NETWORK=base is mainnet but TRELLIS_USDC_ADDRESS 0x036CbD53842c5426634e7929541eC2318f3dCF7e is a testnet token',
    )
  })

  test('a CDP secret that is no key: refused, naming it', async () => {
    expect(await startFails({ TRELLIS_CDP_API_KEY_ID: 'k', TRELLIS_CDP_API_KEY_SECRET: 'not-a-key' })).toContain(
      'trellis: TRELLIS_CDP_API_KEY_SECRET is neither a PEM EC key nor a base64 Ed25519 key',
    )
  })

  test("with a CDP key it starts, on Coinbase's facilitator", async () => {
    const key = await generateKeyPair('ES256', { extractable: true })
    const server = await startTestServer({
      TRELLIS_NETWORK: 'base',
      TRELLIS_RPC_URL: DEAD_RPC,
      TRELLIS_CDP_API_KEY_ID: 'k',
      TRELLIS_CDP_API_KEY_SECRET: await exportPKCS8(key.privateKey),
    })
    try {
      const start = JSON.parse(server.logs.find((line) => line.includes('"msg":"listening"'))!)
      expect(start).toMatchObject({ network: 'base', chain_id: 8453, facilitator: 'https://api.cdp.coinbase.com', facilitator_auth: 'cdp' })
    } finally {
      await server.dispose()
    }
  })
})
