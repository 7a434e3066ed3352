// The x402 room's HTTP side (src/chain/x402/resource-server.ts) on its own, without a server or a chain: reading a
// payment (X-PAYMENT for v1, PAYMENT-SIGNATURE for v2) signed by real wallets and made by the official clients
// from our own 402, the challenge in both versions, and the receipt in the version that paid.
import { describe, expect, test } from 'bun:test'
import { verifyTypedData } from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { createPaymentHeader } from 'x402/client'
import { PaymentRequirementsSchema } from 'x402/types'
import { decodeXPaymentResponse } from 'x402-fetch'
import { x402Client } from '@x402/fetch'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { decodePaymentRequiredHeader, decodePaymentResponseHeader, encodePaymentSignatureHeader } from '@x402/core/http'
import { NETWORKS, type NetworkInfo } from '../src/config.ts'
import { ANSWER_HEADERS, PAYMENT_HEADERS, resourceServer } from '../src/chain/x402/resource-server.ts'
import { requirementsFor, type Payment, type PaymentOrRefusal } from '../src/chain/x402/payload.ts'
import { REASONS } from '../src/chain/x402/reasons.ts'
import type { PriceTag } from '../src/chain/x402/requirements.ts'
import {
  BASE_SEPOLIA_CHAIN_ID,
  BASE_SEPOLIA_USDC,
  encodePaymentHeader,
  signTransferAuthorization,
  transferWithAuthorizationTypes,
  v1Payment,
} from '../dev/chain.ts'

const SEPOLIA: NetworkInfo = { ...NETWORKS['base-sepolia'], rpcConfigured: false }
const x402 = resourceServer([SEPOLIA])
const seller = privateKeyToAccount(generatePrivateKey()).address
const PRICE = 10_000n
const tag: PriceTag = {
  amount: String(PRICE),
  payTo: seller,
  resource: 'https://market.example/v1/feeds/f/entries/e',
  description: 'Paid',
  mimeType: 'application/json',
}

const read = (headers: Record<string, string>) => x402.readPayment(new Headers(headers))
function readable(payment: PaymentOrRefusal | null): Payment {
  if (payment === null || 'refused' in payment) throw new Error(`not a payment: ${JSON.stringify(payment)}`)
  return payment
}
const decode = (base64: string) => JSON.parse(Buffer.from(base64, 'base64').toString('utf8'))
const v1Body = (tagged = tag, reason?: string) => JSON.parse(x402.challenge(tagged, reason).body)
const v2Header = (tagged = tag, reason?: string) => decodePaymentRequiredHeader(x402.challenge(tagged, reason).headers['payment-required']!)

/** The EIP-712 domain of base-sepolia USDC, as the challenge states it. */
const USDC_DOMAIN = { name: 'USDC', version: '2', chainId: BASE_SEPOLIA_CHAIN_ID, verifyingContract: BASE_SEPOLIA_USDC } as const

