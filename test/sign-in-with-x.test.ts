// Sign-in-with-x (issue 37): every 402 of a paid entry offers x402's sign-in-with-x challenge; a SIGN-IN-WITH-X proof
// made from it with @x402/extensions' own client lets the entry's owner and its buyers read with no payment. A
// stranger's proof, or a bad one (another domain or uri, a nonce never issued or used before, an old challenge,
// another chain, another signer), gets the 402 again with the reason. A real server, a real chain, nothing charged.
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import {
  createSIWxMessage,
  createSIWxPayload,
  encodeSIWxHeader,
  wrapFetchWithSIWx,
  type SIWxExtensionInfo,
} from '@x402/extensions/sign-in-with-x'
import { startTestServer, type TestServer } from '../dev/server.ts'
import { siwxMessage } from '../src/chain/x402/sign-in-with-x.ts'
import { b64, call, createEntry, createFeed, newWallet, type Wallet } from '../dev/api.ts'
import { encodePaymentHeader, startChain, v1Payment, type Buyer, type TestChain } from '../dev/chain.ts'

const PRICE = 10_000n
const SECRET = 'only for those who paid'

let chain: TestChain
let server: TestServer
let creator: Wallet
let buyer: Buyer
let feedId: string
let entryId: string

const contentUrl = () => `${server.url}/v1/feeds/${feedId}/entries/${entryId}/content`
const entryUrl = () => `${server.url}/v1/feeds/${feedId}/entries/${entryId}`
const ledger = async () => (await call(server.url, 'GET', `/v1/transactions?entry_id=${entryId}`)).body.pagination.total_count

beforeAll(async () => {
  chain = await startChain()
  server = await startTestServer(chain.env)
  creator = newWallet()
  feedId = (await createFeed(server.url, creator, { name: 'signed in again' })).id
  const entry = await createEntry(server.url, creator, feedId, {
    content_base64: b64(SECRET),
    mime_type: 'text/plain',
    is_free: false,
    price: { amount: String(PRICE), currency: 'USDC' },
  })
  entryId = entry.id
  buyer = await chain.newFundedBuyer(1_000_000n)
  const bought = await fetch(contentUrl(), {
    headers: { 'x-payment': encodePaymentHeader(await v1Payment(buyer, { to: creator.address, value: PRICE })) },
  })
  expect([bought.status, await bought.text()]).toEqual([200, SECRET])
})
afterAll(async () => {
  await server?.dispose()
  await chain?.stop()
})

/** The sign-in-with-x challenge of a fresh 402 at `url`, and the network it names for payment. */
async function challenge(url = contentUrl()) {
  const answer = await fetch(url)
  expect(answer.status).toBe(402)
  const required = JSON.parse(Buffer.from(answer.headers.get('payment-required')!, 'base64').toString())
  return { ...required.extensions['sign-in-with-x'], network: required.accepts[0].network as string }
}

/** A proof of `info` signed by `signer` as the client signs one, without the client's own checks (to make bad ones). */
async function handMadeProof(info: SIWxExtensionInfo, signer: Wallet, chainId: string) {
  const complete = { ...info, chainId, type: 'eip191' as const }
  const signature = await signer.signMessage({ message: createSIWxMessage(complete, signer.address) })
  return encodeSIWxHeader({ ...complete, address: signer.address, signature })
}

const reasonOf = async (answer: Response) => {
  expect(answer.status).toBe(402)
  return ((await answer.json()) as { error: string }).error
}

describe('the challenge', () => {
  test("every 402 offers one: the public URL's host and the resource, a nonce of its own, five minutes, our chain", async () => {
    const first = await challenge()
    const second = await challenge()
    expect(first.info).toMatchObject({ domain: new URL(server.url).host, uri: contentUrl(), version: '1', resources: [contentUrl()] })
    expect(first.supportedChains).toEqual([{ chainId: first.network, type: 'eip191' }])
    expect(first.network).toBe('eip155:84532')
    expect(Date.parse(first.info.expirationTime) - Date.parse(first.info.issuedAt)).toBe(300_000)
    expect(Math.abs(Date.parse(first.info.issuedAt) - Date.now())).toBeLessThan(5_000)
    expect(first.info.nonce).toMatch(/^[0-9a-f]{32}$/) // as the spec has it
    expect(second.info.nonce).not.toBe(first.info.nonce)
    expect(first.schema).toMatchObject({ type: 'object', required: expect.arrayContaining(['address', 'nonce', 'signature']) })
  })
})

