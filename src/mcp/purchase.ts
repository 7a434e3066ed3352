// Buying one entry, or a feed's pass, with the operator's wallet, over x402 with the official client (@x402/core's
// x402Client and the exact EVM scheme of @x402/evm): the 402's requirement is chosen by the client among those on the
// networks pinned (networks.ts), and the amount of THAT requirement is held against the caps (spending.ts) in the hook
// that runs before the client signs; a refusal aborts there, so nothing is signed. The key signs in this process;
// only the signed authorization is sent, and once sent it counts as spent whatever the server answers, until it is
// settled or the chain shows it expired unused.
import { x402Client, x402HTTPClient } from '@x402/core/client'
import type { PaymentRequirements } from '@x402/core/types'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { apiError, ApiError, segment, type TrellisApi } from './api.ts'
import type { OperatorWallet } from './wallet.ts'
import type { Hold, SentAuthorization } from './spending.ts'
import { amountOf, challengeOf } from './challenge.ts'
import { networkNamed } from './networks.ts'
import { NETWORKS } from '../config/networks.ts'

/** A refusal of the MCP process itself (a cap, the agent's own limit, a network not pinned): nothing was signed. */
export class Refused extends Error {}

export interface Settlement {
  transaction: string
  network: string
  payer: string
}

/** What a settled payment bought: the API's answer (the entry, or the pass), what was paid, and where on chain. */
export interface Paid {
  body: any
  amount: bigint
  settlement: Settlement
}

export type Bought =
  /** The wallet may read it already (its owner, a past buyer, a pass holder, or it is free): nothing was paid. */
  { kind: 'owned'; entry: any } | { kind: 'paid'; entry: any; amount: bigint; settlement: Settlement }

/**
 * What a payment is for: the request that pays (its 402 first) and the answer that delivers, and the word the agent
 * is told it by. An entry and a pass are paid by the same code below; only these differ.
 */
interface Good {
  noun: 'entry' | 'pass'
  path: string
  method: 'GET' | 'POST'
  /** The status of the answer that delivers it, once paid. */
  delivered: number
  /** What to do after a 503, once the payment may have settled. */
  later: string
}

/** Why a requirement is not one to sign (null when it is). */
async function outOfBounds(
  wallet: OperatorWallet,
  requirement: PaymentRequirements,
  maxPrice: bigint | undefined,
  noun: Good['noun'],
): Promise<string | null> {
  const amount = amountOf(requirement)
  const pinned = await wallet.networks.names()
  const network = networkNamed(requirement.network)
  if (network === null || !pinned.includes(network))
    return (
      `refused: the server asks for a payment on ${String(requirement.network)}, and this client pays ` +
      `only on ${pinned.join(', ')} (TRELLIS_MCP_NETWORKS); nothing was signed`
    )
  if (amount === null) return 'refused: the server asks for an amount that is not a whole number of units; nothing was signed'
  if (maxPrice !== undefined && amount > maxPrice)
    return `refused: the ${noun} costs ${amount} units, more than the max_price of ${maxPrice} given; nothing was signed`
  return null
}

/** What was signed, as the chain will be asked about it; null when the payload is not an EIP-3009 authorization. */
function sentAuthorization(payload: Record<string, unknown>, requirement: PaymentRequirements): SentAuthorization | null {
  const auth = (payload as { authorization?: Record<string, unknown> }).authorization
  const network = networkNamed(requirement.network)
  const hex = (value: unknown, digits: number) => typeof value === 'string' && new RegExp(`^0x[0-9a-fA-F]{${digits}}$`).test(value)
  if (!auth || !network || !hex(auth.from, 40) || !hex(auth.nonce, 64) || !hex(requirement.asset, 40)) return null
  if (typeof auth.validBefore !== 'string' || !/^\d{1,30}$/.test(auth.validBefore)) return null
  return {
    network,
    asset: requirement.asset as `0x${string}`,
    from: auth.from as `0x${string}`,
    nonce: auth.nonce as `0x${string}`,
    validBefore: BigInt(auth.validBefore),
  }
}