describe('readPayment', () => {
  test('no payment header, or an empty one, is no payment', () => {
    expect(read({})).toBeNull()
    expect(read({ 'x-wallet-address': seller })).toBeNull()
    expect(read({ 'x-payment': '' })).toBeNull()
  })

  test('a v1 X-PAYMENT signed by a wallet: its authorization, intact and verifiable, held to the v1 requirement', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey())
    const sent = await v1Payment(buyer, { to: seller, value: PRICE })
    const payment = readable(read({ 'X-PAYMENT': encodePaymentHeader(sent) }))
    expect(payment.authorization).toEqual(sent.payload.authorization)
    expect(payment.wire).toEqual({ version: 1, json: sent })
    const { from, to, value, validAfter, validBefore, nonce } = payment.authorization
    expect(
      await verifyTypedData({
        address: buyer.address,
        domain: USDC_DOMAIN,
        types: transferWithAuthorizationTypes,
        primaryType: 'TransferWithAuthorization',
        message: {
          from: from as `0x${string}`,
          to: to as `0x${string}`,
          value: BigInt(value),
          validAfter: BigInt(validAfter),
          validBefore: BigInt(validBefore),
          nonce: nonce as `0x${string}`,
        },
        signature: sent.payload.signature,
      }),
    ).toBe(true)
    expect(requirementsFor(payment, [SEPOLIA], tag)).toEqual({ requirements: v1Body().accepts[0], network: SEPOLIA })
  })

  test(
    'a v2 PAYMENT-SIGNATURE made by @x402/fetch from our own 402: held to the requirement it ' + 'accepted, CAIP-2 network included',
    async () => {
      const buyer = privateKeyToAccount(generatePrivateKey())
      const client = new x402Client()
      registerExactEvmScheme(client, { signer: toClientEvmSigner(buyer as never) })
      const sent = await client.createPaymentPayload(v2Header())
      const payment = readable(read({ 'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(sent) }))
      expect(payment.wire.version).toBe(2)
      expect(payment.authorization).toMatchObject({ from: buyer.address, to: seller, value: String(PRICE) })
      expect(requirementsFor(payment, [SEPOLIA], tag)).toEqual({ requirements: v2Header().accepts[0], network: SEPOLIA })
    },
  )

  test('a v1 X-PAYMENT made by the x402 v1 client from our own 402 body', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey())
    const header = await createPaymentHeader(buyer as never, 1, v1Body().accepts[0])
    const payment = readable(read({ 'x-payment': header }))
    expect(payment.wire.version).toBe(1)
    expect(payment.authorization).toMatchObject({ from: buyer.address, to: seller, value: String(PRICE) })
    expect(requirementsFor(payment, [SEPOLIA], tag)).toEqual({ requirements: v1Body().accepts[0], network: SEPOLIA })
  })

  test('each payment header is read; X-PAYMENT first when both come', async () => {
    const v1 = encodePaymentHeader(await v1Payment(privateKeyToAccount(generatePrivateKey()), { to: seller, value: PRICE }))
    for (const name of PAYMENT_HEADERS) expect(readable(read({ [name]: v1 })).wire.version).toBe(1)
    expect(read({ 'x-payment': v1, 'payment-signature': '!!!' })).not.toHaveProperty('refused')
  })

  test('a network or scheme other than ours is refused in either version', async () => {
    const buyer = privateKeyToAccount(generatePrivateKey())
    const signed = await signTransferAuthorization(buyer, { to: seller, value: PRICE, validAfter: 0n })
    const accepted = v2Header().accepts[0]!
    const refusal = (payment: object) => requirementsFor(readable(read({ 'x-payment': encodePaymentHeader(payment) })), [SEPOLIA], tag)
    expect(refusal({ x402Version: 1, scheme: 'exact', network: 'base', payload: signed })).toEqual({ refused: REASONS.network })
    expect(refusal({ x402Version: 1, scheme: 'exact', network: 'eip155:84532', payload: signed })).toEqual({ refused: REASONS.network })
    expect(refusal({ x402Version: 2, accepted: { ...accepted, network: 'base-sepolia' }, payload: signed })).toEqual({
      refused: REASONS.network,
    })
    expect(refusal({ x402Version: 2, accepted: { ...accepted, scheme: 'upto' }, payload: signed })).toEqual({ refused: REASONS.scheme })
    expect(refusal({ x402Version: 2, payload: signed })).toEqual({ refused: REASONS.scheme })
  })

  test('malformed headers: the reason, in either header', async () => {
    const signed = await v1Payment(privateKeyToAccount(generatePrivateKey()), { to: seller, value: PRICE })
    const b64 = (json: unknown) => Buffer.from(JSON.stringify(json)).toString('base64')
    const withAuthorization = (change: Record<string, unknown>) =>
      b64({ ...signed, payload: { ...signed.payload, authorization: { ...signed.payload.authorization, ...change } } })
    const cases: [string, string, string][] = [
      ['not base64 JSON', '!!!', REASONS.notBase64Json],
      ['base64 of text', Buffer.from('paid, honest').toString('base64'), REASONS.notBase64Json],
      ['JSON null', b64(null), REASONS.invalidPayload],
      ['JSON number', b64(7), REASONS.invalidPayload],
      ['no version', b64({ ...signed, x402Version: undefined }), REASONS.invalidVersion],
      ['version 3', b64({ ...signed, x402Version: 3 }), REASONS.invalidVersion],
      ['version as a string', b64({ ...signed, x402Version: '1' }), REASONS.invalidVersion],
      ['no payload', b64({ x402Version: 2 }), REASONS.missingAuthorization],
      ['no signature', b64({ ...signed, payload: { authorization: signed.payload.authorization } }), REASONS.missingAuthorization],
      ['signature not hex', b64({ ...signed, payload: { ...signed.payload, signature: 'signed' } }), REASONS.missingAuthorization],
      ['value as a number', withAuthorization({ value: 10_000 }), REASONS.fieldsNotStrings],
      ['missing nonce', withAuthorization({ nonce: undefined }), REASONS.fieldsNotStrings],
      ['bad payer address', withAuthorization({ from: '0x1234' }), REASONS.badAddress],
      ['bad recipient address', withAuthorization({ to: 'seller' }), REASONS.badAddress],
      ['decimal value', withAuthorization({ value: '0.01' }), REASONS.badNumber],
      ['negative validBefore', withAuthorization({ validBefore: '-1' }), REASONS.badNumber],
      ['short nonce', withAuthorization({ nonce: '0x1234' }), REASONS.badNonce],
    ]
    for (const [what, value, reason] of cases) {
      for (const name of ['x-payment', 'payment-signature'])
        expect(read({ [name]: value }), `${what} in ${name}`).toEqual({ refused: reason })
    }
  })
})

