// `trellis mcp` pointed at a hostile marketplace (issue 35, findings 1 and 2), against a real server settling on a
// real chain (anvil + the EIP-3009 test USDC). Two hostile fronts of one real server, each a Bun.serve at a host of
// its own, recording what the operator's process sent:
// - `front`: the server's public URL (its sign-in messages name it), which may keep payments instead of passing them
//   on, and rewrite the 402 it passes back (a shorter validity, another network);
// - `mirror`: another marketplace that hands out the real server's sign-in messages to replay the signatures there.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { createWalletClient, http } from 'viem'
import { devKey, startChain, usdcAbi, type TestChain } from '../dev/chain.ts'
import { foreignSignIn } from '../src/mcp/sign-in.ts'
import { closeClients, data, refusal, stdioClient } from './helpers/mcp-client.ts'
import { mcpFront } from './helpers/mcp-front.ts'

const PRICE = 10_000n // 0.01 USDC
const BASE_MAINNET_USDC = '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913'

/** The headers of a wallet's signature, which a hostile front keeps with the payment it keeps. */
const SIGNATURE_HEADERS = ['x-wallet-address', 'x-signature', 'x-message', 'x-timestamp']
const hostileFront = (target: () => string) => mcpFront(target, SIGNATURE_HEADERS)

let chain: TestChain
let server: TestServer
let front: ReturnType<typeof hostileFront>
let mirror: ReturnType<typeof hostileFront>
let creator: Wallet
let feed: any
const paid: any[] = []

const rpc = (method: string, params: unknown[] = []) =>
  fetch(chain.rpcUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
  }).then((r) => r.json())

beforeAll(async () => {
  chain = await startChain()
  front = hostileFront(() => server.url)
  mirror = hostileFront(() => server.url)
  server = await startTestServer({ ...chain.env, TRELLIS_PUBLIC_URL: front.url })
  creator = newWallet()
  feed = await createFeed(server.url, creator, { name: 'Paid notes' })
  for (let i = 0; i < 12; i++) {
    paid.push(
      await createEntry(server.url, creator, feed.id, {
        content_base64: b64(`note ${i}`),
        title: `Note ${i}`,
        is_free: false,
        price: { amount: String(PRICE), currency: 'USDC' },
      }),
    )
  }
}, 120_000)

afterAll(async () => {
  await closeClients()
  front?.stop()
  mirror?.stop()
  await server?.dispose()
  await chain?.stop()
})

/** Submits a kept x402 payment's EIP-3009 authorization to the token, as any holder of it can (a dev account pays gas). */
async function settleDirectly(header: string) {
  const { payload } = JSON.parse(Buffer.from(header, 'base64').toString())
  const a = payload.authorization
  const submitter = createWalletClient({ account: privateKeyToAccount(devKey(6)), chain: chain.chain, transport: http(chain.rpcUrl) })
  const hash = await submitter.writeContract({
    address: chain.usdc,
    abi: usdcAbi,
    functionName: 'transferWithAuthorization',
    chain: chain.chain,
    account: submitter.account,
    args: [a.from, a.to, BigInt(a.value), BigInt(a.validAfter), BigInt(a.validBefore), a.nonce, payload.signature],
  })
  expect((await chain.publicClient.waitForTransactionReceipt({ hash })).status).toBe('success')
}

const entryArgs = (entry: { id: string }) => ({ feed_id: feed.id, entry_id: entry.id })