/**
 * Buys the entry, or reads it when the wallet may already. `maxPrice`: the agent's own limit for this purchase (it
 * read the price, and will not pay more should it change), checked with the caps.
 */
export async function buyEntry(api: TrellisApi, wallet: OperatorWallet, path: string, maxPrice?: bigint): Promise<Bought> {
  // Signed first: the owner, past buyers and pass holders read without paying (a settled payment is not a ticket to pay twice).
  const signed = await api.send(path, { headers: await wallet.signIn() })
  if (signed.status === 200) return { kind: 'owned', entry: await signed.json() }
  if (signed.status !== 402) throw await apiError(signed)
  const good = { noun: 'entry', path, method: 'GET', delivered: 200, later: 'Try again later to read the entry' } as const
  const paid = await payFor(api, wallet, good, signed, maxPrice)
  return { kind: 'paid', entry: paid.body, amount: paid.amount, settlement: paid.settlement }
}

/**
 * Buys the feed's pass (or, while one runs, more time on it): the pass as the API answers it (201). The feed's owner
 * is refused before anything is signed (it reads every entry without a pass, and would only spend its own money).
 */
export async function buyPass(api: TrellisApi, wallet: OperatorWallet, feedId: string, maxPrice?: bigint): Promise<Paid> {
  const feedPath = `/v1/feeds/${segment(feedId)}`
  const feed: { owner_wallet_address?: string } = await api.json(feedPath)
  if (feed.owner_wallet_address?.toLowerCase() === wallet.account.address.toLowerCase())
    throw new Refused('refused: this wallet owns the feed and reads every entry of it without a pass; nothing was signed')
  const path = `${feedPath}/pass/purchases`
  const challenge = await api.send(path, { method: 'POST' })
  if (challenge.status !== 402) throw await apiError(challenge)
  // Buying again would pay again (and extend the pass): the agent is told to look before it does.
  const later =
    'Before buying again (which would pay again), see whether the pass was bought: get_entry reads a paid entry of the feed once it is'
  return payFor(api, wallet, { noun: 'pass', path, method: 'POST', delivered: 201, later }, challenge, maxPrice)
}

