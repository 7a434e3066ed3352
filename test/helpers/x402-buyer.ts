// What an agent holding USDC uses to find and buy (the discovery tests): @x402/fetch with the exact EVM scheme for a
// buyer's key, and @x402/extensions' bazaar client pointed at a discovery base URL.
import { HTTPFacilitatorClient } from '@x402/core/http'
import { withBazaar } from '@x402/extensions/bazaar'
import { wrapFetchWithPayment, x402Client } from '@x402/fetch'
import { registerExactEvmScheme } from '@x402/evm/exact/client'
import { toClientEvmSigner } from '@x402/evm'
import { b64 } from '../../dev/api.ts'
import type { Buyer } from '../../dev/chain.ts'

/** `fetch` that pays a 402 as `buyer`, through `through` (default: the global fetch). */
export function payingFetch(buyer: Buyer, through: typeof fetch = fetch): ReturnType<typeof wrapFetchWithPayment> {
  const client = new x402Client()
  registerExactEvmScheme(client, { signer: toClientEvmSigner(buyer as never) })
  return wrapFetchWithPayment(through, client)
}

/** The bazaar client of @x402/extensions for the discovery routes under `base` (a server's /x402/v2, or its origin). */
export const bazaarAt = (base: string) => withBazaar(new HTTPFacilitatorClient({ url: base })).extensions.bazaar

/** A paid JSON entry's body: `{"t": title}` at `amount` USDC units. */
export const paidJson = (title: string, amount: number) => ({
  content_base64: b64(`{"t":"${title}"}`),
  mime_type: 'application/json',
  title,
  is_free: false,
  price: { amount: String(amount), currency: 'USDC' },
})