describe('signing in', () => {
  test("the buyer and the owner read with @x402/extensions' client: the bytes and the record, nothing charged", async () => {
    const before = { buyer: await chain.balanceOf(buyer.address), creator: await chain.balanceOf(creator.address), ledger: await ledger() }
    for (const wallet of [buyer, creator]) {
      const signedIn = wrapFetchWithSIWx(fetch, wallet)
      const bytes = await signedIn(contentUrl())
      expect([bytes.status, await bytes.text()]).toEqual([200, SECRET])
      const record = await signedIn(entryUrl())
      expect(record.status).toBe(200)
      expect(((await record.json()) as { id: string }).id).toBe(entryId)
    }
    expect({
      buyer: await chain.balanceOf(buyer.address),
      creator: await chain.balanceOf(creator.address),
      ledger: await ledger(),
    }).toEqual(before)
  })

  test('a stranger with a good proof gets the 402 again, saying the wallet has not bought the entry', async () => {
    const stranger = newWallet()
    const answer = await wrapFetchWithSIWx(fetch, stranger)(contentUrl())
    expect(await reasonOf(answer)).toStartWith(`not_entitled: ${stranger.address}`)
    expect(answer.headers.get('payment-required')).toBeString() // and a fresh challenge to pay with, or sign in again
  })

  test('a proof is good once: the same header again is refused (invalid_siwx_nonce)', async () => {
    const { info, network } = await challenge()
    const header = encodeSIWxHeader(await createSIWxPayload({ ...info, chainId: network, type: 'eip191' }, buyer, contentUrl()))
    const first = await fetch(contentUrl(), { headers: { 'sign-in-with-x': header } })
    expect([first.status, await first.text()]).toEqual([200, SECRET])
    const again = await fetch(contentUrl(), { headers: { 'sign-in-with-x': header } })
    expect(await reasonOf(again)).toStartWith('invalid_siwx_nonce')
  })

  test('bad proofs: another domain or uri, a nonce never issued, an old challenge, another chain or signer, garbage', async () => {
    const before = await ledger()
    const cases: [string, (info: SIWxExtensionInfo, network: string) => Promise<string> | string][] = [
      ['invalid_siwx_domain_mismatch', (info, network) => handMadeProof({ ...info, domain: 'evil.example' }, buyer, network)],
      [
        'invalid_siwx_uri_mismatch',
        (info, network) => handMadeProof({ ...info, uri: 'https://evil.example/v1/feeds', resources: [] }, buyer, network),
      ],
      ['invalid_siwx_nonce', (info, network) => handMadeProof({ ...info, nonce: 'ab'.repeat(16) }, buyer, network)],
      [
        'invalid_siwx_issued_at_too_old',
        (info, network) => handMadeProof({ ...info, issuedAt: new Date(Date.now() - 600_000).toISOString() }, buyer, network),
      ],
      ['invalid_siwx_chain_id', (info) => handMadeProof(info, buyer, 'eip155:1')],
      [
        'invalid_siwx_signature',
        async (info, network) => {
          const forged = JSON.parse(Buffer.from(await handMadeProof(info, newWallet(), network), 'base64').toString())
          return encodeSIWxHeader({ ...forged, address: buyer.address })
        },
      ],
      ['invalid_siwx_header', () => b64('{"not": "a proof"}')],
    ]
    for (const [reason, make] of cases) {
      const { info, network } = await challenge()
      const answer = await fetch(contentUrl(), { headers: { 'sign-in-with-x': await make(info, network) } })
      expect(await reasonOf(answer), reason).toStartWith(reason)
    }
    expect(await ledger()).toBe(before)
  })
})