describe('challenge', () => {
  test('without a reason: 402, the v1 body a v1 client parses, and the same requirement as the v2 header', () => {
    const answer = x402.challenge(tag)
    expect(answer.status).toBe(402)
    expect(Object.keys(answer.headers).sort()).toEqual(['content-type', 'payment-required'])
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8')
    const body = JSON.parse(answer.body)
    expect(body).toEqual({
      x402Version: 1,
      error: REASONS.noPayment,
      accepts: [
        {
          scheme: 'exact',
          network: 'base-sepolia',
          maxAmountRequired: '10000',
          resource: tag.resource,
          description: 'Paid',
          mimeType: 'application/json',
          payTo: seller,
          maxTimeoutSeconds: 300,
          asset: BASE_SEPOLIA_USDC,
          extra: { name: 'USDC', version: '2' },
        },
      ],
    })
    expect(PaymentRequirementsSchema.safeParse(body.accepts[0]).success).toBe(true)
    expect(decodePaymentRequiredHeader(answer.headers['payment-required']!)).toEqual({
      x402Version: 2,
      error: REASONS.noPayment,
      resource: { url: tag.resource, description: 'Paid', mimeType: 'application/json' },
      accepts: [
        {
          scheme: 'exact',
          network: 'eip155:84532',
          amount: '10000',
          asset: BASE_SEPOLIA_USDC,
          payTo: seller,
          maxTimeoutSeconds: 300,
          extra: { name: 'USDC', version: '2' },
        },
      ],
    })
  })

  test('with a reason: both versions say it; the requirement is unchanged', () => {
    expect(v1Body(tag, REASONS.recipient)).toEqual({ ...v1Body(), error: REASONS.recipient })
    expect(v2Header(tag, REASONS.recipient)).toEqual({ ...v2Header(), error: REASONS.recipient })
  })

  test("bytes are sold as their media type; the server's network decides name, CAIP-2 id and token", () => {
    const mainnet = resourceServer([{ ...NETWORKS.base, rpcConfigured: false }])
    const bytes = { ...tag, resource: `${tag.resource}/content`, mimeType: 'text/plain' }
    const answer = mainnet.challenge(bytes)
    expect(JSON.parse(answer.body).accepts[0]).toMatchObject({
      network: 'base',
      resource: bytes.resource,
      mimeType: 'text/plain',
      asset: NETWORKS.base.usdcAddress,
      extra: { name: 'USD Coin', version: '2' },
    })
    expect(decodePaymentRequiredHeader(answer.headers['payment-required']!)).toMatchObject({
      resource: { url: bytes.resource, mimeType: 'text/plain' },
      accepts: [{ network: 'eip155:8453', asset: NETWORKS.base.usdcAddress }],
    })
  })
})

describe('receipt', () => {
  const payer = privateKeyToAccount(generatePrivateKey()).address
  const transaction = `0x${'ab'.repeat(32)}` as const
  const paidWith = async (version: 1 | 2) => {
    const signed = await signTransferAuthorization(privateKeyToAccount(generatePrivateKey()), { to: seller, value: PRICE })
    const sent =
      version === 1
        ? { x402Version: 1, scheme: 'exact', network: 'base-sepolia', payload: signed }
        : { x402Version: 2, accepted: v2Header().accepts[0], payload: signed }
    return readable(read({ [version === 1 ? 'x-payment' : 'payment-signature']: encodePaymentHeader(sent) }))
  }

  test('v1: X-PAYMENT-RESPONSE alone, the network by name, as x402-fetch decodes it', async () => {
    const headers = x402.receipt(await paidWith(1), { payer, transaction })
    expect(Object.keys(headers)).toEqual(['x-payment-response'])
    expect(decodeXPaymentResponse(headers['x-payment-response']!)).toEqual({ success: true, transaction, network: 'base-sepolia', payer })
  })

  test('v2: PAYMENT-RESPONSE alone, the network as CAIP-2', async () => {
    const headers = x402.receipt(await paidWith(2), { payer, transaction })
    expect(Object.keys(headers)).toEqual(['payment-response'])
    expect(decodePaymentResponseHeader(headers['payment-response']!)).toEqual({
      success: true,
      transaction,
      network: 'eip155:84532',
      payer,
    })
  })

  test('nothing charged (the payer owns the entry): an empty transaction', async () => {
    const headers = x402.receipt(await paidWith(2), { payer, transaction: null })
    expect(decode(headers['payment-response']!)).toEqual({ success: true, transaction: '', network: 'eip155:84532', payer })
  })

  test('CORS exposes every header the room answers with', async () => {
    const named = [
      ...Object.keys(x402.challenge(tag).headers),
      ...Object.keys(x402.receipt(await paidWith(1), { payer, transaction })),
      ...Object.keys(x402.receipt(await paidWith(2), { payer, transaction })),
    ]
    const exposed = ANSWER_HEADERS.map((h) => h.toLowerCase())
    for (const name of named.filter((n) => n !== 'content-type')) expect(exposed).toContain(name)
  })
})