/** Pays the 402 `answered` for `good` within the caps, and sends the payment: what it bought, or why not. */
async function payFor(api: TrellisApi, wallet: OperatorWallet, good: Good, answered: Response, maxPrice?: bigint): Promise<Paid> {
  const challenge = await challengeOf(answered)
  const pinned = await wallet.networks.names()
  await wallet.caps.reclaim(wallet.checkAuthorization)

  const client = new x402Client()
  registerExactEvmScheme(client, { signer: wallet.account })
  // The caps here are the operator's, in USDC units; the package's own cap ($1 a payment) would only stand in their
  // way. Its other control stays: only the networks' known USDC is paid, the asset the caps are counted in, which is
  // the network table's (the package's own default assets, and x402 1.2's USDC where the package ships none).
  const usdcOf = pinned.map((name) => ({ network: NETWORKS[name].caip2, asset: NETWORKS[name].usdcAddress }))
  client.setSpendControls({ maxAmountPerPayment: false, allowedAssets: usdcOf })
  // Of several requirements, one on a pinned network is chosen (the hook below refuses any other all the same).
  client.registerPolicy((_, requirements) => requirements.filter((one) => pinned.includes(networkNamed(one.network)!)))
  const held: { hold: Hold | null; refusal: string | null; requirement: PaymentRequirements | null } = {
    hold: null,
    refusal: null,
    requirement: null,
  }
  client.onBeforePaymentCreation(async ({ selectedRequirements }) => {
    held.refusal = await outOfBounds(wallet, selectedRequirements, maxPrice, good.noun)
    if (held.refusal === null) {
      const holding = wallet.caps.hold(amountOf(selectedRequirements)!)
      if (holding.ok) held.hold = holding.hold
      else held.refusal = holding.reason
    }
    held.requirement = selectedRequirements
    return held.refusal === null ? undefined : { abort: true, reason: held.refusal }
  })

  const http = new x402HTTPClient(client)
  let payment: Awaited<ReturnType<typeof http.createPaymentPayload>>
  try {
    payment = await http.createPaymentPayload(challenge)
  } catch (error) {
    held.hold?.release()
    if (held.refusal !== null) throw new Refused(held.refusal)
    const offered = challenge.accepts.map((one) => String(one.network))
    if (held.requirement === null && offered.every((one) => !pinned.includes(networkNamed(one)!))) {
      throw new Refused(
        `refused: the server asks for a payment on ${offered.join(', ')}, and this client pays only ` +
          `on ${pinned.join(', ')} (TRELLIS_MCP_NETWORKS); nothing was signed`,
      )
    }
    throw new Error(`cannot pay this ${good.noun}: ${(error as Error).message}`)
  }
  const hold = held.hold!
  // What was signed must be what was held (a scheme that signed another amount would escape the caps): not sent.
  const signedValue = (payment.payload as { authorization?: { value?: unknown } }).authorization?.value
  const authorization = sentAuthorization(payment.payload, held.requirement!)
  if (typeof signedValue !== 'string' || !/^\d+$/.test(signedValue) || BigInt(signedValue) !== hold.amount || authorization === null) {
    hold.release()
    throw new Refused(
      `refused: the payment signed ${String(signedValue)} units, not the ${hold.amount} checked against the caps; it was not sent`,
    )
  }

  let paid: Response
  try {
    paid = await api.send(good.path, { method: good.method, headers: http.encodePaymentSignatureHeader(payment) })
  } catch (error) {
    hold.sent(authorization)
    throw new Error(`the payment was sent but no answer came (${(error as Error).message}); ${stillSpendable(authorization)}`)
  }
  return settle(paid, hold, http, authorization, good)
}

/** What the agent is told of an authorization that left this process and was not (known to be) settled. */
const stillSpendable = (sent: SentAuthorization) =>
  `the signed authorization left this process and can be settled by whoever holds it ` +
  `until ${new Date(Number(sent.validBefore) * 1000).toISOString()}, so it may still be charged: ` +
  `it counts against the session cap until the chain shows it expired unused`

/** The answer to a paid request: what it bought, or why not. A sent authorization is never given back on the server's word. */
async function settle(paid: Response, hold: Hold, http: x402HTTPClient, sent: SentAuthorization, good: Good): Promise<Paid> {
  if (paid.status === good.delivered) {
    hold.spend()
    let settlement: Settlement
    try {
      const result = http.getPaymentSettleResponse((name) => paid.headers.get(name))
      settlement = { transaction: result.transaction, network: String(result.network), payer: result.payer ?? '' }
    } catch {
      settlement = { transaction: '', network: '', payer: '' }
    }
    return { body: await paid.json(), amount: hold.amount, settlement }
  }
  hold.sent(sent)
  const error = await apiError(paid.clone())
  if (paid.status === 402) {
    const reason = await paid.json().then(
      (body: { error?: unknown }) => String(body.error ?? ''),
      () => '',
    )
    throw new ApiError(
      402,
      'PAYMENT_REFUSED',
      `the server answered that it refused the payment${reason ? ` (${reason})` : ''}; ${stillSpendable(sent)}`,
    )
  }
  if (paid.status === 503) {
    throw new ApiError(
      503,
      error.code,
      `${error.message}. The payment is not settled yet and may still be charged; ${stillSpendable(sent)}. ${good.later}`,
    )
  }
  throw new ApiError(error.status, error.code, `${error.message}; ${stillSpendable(sent)}`)
}