describe('the text a proof is checked against', () => {
  test("made by viem where it can be, it is the SIWE library's text to the byte; otherwise the package decides", async () => {
    const { info, network } = await challenge()
    const lower = buyer.address.toLowerCase()
    const variants: Record<string, unknown>[] = [
      {},
      { statement: undefined },
      { resources: [] },
      { resources: [contentUrl(), `${server.url}/v1/feeds`] },
      { notBefore: new Date(Date.now() - 1000).toISOString(), expirationTime: undefined },
    ]
    for (const variant of variants) {
      const complete = { ...info, ...variant, chainId: network, type: 'eip191' as const }
      for (const address of [buyer.address, lower]) {
        const proof = { ...complete, address, signature: '0x00' }
        expect({ variant, address, text: siwxMessage(proof as never) }).toEqual({
          variant,
          address,
          text: createSIWxMessage(complete, address),
        })
      }
    }
    for (const declined of [{ statement: '' }, { requestId: 'r1' }, { issuedAt: info.issuedAt.replace('.000Z', 'Z') }]) {
      const proof = { ...info, ...declined, chainId: network, type: 'eip191', address: buyer.address, signature: '0x00' }
      expect({ declined, text: siwxMessage(proof as never) }).toEqual({ declined, text: null })
    }
  })

  test('a proof whose fields no SIWE message may hold (a line break, a resource that is no URI): 402 naming why, no 500', async () => {
    for (const bad of [{ statement: 'read\nURI: https://evil.example/' }, { resources: ['not a uri'] }]) {
      const { info, network } = await challenge()
      const proof = { ...info, ...bad, chainId: network, type: 'eip191', address: buyer.address, signature: `0x${'11'.repeat(65)}` }
      const answer = await fetch(contentUrl(), { headers: { 'sign-in-with-x': encodeSIWxHeader(proof as never) } })
      expect(await reasonOf(answer), JSON.stringify(bad)).toStartWith('invalid_siwx_message')
    }
  })
})

describe('contract wallets (ERC-1271)', () => {
  // Runtime code answering `word` to any call: PUSH32 word, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0, RETURN.
  const walletCode = (word: string) => `0x7f${word.slice(2)}60005260206000f3` as `0x${string}`
  const MAGIC = `0x1626ba7e${'0'.repeat(56)}`
  const ANY_SIGNATURE = `0x${'11'.repeat(65)}`

  /** Signed-request headers of a contract wallet: its code, not a key, says the signature is good. */
  async function contractHeaders(address: string) {
    const { message } = (await call(server.url, 'POST', '/v1/auth/nonce', { body: { wallet_address: address } })).body
    return {
      'x-wallet-address': address,
      'x-signature': ANY_SIGNATURE,
      'x-message': message,
      'x-timestamp': String(Math.floor(Date.now() / 1000)),
    }
  }

  test('a contract wallet that owns an entry signs in as it signs requests; one whose code refuses does not', async () => {
    const approving = newWallet().address
    const refusing = newWallet().address
    await chain.testClient.setCode({ address: approving, bytecode: walletCode(MAGIC) })
    await chain.testClient.setCode({ address: refusing, bytecode: walletCode(`0x${'0'.repeat(64)}`) })
    const feed = (await call(server.url, 'POST', '/v1/feeds', { headers: await contractHeaders(approving), body: { name: 'a safe' } })).body
    const body = { content_base64: b64('kept by a contract'), mime_type: 'text/plain', is_free: false, price: { amount: '5000' } }
    const entry = (await call(server.url, 'POST', `/v1/feeds/${feed.id}/entries`, { headers: await contractHeaders(approving), body })).body
    const url = `${server.url}/v1/feeds/${feed.id}/entries/${entry.id}/content`
    for (const [address, expected] of [
      [approving, 200],
      [refusing, 402],
    ] as const) {
      const { info, network } = await challenge(url)
      const complete = { ...info, chainId: network, type: 'eip191' as const }
      const proof = encodeSIWxHeader({ ...complete, address, signature: ANY_SIGNATURE, signatureScheme: 'eip1271' })
      const answer = await fetch(url, { headers: { 'sign-in-with-x': proof } })
      expect(answer.status, address).toBe(expected)
      if (expected === 200) expect(await answer.text()).toBe('kept by a contract')
      else expect(((await answer.json()) as { error: string }).error).toStartWith('invalid_siwx_signature')
    }
  })
})
