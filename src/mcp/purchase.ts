// Buying one entry with the operator's wallet, over x402 with the official client (@x402/core's x402Client and the
// exact EVM scheme of @x402/evm): the 402's requirement is chosen by the client, and the amount of THAT requirement
// is held against the caps (spending.ts) in the hook that runs before the client signs; a refusal aborts there, so
// nothing is signed. The key signs in this process; only the signed authorization is sent.
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { apiError, ApiError, type TrellisApi } from './api.ts'
import { signedHeaders, type OperatorWallet } from './wallet.ts'
import type { Hold } from './spending.ts'
import { amountOf, challengeOf } from './challenge.ts'

/** A refusal of the MCP process itself (a cap, the agent's own limit): nothing was signed, nothing sent. */
export class Refused extends Error {}

export interface Settlement { transaction: string; network: string; payer: string }

export type Bought =
  /** The wallet may read it already (its owner, a past buyer, or it is free): nothing was paid. */
  | { kind: 'owned'; entry: any }
  | { kind: 'paid'; entry: any; amount: bigint; settlement: Settlement }

/**
 * Buys the entry, or reads it when the wallet may already. `maxPrice`: the agent's own limit for this purchase (it
 * read the price, and will not pay more should it change), checked with the caps.
 */
export async function buyEntry(api: TrellisApi, wallet: OperatorWallet, path: string, maxPrice?: bigint): Promise<Bought> {
  // Signed first: the owner and past buyers read without paying (a settled payment is not a ticket to pay twice).
  const signed = await api.send(path, { headers: await signedHeaders(api, wallet.account) })
  if (signed.status === 200) return { kind: 'owned', entry: await signed.json() }
  if (signed.status !== 402) throw await apiError(signed)
  const challenge = await challengeOf(signed)

  const client = new x402Client()
  registerExactEvmScheme(client, { signer: wallet.account })
  // The caps here are the operator's, in USDC units; the package's own cap ($1 a payment) would only stand in their
  // way. Its other control stays: only the networks' known USDC is paid, the asset the caps are counted in.
  client.setSpendControls({ maxAmountPerPayment: false })
  const held: { hold: Hold | null; refusal: string | null } = { hold: null, refusal: null }
  client.onBeforePaymentCreation(async ({ selectedRequirements }) => {
    const amount = amountOf(selectedRequirements)
    if (amount === null) held.refusal = 'refused: the server asks for an amount that is not a whole number of units; nothing was signed'
    else if (maxPrice !== undefined && amount > maxPrice) held.refusal = `refused: the entry costs ${amount} units, more than the max_price of ${maxPrice} given; nothing was signed`
    else {
      const holding = wallet.caps.hold(amount)
      if (holding.ok) held.hold = holding.hold
      else held.refusal = holding.reason
    }
    return held.refusal === null ? undefined : { abort: true, reason: held.refusal }
  })

  const http = new x402HTTPClient(client)
  let payment
  try {
    payment = await http.createPaymentPayload(challenge)
  } catch (error) {
    held.hold?.release()
    if (held.refusal !== null) throw new Refused(held.refusal)
    throw new Error(`cannot pay this entry: ${(error as Error).message}`)
  }
  const hold = held.hold!
  // What was signed must be what was held (a scheme that signed another amount would escape the caps): not sent.
  const signedValue = (payment.payload as { authorization?: { value?: unknown } }).authorization?.value
  if (typeof signedValue !== 'string' || !/^\d+$/.test(signedValue) || BigInt(signedValue) !== hold.amount) {
    hold.release()
    throw new Refused(`refused: the payment signed ${String(signedValue)} units, not the ${hold.amount} checked against the caps; it was not sent`)
  }

  let paid: Response
  try {
    paid = await api.send(path, { headers: http.encodePaymentSignatureHeader(payment) })
  } catch (error) {
    hold.spend() // sent, and no answer: the server may have settled it, so it counts against the session cap
    throw new Error(`the payment was sent but no answer came (${(error as Error).message}); it may have been charged, and is counted as spent`)
  }
  return settle(paid, hold, http)
}

/** The answer to a paid request: the entry, or why not, with the hold spent or released as the answer says. */
async function settle(paid: Response, hold: Hold, http: x402HTTPClient): Promise<Bought> {
  if (paid.status === 200) {
    hold.spend()
    let settlement: Settlement
    try {
      const result = http.getPaymentSettleResponse((name) => paid.headers.get(name))
      settlement = { transaction: result.transaction, network: String(result.network), payer: result.payer ?? '' }
    } catch {
      settlement = { transaction: '', network: '', payer: '' }
    }
    return { kind: 'paid', entry: await paid.json(), amount: hold.amount, settlement }
  }
  const error = await apiError(paid.clone())
  if (paid.status === 402) {
    hold.release()
    const reason = await paid.json().then((body: { error?: unknown }) => String(body.error ?? ''), () => '')
    throw new ApiError(402, 'PAYMENT_REFUSED', `the server refused the payment${reason ? `: ${reason}` : ''}; nothing was charged`)
  }
  if (paid.status === 503) {
    hold.spend() // PAYMENT_PENDING: the charge may still land (the ledger records it if it does)
    throw new ApiError(503, error.code, `${error.message}. The payment may still be charged: it is counted against the session cap; try again later to read the entry`)
  }
  // 502 PAYMENT_BACKEND_UNAVAILABLE and other refusals: nothing was charged. Any other failure may have come after a
  // settlement: counted.
  if (paid.status < 500 || paid.status === 502) hold.release()
  else hold.spend()
  throw error
}
