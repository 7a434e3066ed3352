// x402 over HTTP, for a server selling resources (in the shape of @x402/core's HTTP resource server): which request
// headers carry a payment, what a 402 says, and which header carries the receipt. One 402 serves both versions:
// the v1 JSON body and the v2 PAYMENT-REQUIRED header; a payment is answered in its own version. Outside chain/x402
// only the API's documentation (models/payment.ts) names an x402 header, and nothing a wire version or a CAIP-2 id.
import { encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http'
import type { PaymentRequired, SettleResponse } from '@x402/core/types'
import type { NetworkInfo } from '../../config.ts'
import type { Static } from '@sinclair/typebox'
import { getTypesForEIP712Domain, type TypedDataDomain } from 'viem'
import { authorizationTypes } from '@x402/evm'
import type { PaymentRequirement } from '../../models/payment.ts'
import { v1Requirement, v2Challenge, type PriceTag } from './requirements.ts'
import { decodePayment, type Payment, type PaymentOrRefusal } from './payload.ts'
import { networkOnWire } from './networks.ts'
import { REASONS } from './reasons.ts'
import { SIWX_HEADER, siwxExtensions, siwxTimes } from './sign-in-with-x.ts'
import { bazaarExtension } from './bazaar.ts'

const V1 = { payment: 'x-payment', receipt: 'x-payment-response' } as const
const V2 = { payment: 'payment-signature', receipt: 'payment-response', challenge: 'payment-required' } as const

/** The request headers that carry a payment. */
export const PAYMENT_HEADERS = [V1.payment, V2.payment] as const
/** Those and sign-in-with-x's, for a caller that only needs to know none is there (the hot reads answer only then). */
export const PAYING_OR_SIGNING_IN = [...PAYMENT_HEADERS, SIWX_HEADER] as const

/** The x402 headers of our answers: a browser reads them only when CORS exposes them. */
export const ANSWER_HEADERS = [V1.receipt, V2.receipt, V2.challenge].map((name) => name.toUpperCase())

/** An HTTP answer to copy out as it is. */
export interface Instructions {
  status: number
  headers: Record<string, string>
  body: string
}

/**
 * What a paywall page's script pays: the v1 requirement, and the EIP-712 frame of its EIP-3009 authorization
 * (types and domain, for eth_signTypedData_v4) to which the script adds only the message.
 */
export interface Offer {
  requirement: Static<typeof PaymentRequirement>
  typedData: {
    types: Record<string, readonly { name: string; type: string }[]>
    primaryType: 'TransferWithAuthorization'
    domain: TypedDataDomain
  }
  /** Every network it may be paid on, the first being the one above: the page lets the payer choose. */
  choices: Array<{ label: string; requirement: Offer['requirement']; typedData: Offer['typedData'] }>
}

function choiceOf(network: NetworkInfo, tag: PriceTag): Offer['choices'][number] {
  const domain = { name: network.usdcName, version: network.usdcVersion, chainId: network.chainId, verifyingContract: network.usdcAddress }
  const types = { EIP712Domain: getTypesForEIP712Domain({ domain }), ...authorizationTypes }
  const typedData = { types, primaryType: 'TransferWithAuthorization' as const, domain }
  return { label: network.label, requirement: v1Requirement(network, tag), typedData }
}

function offerOf(networks: readonly NetworkInfo[], tag: PriceTag): Offer {
  const choices = networks.map((network) => choiceOf(network, tag))
  return { requirement: choices[0]!.requirement, typedData: choices[0]!.typedData, choices }
}

/** A payment that paid: who paid, in which transaction (null when nothing was charged: the payer owns the entry). */
export interface Paid {
  payer: string
  transaction: string | null
}

/** A person's browser, as @x402/core tells one: it accepts HTML and calls itself Mozilla. */
export const wantsPage = (headers: Headers): boolean =>
  (headers.get('accept') ?? '').includes('text/html') && (headers.get('user-agent') ?? '').includes('Mozilla')

/** A v2 challenge with the extensions given (none: no `extensions` at all). */
function withExtensions(challenge: PaymentRequired, ...given: (Record<string, unknown> | undefined)[]): PaymentRequired {
  const extensions = Object.assign({}, ...given)
  return Object.keys(extensions).length ? { ...challenge, extensions } : challenge
}

/**
 * Sells on `networks`: every 402 accepts a payment on any of them (one requirement each, in their order); the paywall
 * page offers them as a choice, the first (or the one the wallet is on) chosen.
 */
export function resourceServer(networks: readonly NetworkInfo[]) {
  const first = networks[0]!
  const v1Accepts = (tag: PriceTag) => networks.map((network) => v1Requirement(network, tag))
  return {
    /** The request's sign-in-with-x proof (a SIGN-IN-WITH-X header), or null. */
    readSignIn: (headers: Headers): string | null => headers.get(SIWX_HEADER),

    /** The request's payment, why its header holds none, or null when it sends no payment. */
    readPayment(headers: Headers): PaymentOrRefusal | null {
      const header = headers.get(V1.payment) ?? headers.get(V2.payment)
      return header ? decodePayment(header) : null
    },

    /**
     * The 402 for `tag`: `reason` says why a payment was refused; without one, that none was sent. `extensions` go in
     * the v2 PAYMENT-REQUIRED (sign-in-with-x's challenge), with the bazaar's declaration of the resource.
     */
    challenge(tag: PriceTag, reason: string = REASONS.noPayment, extensions?: Record<string, unknown>): Instructions {
      return {
        status: 402,
        headers: {
          'content-type': 'application/json; charset=utf-8',
          [V2.challenge]: encodePaymentRequiredHeader(withExtensions(v2Challenge(networks, tag, reason), bazaarExtension(tag), extensions)),
        },
        body: JSON.stringify({ x402Version: 1, error: reason, accepts: v1Accepts(tag) }),
      }
    },

    /**
     * The 402 for a person in a browser: a page made for the offer (which the page's script pays as a v1 client
     * would, on the network the person chooses) instead of the JSON, with the same PAYMENT-REQUIRED header, so an x402
     * client that asks as a browser can still pay.
     */
    paywall(tag: PriceTag, page: (offer: Offer) => string, headers: Record<string, string>): Instructions {
      const body = page(offerOf(networks, tag))
      return {
        status: 402,
        headers: {
          ...headers,
          [V2.challenge]: encodePaymentRequiredHeader(withExtensions(v2Challenge(networks, tag, REASONS.noPayment), bazaarExtension(tag))),
        },
        body,
      }
    },

    /**
     * The PAYMENT-REQUIRED header of `tag` with a sign-in-with-x challenge, made once: each call fills in a fresh
     * nonce and time (every 402 has its own). The JSON is cut where they go (no stored text holds the NUL that marks
     * them) and padded with JSON's own blank space to whole groups of 3 bytes, so the base64 of the parts before and
     * after is made once, and a call encodes only the 110 bytes between them.
     */
    signInChallenge(tag: PriceTag, origin: URL): (nonce: string, issuedAt: number) => Record<string, string> {
      const marks = { nonce: '\u0000n', issuedAt: '\u0000i', expirationTime: '\u0000e' }
      const json = JSON.stringify({
        ...v2Challenge(networks, tag, REASONS.noPayment),
        extensions: { ...bazaarExtension(tag), ...siwxExtensions(origin, networks, tag.resource, marks) },
      })
      const [head, afterNonce] = json.split(JSON.stringify(marks.nonce))
      const [middle, afterIssued] = afterNonce!.split(JSON.stringify(marks.issuedAt))
      const [end, tail] = afterIssued!.split(JSON.stringify(marks.expirationTime))
      const aligned = (text: string) => text + ' '.repeat((3 - (Buffer.byteLength(text) % 3)) % 3)
      const before = Buffer.from(aligned(head!)).toString('base64')
      const after = Buffer.from(tail!).toString('base64')
      return (nonce, issuedAt) => {
        const times = siwxTimes(issuedAt)
        const fresh = aligned(`"${nonce}"${middle}"${times.issuedAt}"${end}"${times.expirationTime}"`)
        return { [V2.challenge]: before + Buffer.from(fresh).toString('base64') + after }
      }
    },

    /** The headers that tell the payer its payment paid, in the version it paid with, on the network it paid on. */
    receipt(payment: Payment, paid: Paid): Record<string, string> {
      const { version, json } = payment.wire
      const named = ((version === 1 ? json : json.accepted) as { network?: unknown } | undefined)?.network
      const network = networks.find((one) => networkOnWire(one, version) === named) ?? first
      const settlement: SettleResponse = {
        success: true,
        transaction: paid.transaction ?? '',
        network: networkOnWire(network, version) as SettleResponse['network'],
        payer: paid.payer,
      }
      return { [version === 2 ? V2.receipt : V1.receipt]: encodePaymentResponseHeader(settlement) }
    },
  }
}
export type ResourceServer = ReturnType<typeof resourceServer>