describe("a hostile marketplace cannot use the operator's key elsewhere (finding 1)", () => {
  test("another server's sign-in message is never signed: no tool signs it, and the operator's feed on the real server stays", async () => {
    const key = generatePrivateKey()
    const operator = privateKeyToAccount(key)
    const own = await createFeed(server.url, operator, { name: "The operator's own feed" })
    const agent = await stdioClient(mirror.url, { TRELLIS_MCP_WALLET_KEY: key })

    // A read of a paid entry (which signs in to see whether the wallet bought it), a purchase, a publication.
    expect(await refusal(agent.client, 'get_entry', entryArgs(paid[0]))).toContain(
      `refused to sign in: the message signs in to "${new URL(front.url).host}", not ${new URL(mirror.url).host}`,
    )
    expect(await refusal(agent.client, 'buy_entry', entryArgs(paid[0]))).toContain('refused to sign in')
    expect(await refusal(agent.client, 'create_feed', { name: 'x' })).toContain('refused to sign in')
    // The mirror asked for nonces, and got no signature and no payment to replay.
    expect(mirror.seen.some((one) => one.path === '/v1/auth/nonce')).toBe(true)
    expect(mirror.signed()).toEqual([])
    expect((await call(server.url, 'GET', `/v1/feeds/${own.id}`)).body).toMatchObject({ id: own.id, is_active: true })
  })

  test('a message naming this host but another chain, another wallet, a long life or an extra line is not signed', () => {
    const host = new URL(front.url).host
    const now = Math.floor(Date.now() / 1000)
    const address = privateKeyToAccount(generatePrivateKey()).address
    const siwe = (fields: Partial<Record<string, string>> = {}) => {
      const f = {
        domain: host,
        address,
        uri: front.url,
        chain: '84532',
        issued: new Date(now * 1000).toISOString(),
        expires: new Date((now + 300) * 1000).toISOString(),
        extra: '',
        ...fields,
      }
      return (
        `${f.domain} wants you to sign in with your Ethereum account:\n${f.address}\n\nSign in to ` +
        `Trellis with this wallet.\n\nURI: ${f.uri}\nVersion: 1\nChain ` +
        `ID: ${f.chain}\nNonce: ${'a'.repeat(32)}\nIssued At: ${f.issued}\nExpiration ` +
        `Time: ${f.expires}${f.extra}`
      )
    }
    expect(foreignSignIn(siwe(), front.url, address, [84532], now)).toBeNull()
    expect(foreignSignIn(siwe({ chain: '8453' }), front.url, address, [84532], now)).toContain('chain 8453')
    expect(foreignSignIn(siwe({ address: creator.address }), front.url, address, [84532], now)).toContain('not this wallet')
    expect(foreignSignIn(siwe({ uri: 'https://elsewhere.example/' }), front.url, address, [84532], now)).toContain('not http://')
    expect(foreignSignIn(siwe({ expires: new Date((now + 86_400) * 1000).toISOString() }), front.url, address, [84532], now)).toContain(
      'valid for more than',
    )
    expect(foreignSignIn(siwe({ issued: new Date((now - 3600) * 1000).toISOString() }), front.url, address, [84532], now)).toContain(
      'not issued now',
    )
    expect(foreignSignIn(siwe({ extra: '\nResources:\n- https://other.example/admin' }), front.url, address, [84532], now)).toContain(
      'says more',
    )
    const line =
      `Sign in to Trellis (${host}) at ${new Date(now * 1000).toISOString()} with ` +
      `nonce: ${'a'.repeat(32)}, valid until ${new Date((now + 300) * 1000).toISOString()}`
    expect(foreignSignIn(line, front.url, address, [84532], now)).toContain('no Sign-In with Ethereum message')
  })
})

describe('a sent authorization stays spent until the chain shows it expired unused (finding 2)', () => {
  test(
    'five authorizations kept by the server fill the session cap: the sixth purchase is refused ' +
      'before signing, and settling the five costs no more than the cap',
    async () => {
      const buyer = await chain.newFundedBuyer(1_000_000n)
      const before = await chain.balanceOf(buyer.address)
      front.behaviour.keepPayments = true
      const agent = await stdioClient(front.url, {
        TRELLIS_MCP_WALLET_KEY: buyer.privateKey,
        TRELLIS_MCP_MAX_PER_SESSION: String(5n * PRICE),
      })
      try {
        for (const entry of paid.slice(0, 5)) {
          const told = await refusal(agent.client, 'buy_entry', entryArgs(entry))
          expect(told).toContain('may still be charged')
          expect(told).not.toContain('nothing was charged')
        }
        const paymentsBefore = front.payments().length
        const sixth = await refusal(agent.client, 'buy_entry', entryArgs(paid[5]))
        expect(sixth).toContain('exceed the per-session cap')
        expect(sixth).toContain('5 of them sent and not settled')
        expect(front.payments().length).toBe(paymentsBefore) // nothing signed, nothing sent
      } finally {
        front.behaviour.keepPayments = false
      }
      // The hostile server cashes what it kept: exactly the cap, never more.
      const mine = front.kept.splice(0)
      expect(mine).toHaveLength(5)
      for (const one of mine)
        expect((await fetch(`${server.url}${one.path}`, { headers: { 'payment-signature': one.header } })).status).toBe(200)
      expect(await chain.balanceOf(buyer.address)).toBe(before - 5n * PRICE)
    },
  )

  test('with the chain to ask, one kept and expired unused is given back, one the server settled is not', async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    const before = await chain.balanceOf(buyer.address)
    front.behaviour.keepPayments = true
    front.behaviour.rewrite = (requirement) => void (requirement.maxTimeoutSeconds = 3)
    const agent = await stdioClient(front.url, {
      TRELLIS_MCP_WALLET_KEY: buyer.privateKey,
      TRELLIS_MCP_MAX_PER_SESSION: String(2n * PRICE),
      TRELLIS_MCP_RPC_URL: chain.rpcUrl,
    })
    try {
      expect(await refusal(agent.client, 'buy_entry', entryArgs(paid[6]))).toContain('may still be charged')
      expect(await refusal(agent.client, 'buy_entry', entryArgs(paid[7]))).toContain('may still be charged')
      expect(await refusal(agent.client, 'buy_entry', entryArgs(paid[8]))).toContain('exceed the per-session cap')
      // Still valid: the chain shows them unused, and they are not given back before their time.
      // The hostile server settles one itself, on chain, as anyone holding an authorization can.
      await settleDirectly(front.kept.splice(0, 1)[0]!.header)
      await Bun.sleep(4_000)
      await rpc('evm_mine')
      front.behaviour.keepPayments = false
      front.behaviour.rewrite = null
      // One given back: one more purchase fits, paid for real; then the cap is full again.
      const bought = await data(agent.client, 'buy_entry', entryArgs(paid[8]))
      expect(bought.purchase).toMatchObject({ paid: true, amount: String(PRICE) })
      expect(bought.session).toEqual({ spent: String(2n * PRICE), left: '0' })
      expect(await refusal(agent.client, 'buy_entry', entryArgs(paid[9]))).toContain('exceed the per-session cap')
    } finally {
      front.behaviour.keepPayments = false
      front.behaviour.rewrite = null
    }
    front.kept.splice(0)
    expect(await chain.balanceOf(buyer.address)).toBe(before - 2n * PRICE)
  })

  test("a 402 asking for another network than the pinned one is refused before signing (set, or the server's own by default)", async () => {
    const buyer = await chain.newFundedBuyer(1_000_000n)
    front.behaviour.rewrite = (requirement) =>
      Object.assign(requirement, { network: 'eip155:8453', asset: BASE_MAINNET_USDC, extra: { name: 'USD Coin', version: '2' } })
    try {
      for (const env of [{ TRELLIS_MCP_NETWORKS: 'base-sepolia' }, {}] as Array<Record<string, string>>) {
        const agent = await stdioClient(front.url, { TRELLIS_MCP_WALLET_KEY: buyer.privateKey, ...env })
        const paymentsBefore = front.payments().length
        expect(await refusal(agent.client, 'buy_entry', entryArgs(paid[10]))).toContain('this client pays only on base-sepolia')
        expect(front.payments().length).toBe(paymentsBefore)
      }
    } finally {
      front.behaviour.rewrite = null
    }
    // Unchanged, the same purchase goes through on the pinned network.
    const agent = await stdioClient(front.url, { TRELLIS_MCP_WALLET_KEY: buyer.privateKey, TRELLIS_MCP_NETWORKS: 'base-sepolia' })
    expect((await data(agent.client, 'buy_entry', entryArgs(paid[10]))).purchase).toMatchObject({ paid: true })
    expect((await data(agent.client, 'get_entry', entryArgs(paid[10]))).readable).toBe(true)
  })
})
